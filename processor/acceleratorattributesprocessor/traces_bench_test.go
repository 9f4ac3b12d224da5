package acceleratorattributesprocessor

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

// BenchmarkProcessTraces: a batch of 110 resources (one per pod of
// benchNode, 86 holding GPUs, 24 without) of 10 spans each.
//
//	go test -run '^$' -bench ProcessTraces -benchmem ./processor/acceleratorattributesprocessor/
func BenchmarkProcessTraces(b *testing.B) {
	h, _ := benchNode(b, true)
	src := ptrace.NewTraces()
	for i := 0; i < 110; i++ {
		rs := src.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", "worker")
		rs.Resource().Attributes().PutStr(accelschema.AttrK8sPodUID, fmt.Sprintf("00000000-0000-4000-8000-%012d", i))
		spans := rs.ScopeSpans().AppendEmpty().Spans()
		for j := 0; j < 10; j++ {
			s := spans.AppendEmpty()
			s.SetName("POST /v1/completions")
			s.Attributes().PutStr("gen_ai.request.model", "m")
		}
	}
	spans := src.SpanCount()
	ctx := context.Background()
	b.ReportAllocs()
	var processing time.Duration
	for b.Loop() {
		b.StopTimer()
		batch := ptrace.NewTraces()
		src.CopyTo(batch)
		b.StartTimer()
		start := time.Now()
		if _, err := h.p.processTraces(ctx, batch); err != nil {
			b.Fatal(err)
		}
		processing += time.Since(start)
	}
	b.ReportMetric(float64(spans*b.N)/processing.Seconds(), "spans/s")
}
