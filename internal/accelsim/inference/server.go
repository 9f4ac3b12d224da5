package inference

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/fleet"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/metricspage"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/scenario"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/sim"
)

// ContentType is prometheus_client's text exposition content type.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// Handler serves one pod's inference server.
type Handler struct {
	inf      *fleet.Inference
	world    *sim.World
	timeline sim.Timeline
	// created is the unix time the server registered its metrics.
	created float64
	pages   metricspage.Buffers
	// exemplars are those of the OpenMetrics pages (exemplar.go).
	exemplars exemplars
}

// NewHandler serves pod p's inference server. started is when the server
// process started (the `_created` value vLLM reports).
func NewHandler(w *sim.World, inf *fleet.Inference, tl sim.Timeline, started time.Time) *Handler {
	return &Handler{inf: inf, world: w, timeline: tl, created: float64(started.UnixNano()) / 1e9, exemplars: exemplars{pod: inf.Pod.Namespace + "/" + inf.Pod.Name}}
}

// Metrics renders the text page at simulated time t.
func (h *Handler) Metrics(b []byte, t float64) []byte {
	return h.render(&writer{b: b}, t)
}

// OpenMetrics renders the OpenMetrics page at simulated time t, the wall
// clock reading now (unix seconds, the exemplars' timestamps): what
// prometheus_client serves an Accept naming OpenMetrics, with exemplars on
// the latency buckets.
func (h *Handler) OpenMetrics(b []byte, t, now float64) []byte {
	h.exemplars.mu.Lock()
	defer h.exemplars.mu.Unlock()
	return h.render(&writer{b: b, om: true, ex: &h.exemplars, now: now}, t)
}

func (h *Handler) render(w *writer, t float64) []byte {
	s := h.world.Inference(h.inf.Pod, t)
	if h.inf.Server == scenario.ServerSGLang {
		return renderSGLang(w, h.inf.Model, &s)
	}
	return renderVLLM(w, h.inf.Model, &s, h.created)
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/metrics":
		if wantsOpenMetrics(r.Header.Get("Accept")) {
			h.pages.Serve(w, OpenMetricsContentType, func(b []byte) []byte {
				now := h.timeline.Clock.Now()
				return h.OpenMetrics(b, h.timeline.ElapsedAt(now), float64(now.UnixNano())/1e9)
			})
			return
		}
		h.pages.Serve(w, ContentType, func(b []byte) []byte { return h.Metrics(b, h.timeline.Elapsed()) })
	case "/health":
		// vLLM answers 200 with an empty body; a dead engine answers 500.
		if !h.world.Inference(h.inf.Pod, h.timeline.Elapsed()).Healthy {
			http.Error(w, "EngineDeadError: the engine's device failed", http.StatusInternalServerError)
		}
	case "/v1/models":
		if h.inf.Server != scenario.ServerVLLM {
			http.NotFound(w, r)
			return
		}
		writeJSON(w, map[string]any{"object": "list", "data": []map[string]any{{
			"id": h.inf.Model, "object": "model", "created": int64(h.created), "owned_by": "vllm",
			"root": h.inf.Model, "parent": nil, "max_model_len": 8192,
		}}})
	case "/get_model_info":
		if h.inf.Server != scenario.ServerSGLang {
			http.NotFound(w, r)
			return
		}
		writeJSON(w, map[string]any{"model_path": h.inf.Model, "tokenizer_path": h.inf.Model, "is_generation": true})
	default:
		http.NotFound(w, r)
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
