package inference

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"strings"
	"sync"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/sim"
)

// OpenMetricsContentType is what prometheus_client answers an Accept that
// names OpenMetrics with.
const OpenMetricsContentType = "application/openmetrics-text; version=1.0.0; charset=utf-8"

// wantsOpenMetrics is prometheus_client's choose_encoder: OpenMetrics when
// any media range of the Accept header is application/openmetrics-text,
// whatever its q.
func wantsOpenMetrics(accept string) bool {
	for part := range strings.SplitSeq(accept, ",") {
		media, _, _ := strings.Cut(part, ";")
		if strings.TrimSpace(media) == "application/openmetrics-text" {
			return true
		}
	}
	return false
}

// exemplars are what a server instrumented with OpenTelemetry shows on its
// latency buckets: per bucket, the trace of the latest request observed in
// it. The simulated counts move a tick at a time, so a bucket's exemplar
// is replaced when its count has grown since the last page, with a trace id
// drawn from the pod, histogram, bucket and count (the same run gives the
// same ids) and the page's time as its timestamp.
type exemplars struct {
	mu     sync.Mutex
	pod    string
	byName map[string][]exemplar
}

type exemplar struct {
	count   float64 // the bucket's own count when it was drawn
	traceID [16]byte
	spanID  [8]byte
	value   float64
	at      float64 // unix seconds
}

// bucket returns bucket i's exemplar of histogram name, drawing a new one
// when the bucket's count grew; ok is false for a bucket that has never
// been observed.
func (e *exemplars) bucket(name string, h *sim.Histogram, i int, now float64) (exemplar, bool) {
	own := bucketCount(h, i)
	if own <= 0 {
		return exemplar{}, false
	}
	if e.byName == nil {
		e.byName = map[string][]exemplar{}
	}
	xs := e.byName[name]
	if len(xs) != len(h.Bounds)+1 {
		xs = make([]exemplar, len(h.Bounds)+1)
		e.byName[name] = xs
	}
	if xs[i].count != own {
		sum := sha256.Sum256([]byte(e.pod + "\x00" + name + "\x00" + itoa(int64(i)) + "\x00" + itoa(int64(own))))
		x := exemplar{count: own, value: bucketValue(h, i), at: now}
		copy(x.traceID[:], sum[:16])
		copy(x.spanID[:], sum[16:24])
		if binary.BigEndian.Uint64(x.spanID[:]) == 0 {
			x.spanID[7] = 1 // an all-zero span id means none
		}
		xs[i] = x
	}
	return xs[i], true
}

// bucketCount is bucket i's own count (not cumulative); i == len(Bounds)
// is the +Inf bucket.
func bucketCount(h *sim.Histogram, i int) float64 {
	upTo := h.Count
	if i < len(h.Bounds) {
		upTo = h.Cumulative[i]
	}
	if i == 0 {
		return upTo
	}
	return upTo - h.Cumulative[i-1]
}

// bucketValue is a latency inside bucket i: its middle, or half again its
// lower bound for the +Inf bucket.
func bucketValue(h *sim.Histogram, i int) float64 {
	lower := 0.0
	if i > 0 {
		lower = h.Bounds[i-1]
	}
	if i == len(h.Bounds) {
		return lower * 1.5
	}
	return lower + (h.Bounds[i]-lower)/2
}

// appendExemplar writes ` # {span_id="…",trace_id="…"} value timestamp` as
// prometheus_client's OpenMetrics exposition does: labels sorted, the value
// by floatToGoString, the timestamp as Python prints time.time().
func appendExemplar(b []byte, x exemplar) []byte {
	b = append(b, ` # {span_id="`...)
	b = hex.AppendEncode(b, x.spanID[:])
	b = append(b, `",trace_id="`...)
	b = hex.AppendEncode(b, x.traceID[:])
	b = append(b, `"} `...)
	b = pyFloat(b, x.value)
	b = append(b, ' ')
	return append(b, pyRepr(math.Round(x.at*1e3)/1e3)...)
}
