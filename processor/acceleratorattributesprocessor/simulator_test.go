package acceleratorattributesprocessor

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/k8sclient"
	"github.com/otelcol-accel/otelcol-accel/internal/podresources"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/deviceid"
)

// TestAgainstSimulator runs the processor against a running fleet simulator
// (its PodResources sockets and read-only Kubernetes API, through its
// kubeconfig):
//
//	accelsim serve --state-dir /tmp/fl --speed 60 &
//	ACCELSIM_ENDPOINTS=/tmp/fl/endpoints.json go test -run TestAgainstSimulator ./processor/acceleratorattributesprocessor/
//
// It is skipped without ACCELSIM_ENDPOINTS.
func TestAgainstSimulator(t *testing.T) {
	path := os.Getenv("ACCELSIM_ENDPOINTS")
	if path == "" {
		t.Skip("set ACCELSIM_ENDPOINTS to a running accelsim's endpoints.json")
	}
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var ep struct {
		Kubeconfig string `json:"kubeconfig"`
		Nodes      []struct {
			Name   string `json:"name"`
			Kind   string `json:"kind"`
			Socket string `json:"pod_resources_socket"`
		} `json:"nodes"`
	}
	require.NoError(t, json.Unmarshal(raw, &ep))
	for _, n := range ep.Nodes {
		if n.Kind != "nvidia" {
			continue
		}
		t.Run(n.Name, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			cfg.NodeName = n.Name
			cfg.PodResourcesSocket = n.Socket
			cfg.KubernetesAPI.APIConfig = k8sclient.APIConfig{AuthType: k8sclient.AuthKubeConfig, KubeConfig: ep.Kubeconfig}
			cfg.MIGLookup = migLookupNone
			// The simulator labels workload types as app.kubernetes.io/component.
			cfg.WorkloadType.Labels = append(cfg.WorkloadType.Labels, "app.kubernetes.io/component")
			require.NoError(t, cfg.Validate())
			host := &statusHost{Host: componenttest.NewNopHost()}
			p := newAttributesProcessor(cfg, componenttest.NewNopTelemetrySettings())
			require.NoError(t, p.Start(context.Background(), host))
			t.Cleanup(func() { require.NoError(t, p.Shutdown(context.Background())) })
			require.Eventually(t, p.watcher().Synced, 30*time.Second, 20*time.Millisecond)
			p.refresh(context.Background())

			// One NVML-style resource per physical GPU and MIG device the kubelet can hand out.
			c, err := podresources.New(n.Socket)
			require.NoError(t, err)
			defer c.Close()
			alloc, err := c.Allocatable(context.Background())
			require.NoError(t, err)
			md := pmetric.NewMetrics()
			seen := map[string]bool{}
			for _, d := range alloc {
				for _, raw := range d.IDs {
					id := deviceid.Parse(raw)
					if (id.Form == deviceid.FormGPU || id.Form == deviceid.FormMIG) && !seen[id.UUID] {
						seen[id.UUID] = true
						addDevice(md, gpuAttrs(id.UUID, len(seen)))
					}
				}
			}
			// DRA nodes hand out devices through ResourceSlices, not the device plugin.
			for _, sl := range p.watcher().Snapshot().Slices {
				for i := range sl.Spec.Devices {
					if a, ok := sl.Spec.Devices[i].Attributes["uuid"]; ok && a.StringValue != nil && !seen[*a.StringValue] {
						seen[*a.StringValue] = true
						addDevice(md, gpuAttrs(*a.StringValue, len(seen)))
					}
				}
			}
			out := p.processMetricsForTest(md)
			held, unallocated := 0, 0
			rms := out.ResourceMetrics()
			// A shared device keeps its own resource (allocated, the share
			// its consumers leave, no pod) beside its consumers' copies.
			copied := map[string]bool{}
			for i := 0; i < rms.Len(); i++ {
				a := rms.At(i).Resource().Attributes()
				if parent := strAttr(a, accelschema.AttrHWParent); accelschema.IsConsumerCopy(strAttr(a, accelschema.AttrHWID), parent, strAttr(a, accelschema.AttrPartitionType)) {
					copied[parent] = true
				}
			}
			for i := 0; i < rms.Len(); i++ {
				a := rms.At(i).Resource().Attributes()
				switch strAttr(a, accelschema.AttrAllocationState) {
				case accelschema.AllocationAllocated:
					held++
					if strAttr(a, accelschema.AttrK8sPodName) == "" && copied[strAttr(a, accelschema.AttrHWID)] {
						break // a shared device's own resource: its copies name the pods
					}
					assert.NotEmpty(t, strAttr(a, accelschema.AttrK8sPodUID), "API metadata joined")
					assert.NotEmpty(t, strAttr(a, accelschema.AttrWorkloadName))
				case accelschema.AllocationUnallocated:
					unallocated++
				default:
					t.Errorf("%s: no allocation state", strAttr(a, accelschema.AttrHWID))
				}
				assert.Equal(t, n.Name, strAttr(a, accelschema.AttrK8sNodeName))
				if testing.Verbose() {
					t.Logf("  %s %s/%s %s share=%s type=%s team=%s workload=%s/%s", strAttr(a, accelschema.AttrHWID),
						strAttr(a, accelschema.AttrK8sNamespaceName), strAttr(a, accelschema.AttrK8sPodName), strAttr(a, accelschema.AttrAllocationState),
						strAttr(a, accelschema.AttrPartitionShare), strAttr(a, accelschema.AttrPartitionType), strAttr(a, accelschema.AttrTeam),
						strAttr(a, accelschema.AttrWorkloadName), strAttr(a, accelschema.AttrWorkloadType))
				}
				assert.NotEmpty(t, strAttr(a, accelschema.AttrHostType))
			}
			t.Logf("%s: %d devices, %d resources out (%d held, %d unallocated), index %+v", n.Name, len(seen), rms.Len(), held, unallocated, p.idx.Load().Stats)
			assert.Positive(t, held)
			assert.Equal(t, "ok", statusName(host))
		})
	}
}

func (p *attributesProcessor) processMetricsForTest(md pmetric.Metrics) pmetric.Metrics {
	out, _ := p.processMetrics(context.Background(), md)
	return out
}
