// Package logjson writes log records (health events, cost findings) as flat
// structured JSON log events: record attributes and resource attributes as
// top-level members, the body kept as it is, so CloudWatch Logs Insights can
// filter on `accelerator.health.action` or `k8s.pod.name` directly.
package logjson

import (
	"encoding/base64"
	"encoding/hex"
	"math"
	"sort"
	"strconv"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-accel/otelcol-accel/exporter/emfexporter/internal/jsonw"
)

// Members the encoder writes itself. An attribute with one of these keys is
// written as "attr.<key>" so that it neither disappears nor overwrites them.
const (
	KeyBody           = "body"
	KeySeverityText   = "severity_text"
	KeySeverityNumber = "severity_number"
	KeyTraceID        = "trace_id"
	KeySpanID         = "span_id"
	KeyScope          = "otel.scope.name"
	KeyTruncated      = "otelcol_accel.truncated"
)

var reserved = map[string]bool{KeyBody: true, KeySeverityText: true, KeySeverityNumber: true, KeyTraceID: true, KeySpanID: true, KeyScope: true, KeyTruncated: true}

// truncatedSuffix marks a body cut to fit the event size limit.
const truncatedSuffix = "[Truncated...]"

// maxDepth bounds the nesting written for map and slice values; deeper
// values are written as their string form.
const maxDepth = 32

// Encoder writes records; it holds no state and is safe for concurrent use.
type Encoder struct {
	MaxEventBytes int
}

type member struct {
	key string
	val pcommon.Value
}

// Encode returns the JSON object for one record and its timestamp in
// milliseconds (the record's time, else its observed time, else now).
// truncated reports that the record was too large and its body was cut.
func (e Encoder) Encode(res pcommon.Resource, scope pcommon.InstrumentationScope, lr plog.LogRecord, now time.Time) (msg []byte, tsMillis int64, truncated bool) {
	ts := lr.Timestamp()
	if ts == 0 {
		ts = lr.ObservedTimestamp()
	}
	tsMillis = now.UnixMilli()
	if ts != 0 {
		tsMillis = int64(uint64(ts) / uint64(time.Millisecond))
	}

	members := collect(lr.Attributes(), res.Attributes())
	body := lr.Body()
	msg = e.write(nil, scope, lr, body, members, false)
	if len(msg) <= e.MaxEventBytes {
		return msg, tsMillis, false
	}
	// Cut a string body to the longest prefix that fits. Escaping makes the
	// encoded length differ from the raw one, so search for it.
	if body.Type() == pcommon.ValueTypeStr {
		s := body.Str()
		fits := func(n int) []byte {
			cut := pcommon.NewValueStr(jsonw.TruncateUTF8(s, n) + truncatedSuffix)
			out := e.write(nil, scope, lr, cut, members, true)
			if len(out) > e.MaxEventBytes {
				return nil
			}
			return out
		}
		if best := fits(0); best != nil {
			lo, hi := 0, len(s)
			for lo < hi {
				mid := (lo + hi + 1) / 2
				if out := fits(mid); out != nil {
					lo, best = mid, out
				} else {
					hi = mid - 1
				}
			}
			return best, tsMillis, true
		}
	}
	// Attributes alone are too large: keep what identifies the event (its
	// name, severity and the start of its body) and say it was cut.
	short := pcommon.NewValueStr(jsonw.TruncateUTF8(body.AsString(), e.MaxEventBytes/4) + truncatedSuffix)
	var keep []member
	if v, ok := lr.Attributes().Get("event.name"); ok {
		keep = append(keep, member{key: "event.name", val: v})
	}
	msg = e.write(msg[:0], scope, lr, short, keep, true)
	if len(msg) > e.MaxEventBytes {
		msg = e.write(msg[:0], pcommon.NewInstrumentationScope(), plog.NewLogRecord(), pcommon.NewValueStr(truncatedSuffix), nil, true)
	}
	return msg, tsMillis, true
}

