package acceleratorinsightsexporter

import (
	"context"
	"net/http"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorinsightsexporter/internal/memstore"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorinsightsexporter/internal/metadata"
)

// The console's own metrics, through the collector's telemetry
// (metadata.yaml, documentation.md): how long views take to build, what the
// API answers, what the in-memory model holds and what became of the points
// it received.

// Triggers of a view build (the trigger attribute).
const (
	triggerRequest    = "request"
	triggerBackground = "background"
	triggerWrite      = "write"
)

func (a *api) recordBuild(trigger string, took time.Duration) {
	if a.tel == nil {
		return
	}
	a.tel.ExporterInsightsViewRebuildDuration.Record(context.Background(), took.Seconds(),
		metric.WithAttributes(attribute.String("trigger", trigger)))
}

// countRequests counts the API's answers by endpoint (the route's pattern,
// so ids in paths do not make new series) and status code.
func countRequests(tel *metadata.TelemetryBuilder, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/api/") {
			next.ServeHTTP(w, r)
			return
		}
		sw := &statusWriter{ResponseWriter: w, code: http.StatusOK}
		next.ServeHTTP(sw, r)
		endpoint := r.Pattern
		if i := strings.IndexByte(endpoint, ' '); i >= 0 {
			endpoint = endpoint[i+1:] // "POST /api/v1/…" → "/api/v1/…"
		}
		if endpoint == "" || endpoint == "/api/" {
			endpoint = "other"
		}
		tel.ExporterInsightsAPIRequests.Add(r.Context(), 1, metric.WithAttributes(
			attribute.String("endpoint", endpoint), attribute.Int("code", sw.code)))
	})
}

type statusWriter struct {
	http.ResponseWriter
	code        int
	wroteHeader bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wroteHeader {
		w.code, w.wroteHeader = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// countPoints adds a batch's outcome to the points counter.
func countPoints(tel *metadata.TelemetryBuilder, in memstore.Ingested) {
	for _, o := range [...]struct {
		outcome string
		n       int
	}{{"modelled", in.Modelled}, {"dropped", in.Dropped}, {"ignored", in.Ignored}} {
		if o.n > 0 {
			tel.ExporterInsightsPoints.Add(context.Background(), int64(o.n), metric.WithAttributes(attribute.String("outcome", o.outcome)))
		}
	}
}

// registerSeries reports the series held when the telemetry is read.
func registerSeries(tel *metadata.TelemetryBuilder, mem *memstore.Store) error {
	return tel.RegisterExporterInsightsSeriesCallback(func(_ context.Context, o metric.Int64Observer) error {
		n := 0
		if mem != nil {
			n = mem.SeriesHeld()
		}
		o.Observe(int64(n))
		return nil
	})
}
