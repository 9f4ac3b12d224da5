package emf

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"

	as "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

// TestAttributeFieldsNeverRepeatAKey pins which root member an event keeps
// when attribute keys collide with what else it holds: the dimension's
// value over an attribute named like the dimension, the metric's value over
// an attribute named like the metric, a data point attribute over the
// resource's, nothing named _aws but the metadata, and one member for
// attribute keys that become equal as valid UTF-8. encodeAll checks every
// event against the EMF rules, which refuse a root member that appears
// twice.
func TestAttributeFieldsNeverRepeatAKey(t *testing.T) {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	ra := rm.Resource().Attributes()
	ra.PutStr(as.AttrK8sClusterName, "prod")
	ra.PutStr(as.AttrHWID, "GPU-0")
	ra.PutStr("Cluster", "resource-cluster")
	ra.PutStr("gpu.temp", "resource-temp")
	ra.PutStr("_aws", "resource-aws")
	ra.PutStr("zone", "resource-zone")
	ra.PutStr("bad\xffkey", "first")
	ra.PutStr("bad\xfekey", "second")
	sm := rm.ScopeMetrics().AppendEmpty()
	for i, name := range []string{"gpu.temp", "gpu.power"} {
		m := sm.Metrics().AppendEmpty()
		m.SetName(name)
		dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
		dp.SetTimestamp(ts(testTime))
		dp.SetDoubleValue(float64(40 + i))
		dp.Attributes().PutStr("zone", "point-zone")
		dp.Attributes().PutStr("Cluster", "point-cluster")
	}
	opts := projectOptions()
	opts.DatapointDimensions = false
	got := encodeAll(t, NewEncoder(opts), md)
	require.Len(t, got.docs, 1, "both metrics share resource, timestamp and attributes")
	d := got.docs[0]
	cluster, _ := rootString(t, d, "Cluster")
	assert.Equal(t, "prod", cluster, "the Cluster dimension's value, not an attribute named Cluster")
	zone, _ := rootString(t, d, "zone")
	assert.Equal(t, "point-zone", zone, "the data point's attribute over the resource's")
	assert.JSONEq(t, "40", string(d.Root["gpu.temp"]), "the metric's value, not the attribute named like it")
	assert.Contains(t, string(d.Root["_aws"]), "CloudWatchMetrics")
	var bad int
	for _, k := range d.Keys {
		if k == "bad\uFFFDkey" {
			bad++
		}
	}
	assert.Equal(t, 1, bad)
}
