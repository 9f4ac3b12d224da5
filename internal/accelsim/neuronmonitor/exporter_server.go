package neuronmonitor

import (
	"net/http"
	"sync"
	"time"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/metricspage"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/sim"
)

// ExporterContentType is what prometheus_client answers with.
const ExporterContentType = "text/plain; version=0.0.4; charset=utf-8"

// maxCatchUp bounds the reports one scrape folds in after a long pause.
const maxCatchUp = 10000

// ExporterHandler serves one node's neuron-monitor-prometheus.py page, fed
// by that node's neuron-monitor: each scrape first takes in every report
// neuron-monitor would have written since the last one, so the counters add
// up the same periods the JSON stream reports. prometheus_client serves the
// page on every path.
type ExporterHandler struct {
	mu    sync.Mutex
	mon   *Monitor
	clock sim.Clock
	exp   *Exporter
	pages metricspage.Buffers
}

// NewExporterHandler serves m's reports through an Exporter.
func NewExporterHandler(m *Monitor, clock sim.Clock) *ExporterHandler {
	return &ExporterHandler{mon: m, clock: clock, exp: NewExporter()}
}

// Page takes in the reports due up to now and renders the page.
func (h *ExporterHandler) Page(b []byte, now time.Time) ([]byte, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.catchUp(now); err != nil {
		return b, err
	}
	return h.exp.Render(b), nil
}

// catchUp feeds the exporter the reports due up to now.
func (h *ExporterHandler) catchUp(now time.Time) error {
	for range maxCatchUp {
		due, ok := h.mon.NextDue()
		if !ok || due.After(now) {
			return nil
		}
		doc, err := h.mon.Collect(due)
		if err != nil {
			return err
		}
		if doc != nil {
			if err := h.exp.Update(doc, due); err != nil {
				return err
			}
		}
	}
	return nil
}

func (h *ExporterHandler) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.catchUp(h.clock.Now()); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	h.pages.Serve(w, ExporterContentType, h.exp.Render)
}
