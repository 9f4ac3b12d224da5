package dcgmexporter

import (
	"net/http"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/fleet"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/metricspage"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/sim"
)

// ContentType is what dcgm-exporter answers /metrics with.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// Handler serves one node's dcgm-exporter endpoints: /metrics and /health.
type Handler struct {
	node     *fleet.Node
	world    *sim.World
	timeline sim.Timeline
	renderer *Renderer
	pages    metricspage.Buffers
}

// NewHandler serves node n of world at the timeline's simulated time.
func NewHandler(w *sim.World, n *fleet.Node, tl sim.Timeline) *Handler {
	return &Handler{node: n, world: w, timeline: tl, renderer: NewRenderer(n)}
}

// Metrics renders the page at simulated time t.
func (h *Handler) Metrics(b []byte, t float64) []byte {
	return h.renderer.Render(b, h.world.NodeGPUs(h.node, t))
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/metrics":
		h.pages.Serve(w, ContentType, func(b []byte) []byte { return h.Metrics(b, h.timeline.Elapsed()) })
	case "/health":
		_, _ = w.Write([]byte("OK"))
	default:
		http.NotFound(w, r)
	}
}
