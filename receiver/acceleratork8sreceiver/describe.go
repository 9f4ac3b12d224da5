package acceleratork8sreceiver

import (
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

// describe names a metric from its entry in internal/accelschema, so what
// the receiver exports says what docs/metrics.md says (the hand-written
// descriptions had drifted from it). Called once per metric per flush; an
// unregistered name is a programming error the receiver's tests hit.
func describe(m pmetric.Metric, name string) {
	d := accelschema.MustMetric("accelerator_k8s", name)
	m.SetName(d.Name)
	m.SetUnit(d.Unit)
	m.SetDescription(d.Brief)
}
