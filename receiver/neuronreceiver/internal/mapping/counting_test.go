package mapping

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/accelschema/countcheck"
)

// assertCountedOnce checks a mapping's output against the counted-once rule:
// countcheck finds nothing, and (stricter than countcheck, which compares
// series by their attributes and so cannot see a device that sums its
// cores' memory per category without their pids) a Neuron device's own
// resource carries device-scoped metrics only, while its NeuronCores carry
// none of them.
func assertCountedOnce(t *testing.T, md pmetric.Metrics) {
	t.Helper()
	assert.Empty(t, countcheck.Violations(md))
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		attrs := rms.At(i).Resource().Attributes()
		id, hasID := attrs.Get(accelschema.AttrHWID)
		_, hasParent := attrs.Get(accelschema.AttrHWParent)
		if !hasID {
			continue
		}
		sms := rms.At(i).ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				def, ok := accelschema.LookupMetric(ms.At(k).Name())
				if !assert.True(t, ok, ms.At(k).Name()) {
					continue
				}
				onDevice := !hasParent
				assert.Equal(t, onDevice, def.Counted == accelschema.CountedPerDevice,
					"%s is counted per %s and sits on %s (device resource: %v)", def.Name, def.Counted, id.Str(), onDevice)
			}
		}
	}
}

func TestJSONReportsAreCountedOnce(t *testing.T) {
	for _, name := range []string{"trn2.json", "inf2.json", "inf1-old-release.json", "trn1-idle.json"} {
		t.Run(name, func(t *testing.T) {
			m := newMapper(defaultSettings())
			for i, r := range fixture(t, name) {
				assertCountedOnce(t, m.Map(r, epoch.Add(time.Duration(i)*5*time.Second)).Metrics)
			}
		})
	}
}