// collect merges record and resource attributes, sorted by key. On a clash
// (the same key twice, or a record and a resource attribute sharing a key)
// the record attribute, then the first one, wins: JSON readers disagree on
// repeated members.
func collect(record, resource pcommon.Map) []member {
	out := make([]member, 0, record.Len()+resource.Len())
	seen := make(map[string]bool, record.Len()+resource.Len())
	add := func(k string, v pcommon.Value) bool {
		if k = outKey(k); !seen[k] {
			seen[k] = true
			out = append(out, member{key: k, val: v})
		}
		return true
	}
	record.Range(add)
	resource.Range(add)
	sort.SliceStable(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
}

func outKey(k string) string {
	if reserved[k] {
		return "attr." + k
	}
	return k
}

func (e Encoder) write(b []byte, scope pcommon.InstrumentationScope, lr plog.LogRecord, body pcommon.Value, members []member, truncated bool) []byte {
	b = append(b, '{')
	b = jsonw.String(b, KeyBody)
	b = append(b, ':')
	b = appendValue(b, body, 0)
	if t := lr.SeverityText(); t != "" {
		b = append(b, `,"`+KeySeverityText+`":`...)
		b = jsonw.String(b, t)
	}
	if n := lr.SeverityNumber(); n != plog.SeverityNumberUnspecified {
		b = append(b, `,"`+KeySeverityNumber+`":`...)
		b = strconv.AppendInt(b, int64(n), 10)
	}
	if id := lr.TraceID(); !id.IsEmpty() {
		b = append(b, `,"`+KeyTraceID+`":"`...)
		b = hex.AppendEncode(b, id[:])
		b = append(b, '"')
	}
	if id := lr.SpanID(); !id.IsEmpty() {
		b = append(b, `,"`+KeySpanID+`":"`...)
		b = hex.AppendEncode(b, id[:])
		b = append(b, '"')
	}
	if n := scope.Name(); n != "" {
		b = append(b, `,"`+KeyScope+`":`...)
		b = jsonw.String(b, n)
	}
	if truncated {
		b = append(b, `,"`+KeyTruncated+`":true`...)
	}
	for _, m := range members {
		b = append(b, ',')
		b = jsonw.String(b, m.key)
		b = append(b, ':')
		b = appendValue(b, m.val, 0)
	}
	return append(b, '}')
}

// appendValue writes a value as native JSON. Non-finite doubles, which JSON
// cannot carry, are written as strings ("NaN", "+Inf", "-Inf").
func appendValue(b []byte, v pcommon.Value, depth int) []byte {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return jsonw.String(b, v.Str())
	case pcommon.ValueTypeInt:
		return strconv.AppendInt(b, v.Int(), 10)
	case pcommon.ValueTypeDouble:
		f := v.Double()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return jsonw.String(b, strconv.FormatFloat(f, 'g', -1, 64))
		}
		return jsonw.Float(b, f)
	case pcommon.ValueTypeBool:
		return strconv.AppendBool(b, v.Bool())
	case pcommon.ValueTypeBytes:
		b = append(b, '"')
		b = base64.StdEncoding.AppendEncode(b, v.Bytes().AsRaw())
		return append(b, '"')
	case pcommon.ValueTypeMap:
		if depth >= maxDepth {
			return jsonw.String(b, v.AsString())
		}
		b = append(b, '{')
		first := true
		v.Map().Range(func(k string, mv pcommon.Value) bool {
			if !first {
				b = append(b, ',')
			}
			first = false
			b = jsonw.String(b, k)
			b = append(b, ':')
			b = appendValue(b, mv, depth+1)
			return true
		})
		return append(b, '}')
	case pcommon.ValueTypeSlice:
		if depth >= maxDepth {
			return jsonw.String(b, v.AsString())
		}
		b = append(b, '[')
		s := v.Slice()
		for i := 0; i < s.Len(); i++ {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendValue(b, s.At(i), depth+1)
		}
		return append(b, ']')
	default:
		return append(b, "null"...)
	}
}
