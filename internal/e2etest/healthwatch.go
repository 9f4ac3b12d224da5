package e2etest

import (
	"fmt"
	"net/http"
	"sync"
	"time"
)

// HealthWatch polls a collector's health endpoint in the background and
// remembers every answer that was not 200, so a fault test can assert the
// collector stayed healthy through the whole fault, not just at the end.
type HealthWatch struct {
	col  *Collector
	stop chan struct{}
	done chan struct{}

	mu       sync.Mutex
	polls    int
	failures []string
	statuses map[string]map[string]bool // component → statuses seen
}

// WatchHealth starts polling every interval until Stop. components are
// the ones whose statuses the watch records ("exporter:cloudwatch_emf").
func WatchHealth(col *Collector, every time.Duration, components ...string) *HealthWatch {
	w := &HealthWatch{col: col, stop: make(chan struct{}), done: make(chan struct{}), statuses: map[string]map[string]bool{}}
	for _, c := range components {
		w.statuses[c] = map[string]bool{}
	}
	go func() {
		defer close(w.done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			w.poll()
			select {
			case <-w.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return w
}

func (w *HealthWatch) poll() {
	hs, code, err := w.col.Health()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.polls++
	if err != nil || code != http.StatusOK {
		if len(w.failures) < 20 {
			w.failures = append(w.failures, fmt.Sprintf("%s: code %d, err %v, status %q %s", time.Now().Format(time.RFC3339Nano), code, err, hs.Status, hs.Error))
		}
		return
	}
	for c, seen := range w.statuses {
		for _, st := range hs.ComponentStatuses(c) {
			seen[st.Status] = true
		}
	}
}

// Stop ends the polling and returns the unhealthy answers seen, if any.
func (w *HealthWatch) Stop() []string {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.failures...)
}

// Polls is how many times the endpoint was asked.
func (w *HealthWatch) Polls() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.polls
}

// Seen reports whether the component was ever in status
// ("StatusRecoverableError", …) while the watch ran.
func (w *HealthWatch) Seen(component, status string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.statuses[component][status]
}
