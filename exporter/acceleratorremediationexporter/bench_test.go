package acceleratorremediationexporter

import (
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/metadata"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/plan"
)

// benchExporter is the exporter's intake over a store in memory (what
// intake costs beyond the backend's write), with open plans for
// openPlans devices.
func benchExporter(b *testing.B, openPlans int) *remediationExporter {
	b.Helper()
	e, err := newExporter(testConfig(), exportertest.NewNopSettings(metadata.Type))
	if err != nil {
		b.Fatal(err)
	}
	e.now = func() time.Time { return t0 }
	e.store = plan.NewStore(nil, time.Hour)
	for i := range openPlans {
		e.intake(event{node: fmt.Sprintf("n%d", i/8), device: fmt.Sprintf("GPU-%d", i), xid: 48}.logs(t0))
	}
	if n := len(e.store.All()); n != openPlans {
		b.Fatalf("want %d open plans, got %d", openPlans, n)
	}
	return e
}

// BenchmarkIntake is the cost of one health event reaching the remediator:
// a recurring XID of a device that already has an open plan (the common
// case: it joins the plan), an event that makes a new plan, and a log
// record that is not a health event.
func BenchmarkIntake(b *testing.B) {
	for _, open := range []int{10, 1000} {
		b.Run(fmt.Sprintf("joins_open_plan/open=%d", open), func(b *testing.B) {
			e := benchExporter(b, open)
			ld := event{node: "n0", device: "GPU-0", xid: 48}.logs(t0)
			b.ReportAllocs()
			for b.Loop() {
				e.intake(ld)
			}
		})
		b.Run(fmt.Sprintf("new_plan/open=%d", open), func(b *testing.B) {
			e := benchExporter(b, open)
			lds := make([]plog.Logs, 0, 4096)
			for i := range cap(lds) {
				lds = append(lds, event{node: fmt.Sprintf("new-%d", i), device: "GPU-new", xid: 79}.logs(t0))
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if i == len(lds) { // keep the store's size near open
					b.StopTimer()
					e = benchExporter(b, open)
					i = 0
					b.StartTimer()
				}
				e.intake(lds[i])
				i++
			}
		})
	}
	b.Run("not_a_health_event", func(b *testing.B) {
		e := benchExporter(b, 10)
		ld := plog.NewLogs()
		ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty().Body().SetStr("GET /healthz 200")
		b.ReportAllocs()
		for b.Loop() {
			e.intake(ld)
		}
	})
}
