package logjson

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	as "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// xidEvent is a health event as the dcgm receiver emits it.
func xidEvent() (pcommon.Resource, pcommon.InstrumentationScope, plog.LogRecord) {
	logs := plog.NewLogs()
	rl := logs.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr(as.AttrHWID, "GPU-8f3c")
	rl.Resource().Attributes().PutStr(as.AttrK8sNodeName, "ip-10-0-1-17")
	rl.Resource().Attributes().PutStr(as.AttrK8sPodName, "llama-ft-0")
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName("github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver")
	lr := sl.LogRecords().AppendEmpty()
	lr.SetTimestamp(pcommon.NewTimestampFromTime(now.Add(-time.Second)))
	lr.SetSeverityNumber(plog.SeverityNumberError)
	lr.SetSeverityText("ERROR")
	lr.Body().SetStr("XID 79: GPU has fallen off the bus")
	lr.Attributes().PutStr(as.AttrEventName, as.EventXID)
	lr.Attributes().PutInt(as.AttrXID, 79)
	lr.Attributes().PutStr(as.AttrHealthFailureMode, "fallen_off_bus")
	lr.Attributes().PutStr(as.AttrHealthAction, "reboot_node")
	lr.Attributes().PutStr(as.AttrHWID, "GPU-8f3c-record-wins")
	return rl.Resource(), sl.Scope(), lr
}

func decode(t *testing.T, msg []byte) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(msg, &m), "%s", msg)
	return m
}

func TestFlattensAttributesAndKeepsBody(t *testing.T) {
	res, scope, lr := xidEvent()
	msg, ts, truncated := Encoder{MaxEventBytes: 1 << 20}.Encode(res, scope, lr, now)
	assert.False(t, truncated)
	assert.Equal(t, now.Add(-time.Second).UnixMilli(), ts)
	assert.Equal(t, `{"body":"XID 79: GPU has fallen off the bus","severity_text":"ERROR","severity_number":17,`+
		`"otel.scope.name":"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver",`+
		`"accelerator.health.action":"reboot_node","accelerator.health.failure_mode":"fallen_off_bus","accelerator.xid":79,`+
		`"event.name":"accelerator.health.xid","hw.id":"GPU-8f3c-record-wins","k8s.node.name":"ip-10-0-1-17","k8s.pod.name":"llama-ft-0"}`, string(msg))
}

func TestStructuredBodiesAndOddValues(t *testing.T) {
	res, scope, lr := xidEvent()
	body := lr.Body().SetEmptyMap()
	body.PutStr("kind", "rightsizing")
	ev := body.PutEmptySlice("evidence")
	ev.AppendEmpty().SetDouble(0.12)
	ev.AppendEmpty().SetDouble(math.NaN())
	body.PutEmptyBytes("raw").FromRaw([]byte{1, 2, 3})
	lr.Attributes().PutStr("body", "an attribute called body")
	lr.SetTraceID(pcommon.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	lr.SetTimestamp(0)
	lr.SetObservedTimestamp(0)
	msg, ts, _ := Encoder{MaxEventBytes: 1 << 20}.Encode(res, scope, lr, now)
	m := decode(t, msg)
	assert.Equal(t, now.UnixMilli(), ts, "no timestamp at all: now")
	assert.Equal(t, map[string]any{"kind": "rightsizing", "evidence": []any{0.12, "NaN"}, "raw": "AQID"}, m["body"])
	assert.Equal(t, "an attribute called body", m["attr.body"])
	assert.Equal(t, "0102030405060708090a0b0c0d0e0f10", m["trace_id"])
}

func TestOversizedRecordsAreTruncatedNotDropped(t *testing.T) {
	res, scope, lr := xidEvent()
	lr.Body().SetStr(strings.Repeat("\"quoted\" ", 2000)) // escaping makes it longer encoded
	msg, _, truncated := Encoder{MaxEventBytes: 4096}.Encode(res, scope, lr, now)
	assert.True(t, truncated)
	assert.LessOrEqual(t, len(msg), 4096)
	m := decode(t, msg)
	assert.True(t, strings.HasSuffix(m["body"].(string), "[Truncated...]"))
	assert.Equal(t, true, m["otelcol_accel.truncated"])
	assert.Equal(t, "reboot_node", m[as.AttrHealthAction])

	lr.Attributes().PutStr("huge", strings.Repeat("x", 10000))
	msg, _, truncated = Encoder{MaxEventBytes: 4096}.Encode(res, scope, lr, now)
	assert.True(t, truncated)
	assert.LessOrEqual(t, len(msg), 4096)
	m = decode(t, msg)
	assert.Equal(t, as.EventXID, m[as.AttrEventName], "the event keeps its name")
}

func FuzzEncode(f *testing.F) {
	res, scope, lr := xidEvent()
	logs := plog.NewLogs()
	rl := logs.ResourceLogs().AppendEmpty()
	res.CopyTo(rl.Resource())
	sl := rl.ScopeLogs().AppendEmpty()
	scope.CopyTo(sl.Scope())
	lr.CopyTo(sl.LogRecords().AppendEmpty())
	seed, err := (&plog.ProtoMarshaler{}).MarshalLogs(logs)
	require.NoError(f, err)
	f.Add(seed, 4096)
	f.Add([]byte{}, 100)
	f.Fuzz(func(t *testing.T, data []byte, maxBytes int) {
		logs, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(data)
		if err != nil {
			return
		}
		maxBytes = 256 + (maxBytes&0xffff)%(1<<16)
		enc := Encoder{MaxEventBytes: maxBytes}
		for i := 0; i < logs.ResourceLogs().Len(); i++ {
			rl := logs.ResourceLogs().At(i)
			for j := 0; j < rl.ScopeLogs().Len(); j++ {
				sl := rl.ScopeLogs().At(j)
				for k := 0; k < sl.LogRecords().Len(); k++ {
					msg, _, _ := enc.Encode(rl.Resource(), sl.Scope(), sl.LogRecords().At(k), now)
					if len(msg) > maxBytes {
						t.Fatalf("event of %d bytes exceeds %d", len(msg), maxBytes)
					}
					var m map[string]any
					if err := json.Unmarshal(msg, &m); err != nil {
						t.Fatalf("not a JSON object: %v\n%s", err, msg)
					}
				}
			}
		}
	})
}
