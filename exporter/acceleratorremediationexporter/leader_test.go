package acceleratorremediationexporter

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/plan"
)

// waitFor polls a condition that depends on the API server's Lease (real
// time, not the test's clock) with a generous bound.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Two replicas share a Lease: only the leader advances its plans; when it
// stops, the standby takes the lease and acts on the plans it kept.
func TestOnlyTheLeaderActs(t *testing.T) {
	needServer(t)
	k := admin()
	k.mkNode(t, "lead-1", "p5.48xlarge")
	cfg := testConfig()
	cfg.LeaderElection.Enabled = true
	cfg.LeaderElection.Namespace = testNamespace
	cfg.LeaderElection.LeaseName = "remediator-leader-test"
	cfg.LeaderElection.LeaseDuration = 4 * time.Second
	cfg.LeaderElection.RenewDeadline = 3 * time.Second
	cfg.LeaderElection.RetryPeriod = 500 * time.Millisecond
	t.Setenv("K8S_POD_NAME", "replica-a")
	a := start(t, cfg, &clock{t: t0}, nil)
	waitFor(t, "replica-a to lead", a.e.elector.Leading)
	t.Setenv("K8S_POD_NAME", "replica-b")
	b := start(t, cfg, &clock{t: t0}, nil)

	for _, h := range []*harness{a, b} {
		h.send(event{node: "lead-1", device: "GPU-1", xid: 79})
		h.tick()
	}
	assert.Equal(t, plan.Recommended, a.only().State, "the leader advanced its plan")
	assert.False(t, b.e.elector.Leading())
	assert.Equal(t, plan.Running, b.only().State, "the standby did not touch its plan")

	require.NoError(t, a.e.Shutdown(context.Background())) // releases the lease
	waitFor(t, "replica-b to take over", b.e.elector.Leading)
	b.tick()
	assert.Equal(t, plan.Recommended, b.only().State)
	assert.Equal(t, 1, b.logs.FilterMessage("accelerator_remediation: leadership changed").Len())
}
