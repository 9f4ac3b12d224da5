//go:build e2e

package e2e

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/otelcol-accel/otelcol-accel/internal/e2etest"
)

// The node agent must start and stay healthy on a machine with no GPU, no
// Neuron device and no Kubernetes — the machine CI runs on — and say clearly
// which sources it could not reach.
func TestAgentStartsHealthyWithoutAcceleratorsOrKubernetes(t *testing.T) {
	col := e2etest.StartCollector(t, e2etest.CollectorOptions{
		Configs: []string{e2etest.ConfigPath("agent.yaml")},
		Env:     []string{"K8S_NODE_NAME=", "KUBERNETES_SERVICE_HOST="},
	})

	// Every missing source is said (the receivers find out at their first
	// scrape, later on a loaded machine), and the agent stays up across
	// several collection intervals.
	started := time.Now()
	e2etest.Await(t, 30*time.Second, "the log to name every missing source", func() (string, bool) {
		var missing []string
		for _, want := range unavailableSourceMessages {
			if col.CountLines(want) == 0 {
				missing = append(missing, want)
			}
		}
		return fmt.Sprintf("not said yet: %q", missing), len(missing) == 0
	})
	time.Sleep(time.Until(started.Add(5 * time.Second)))
	if exited, err := col.Exited(); exited {
		t.Fatalf("collector exited: %v", err)
	}
	hs, code, err := col.Health()
	if err != nil || code != http.StatusOK {
		t.Fatalf("health after %s: code %d, err %v, status %+v", time.Since(started).Round(time.Second), code, err, hs)
	}
	for _, want := range unavailableSourceMessages {
		switch n := col.CountLines(want); {
		case n > 1:
			// Several collection intervals have passed: a missing source is
			// said once, not once per scrape.
			t.Errorf("the log says %q %d times", want, n)
		}
	}
	if err := col.Stop(30 * time.Second); err != nil {
		t.Fatalf("collector did not stop cleanly: %v", err)
	}
}
