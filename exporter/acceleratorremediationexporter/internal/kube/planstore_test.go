package kube

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/plan"
)

func put(t *testing.T, s *PlanStore, p *plan.Plan) error {
	t.Helper()
	data, err := json.Marshal(p)
	require.NoError(t, err)
	return s.Put(context.Background(), p, data)
}

// Two replicas' stores over the same ConfigMaps: what one writes the other
// reads, and a write from a replica that has not read the other's newer
// progress is refused instead of overwriting it.
func TestPlanStoreIsSharedAndRefusesStaleWrites(t *testing.T) {
	ctx := context.Background()
	owner := "planstore-test"
	a := &PlanStore{CS: server.Client(remediator), Namespace: namespace, Owner: owner}
	b := &PlanStore{CS: server.Client(remediator), Namespace: namespace, Owner: owner}
	other := &PlanStore{CS: server.Client(remediator), Namespace: namespace, Owner: "another-remediator"}
	p := gpuPlan(t, 79, plan.Subject{Node: "planstore-1"})
	require.NoError(t, put(t, a, p))

	got, err := b.Load(ctx)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, p.ID, got[0].ID)
	assert.Equal(t, plan.StepPending, got[0].Steps[0].State)
	none, err := other.Load(ctx)
	require.NoError(t, err)
	assert.Empty(t, none, "another remediator's plans are its own")

	// b (now the leader) records step 1 as started.
	got[0].Steps[0].State = plan.StepStarted
	require.NoError(t, put(t, b, got[0]))

	// a still thinks step 1 is pending: its write is refused.
	p.Steps[0].State = plan.StepSucceeded
	err = put(t, a, p)
	require.Error(t, err)
	assert.True(t, apierrors.IsConflict(err), "%v", err)
	assert.Contains(t, err.Error(), "changed by another replica")

	// Once a has read the plan again, it may write.
	again, err := a.Load(ctx)
	require.NoError(t, err)
	require.Len(t, again, 1)
	assert.Equal(t, plan.StepStarted, again[0].Steps[0].State, "b's progress, not a's stale copy")
	again[0].Steps[0].State = plan.StepSucceeded
	require.NoError(t, put(t, a, again[0]))

	// A new plan created twice (two replicas, same id) is refused too.
	dup := gpuPlan(t, 48, plan.Subject{Node: "planstore-1", DeviceID: "GPU-9"})
	require.NoError(t, put(t, a, dup))
	err = put(t, b, dup)
	assert.True(t, apierrors.IsAlreadyExists(err), "%v", err)

	require.NoError(t, b.Delete(ctx, []string{p.ID, dup.ID}))
	require.NoError(t, a.Delete(ctx, []string{p.ID}), "a plan already gone is not an error")
	left, err := a.Load(ctx)
	require.NoError(t, err)
	assert.Empty(t, left)
}

// A ConfigMap with the plans' label that holds no plan (edited by hand) is
// named and skipped; the other plans are still read.
func TestPlanStoreSkipsAnUnreadableConfigMap(t *testing.T) {
	ctx := context.Background()
	owner := "planstore-bad"
	s := &PlanStore{CS: server.Client(remediator), Namespace: namespace, Owner: owner}
	p := gpuPlan(t, 79, plan.Subject{Node: "planstore-2"})
	require.NoError(t, put(t, s, p))
	cm, err := server.Client("").CoreV1().ConfigMaps(namespace).Get(ctx, owner+"-"+p.ID, metav1.GetOptions{})
	require.NoError(t, err)
	cm.Name, cm.ResourceVersion, cm.UID = owner+"-broken", "", ""
	cm.Data = map[string]string{planKey: "{not json"}
	_, err = server.Client("").CoreV1().ConfigMaps(namespace).Create(ctx, cm, metav1.CreateOptions{})
	require.NoError(t, err)

	got, err := s.Load(ctx)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ConfigMap otelcol-accel/planstore-bad-broken: plan.json is not a plan")
	require.Len(t, got, 1)
	assert.Equal(t, p.ID, got[0].ID)

	// Through plan.Store: the readable plan is there, the error reported.
	st := plan.NewStoreOn(s, time.Hour)
	require.Error(t, st.Load(ctx))
	_, ok := st.Get(p.ID)
	assert.True(t, ok)
}
