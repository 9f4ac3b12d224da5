package acceleratork8sreceiver

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/kubeapi"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/simtest"
	"github.com/otelcol-accel/otelcol-accel/internal/firstrequest"
	"github.com/otelcol-accel/otelcol-accel/internal/k8sclient"
	"github.com/otelcol-accel/otelcol-accel/receiver/acceleratork8sreceiver/internal/metadata"
)

// TestSimulatorStory runs the receiver on the demo fleet's Kubernetes API
// while the simulator plays its reliability story (a scale-up with image
// pulls into one zone, and a pod no node can hold), and checks that the
// receiver reports each part with the story's own numbers.
func TestSimulatorStory(t *testing.T) {
	f := simtest.DemoFleet(t, 0)
	store, err := kubeapi.NewStore(kubeapi.Objects(f))
	require.NoError(t, err)
	srv := kubeapi.NewServer(store)
	srv.Bookmark = 200 * time.Millisecond
	hs := httptest.NewServer(srv)
	t.Cleanup(func() { srv.Close(); hs.Close() })
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, kubeapi.WriteKubeconfig(kc, hs.URL, f.Cluster))

	cfg := createDefaultConfig().(*Config)
	cfg.APIConfig = k8sclient.APIConfig{AuthType: k8sclient.AuthKubeConfig, KubeConfig: kc}
	cfg.CollectionInterval = time.Hour
	metrics, logs := new(consumertest.MetricsSink), new(consumertest.LogsSink)
	r := newReceiver(cfg, receivertest.NewNopSettings(metadata.Type), k8sclient.NewRegistry(k8sclient.Providers{}), firstrequest.New(), time.Now)
	r.metrics, r.logs = metrics, logs
	require.NoError(t, r.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, r.Shutdown(context.Background())) })
	require.Eventually(t, r.informers.Synced, 10*time.Second, 10*time.Millisecond)

	start := time.Now()
	require.NoError(t, kubeapi.PlayStory(context.Background(), store, f, start, 2000))
	require.Eventually(t, func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		_, scaling := r.state.scalings[workloadKey{"Deployment", kubeapi.StoryNamespace, kubeapi.StoryDeployment}]
		_, groups := r.state.scalings[workloadKey{"LeaderWorkerSet", kubeapi.StoryNamespace, kubeapi.StoryLeaderWorkerSet}]
		_, claim := r.state.claims["5f0e7d1c-0000-4000-8000-00000000c1a1"]
		return !scaling && !groups && claim && r.state.measured["5f0e7d1c-0000-4000-8000-000000000001"] && r.state.measured["5f0e7d1c-0000-4000-8000-000000000002"]
	}, 10*time.Second, 10*time.Millisecond)
	require.NoError(t, r.flush(context.Background()))

	story := workload{namespace: kubeapi.StoryNamespace, kind: "Deployment", name: kubeapi.StoryDeployment, model: kubeapi.StoryModel}
	r.mu.Lock()
	want := map[string]float64{
		accelschema.PhaseScheduling:     kubeapi.StoryScheduledAt - kubeapi.StoryScaleAt,
		accelschema.PhaseImagePull:      kubeapi.StoryPullSeconds,
		accelschema.PhaseContainerStart: kubeapi.StoryStartedAt - kubeapi.StoryPulledAt,
		accelschema.PhaseReadiness:      kubeapi.StoryReadyAt - kubeapi.StoryStartedAt,
		accelschema.PhaseTotal:          kubeapi.StoryReadyAt - kubeapi.StoryScaleAt,
	}
	for phase, secs := range want {
		h := r.state.hists.series[histKey{story, phase}]
		if assert.NotNil(t, h, phase) {
			assert.Equal(t, uint64(2), h.count, "%s: the two new replicas", phase)
			assert.InDelta(t, 2*secs, h.sum, 1e-6, phase)
		}
	}
	r.mu.Unlock()

	// The scale-up, the unschedulable pod and the zone imbalance in the logs.
	var events []string
	var zoneEvidence string
	for _, ld := range logs.AllLogs() {
		for i := 0; i < ld.ResourceLogs().Len(); i++ {
			rl := ld.ResourceLogs().At(i)
			lr := rl.ScopeLogs().At(0).LogRecords().At(0)
			name, _ := rl.Resource().Attributes().Get(accelschema.AttrWorkloadName)
			if name.Str() != kubeapi.StoryDeployment {
				continue
			}
			kind, _ := lr.Attributes().Get(accelschema.AttrFindingKind)
			events = append(events, lr.EventName()+kind.Str())
			if kind.Str() == accelschema.FindingZoneImbalance {
				ev, _ := lr.Attributes().Get(accelschema.AttrFindingEvidence)
				zoneEvidence = ev.Str()
			}
		}
	}
	assert.Contains(t, events, accelschema.EventScaling)
	assert.Contains(t, events, accelschema.EventUnschedulable)
	assert.Contains(t, events, accelschema.EventColdStart)
	assert.Contains(t, events, accelschema.EventFinding+accelschema.FindingZoneImbalance, "all three replicas in one zone: %v", events)
	assert.Contains(t, zoneEvidence, "=3")

	// The HPA decided the scale-up at 30 s; the last replica was Ready
	// at 139 s. The LeaderWorkerSet grew from one group to two.
	var hpaScaling, groupScaling map[string]any
	for _, ld := range logs.AllLogs() {
		for i := 0; i < ld.ResourceLogs().Len(); i++ {
			rl := ld.ResourceLogs().At(i)
			lr := rl.ScopeLogs().At(0).LogRecords().At(0)
			name, _ := rl.Resource().Attributes().Get(accelschema.AttrWorkloadName)
			if lr.EventName() != accelschema.EventScaling {
				continue
			}
			switch name.Str() {
			case kubeapi.StoryDeployment:
				hpaScaling = lr.Attributes().AsRaw()
			case kubeapi.StoryLeaderWorkerSet:
				groupScaling = lr.Attributes().AsRaw()
			}
		}
	}
	require.NotNil(t, hpaScaling)
	assert.Equal(t, accelschema.ScalingDecidedByHPA, hpaScaling[accelschema.AttrScalingDecidedBy])
	assert.InDelta(t, float64(kubeapi.StoryReadyAt-kubeapi.StoryScaleAt), hpaScaling[accelschema.AttrScalingDecisionToReady], 1e-6)
	require.NotNil(t, groupScaling, "the LeaderWorkerSet's scaling")
	assert.Equal(t, int64(2), groupScaling[accelschema.AttrScalingTo])

	// The 16-GPU pod, from the scheduler and from Karpenter.
	gauge := gaugeCounts(t, metrics.AllMetrics()[len(metrics.AllMetrics())-1])
	bySource := map[string]int64{}
	for k, n := range gauge {
		if strings.HasPrefix(k, "nvidia.com/gpu|") {
			bySource[k[strings.LastIndex(k, "|")+1:]] += n
		}
	}
	assert.Equal(t, map[string]int64{accelschema.CapacitySourceScheduler: 1, accelschema.CapacitySourceKarpenter: 1}, bySource, "%v", gauge)
}
