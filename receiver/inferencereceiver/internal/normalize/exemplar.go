package normalize // import "github.com/otelcol-accel/otelcol-accel/receiver/inferencereceiver/internal/normalize"

import (
	"encoding/hex"
	"fmt"
	"math"

	"github.com/otelcol-accel/otelcol-accel/internal/promscrape"
)

// Exemplar is an OpenMetrics exemplar of a histogram bucket, in schema
// units: the trace of one request whose latency fell in the bucket.
type Exemplar struct {
	// Bucket is the upper bound of the bucket it was on (+Inf for the
	// overflow bucket), in schema units.
	Bucket float64
	Value  float64
	// Timestamp is in milliseconds since the epoch, when HasTimestamp.
	Timestamp    int64
	HasTimestamp bool
	TraceID      [16]byte // zero without a valid trace_id
	SpanID       [8]byte  // zero without a valid span_id
	// Filtered are the labels other than a valid trace_id and span_id,
	// as OTLP's exemplar filtered attributes; they are substrings of the
	// page, to be copied by whoever keeps them.
	Filtered []promscrape.Label[string]
}

// UnixMilli is when the exemplar was observed, if the server said so in a
// way OTLP can hold: a timestamp before 1970 or past what nanoseconds hold
// is the server's error, and says nothing.
func (e *Exemplar) UnixMilli() (int64, bool) {
	if !e.HasTimestamp || e.Timestamp <= 0 || e.Timestamp > math.MaxInt64/1_000_000 {
		return 0, false
	}
	return e.Timestamp, true
}

// Exemplar label names for the trace (W3C trace context, as OpenTelemetry
// SDKs and prometheus_client users write them).
const (
	labelTraceID = "trace_id"
	labelSpanID  = "span_id"
)

// exemplarOf converts a bucket's exemplar. A trace_id or span_id that is
// not 32 or 16 hexadecimal digits (or is all zeros, "no trace" in W3C
// trace context) is kept as a filtered attribute and reported: the
// exemplar is still a value in its bucket.
func exemplarOf(ex promscrape.Exemplar[string], le, divisor float64, s *promscrape.Sample[string]) (Exemplar, error) {
	e := Exemplar{Bucket: le, Value: ex.Value / divisor, Timestamp: ex.Timestamp, HasTimestamp: ex.HasTimestamp}
	var bad error
	for _, l := range ex.Labels {
		switch l.Name {
		case labelTraceID:
			if decodeID(e.TraceID[:], l.Value) {
				continue
			}
		case labelSpanID:
			if decodeID(e.SpanID[:], l.Value) {
				continue
			}
		default:
			e.Filtered = append(e.Filtered, l)
			continue
		}
		if bad == nil {
			bad = fmt.Errorf("exemplar of %s (line %d): %s %q is not %d hexadecimal digits; kept as an attribute, not linked to a trace",
				s.Name, s.Line, l.Name, l.Value, 2*idLen(l.Name))
		}
		e.Filtered = append(e.Filtered, l)
	}
	return e, bad
}

func idLen(name string) int {
	if name == labelTraceID {
		return 16
	}
	return 8
}

// decodeID decodes hex into dst, which it fills exactly; an all-zero ID is
// invalid.
func decodeID(dst []byte, text string) bool {
	if len(text) != 2*len(dst) {
		return false
	}
	if _, err := hex.Decode(dst, []byte(text)); err != nil {
		clear(dst)
		return false
	}
	for _, b := range dst {
		if b != 0 {
			return true
		}
	}
	return false
}
