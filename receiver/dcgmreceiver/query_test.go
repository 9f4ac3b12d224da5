package dcgmreceiver

import (
	"fmt"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// resourceOf returns the one resource with this hw.id.
func resourceOf(t *testing.T, md pmetric.Metrics, hwID string) pmetric.ResourceMetrics {
	t.Helper()
	var found []pmetric.ResourceMetrics
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		rm := md.ResourceMetrics().At(i)
		if v, ok := rm.Resource().Attributes().Get("hw.id"); ok && v.Str() == hwID {
			found = append(found, rm)
		}
	}
	require.Len(t, found, 1, "resources with hw.id %s", hwID)
	return found[0]
}

// attr returns a resource attribute of the resource with this hw.id, "" when
// it is absent.
func attr(t *testing.T, md pmetric.Metrics, hwID, key string) string {
	t.Helper()
	v, ok := resourceOf(t, md, hwID).Resource().Attributes().Get(key)
	if !ok {
		return ""
	}
	return v.AsString()
}

// metricNames lists the metrics of the resource with this hw.id, sorted.
func metricNames(t *testing.T, md pmetric.Metrics, hwID string) []string {
	t.Helper()
	var out []string
	sms := resourceOf(t, md, hwID).ScopeMetrics()
	for i := 0; i < sms.Len(); i++ {
		for j := 0; j < sms.At(i).Metrics().Len(); j++ {
			out = append(out, sms.At(i).Metrics().At(j).Name())
		}
	}
	sort.Strings(out)
	return out
}

// points returns the data points of one metric of the resource with this
// hw.id as "{k=v,…}" → value.
func points(t *testing.T, md pmetric.Metrics, hwID, metric string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	sms := resourceOf(t, md, hwID).ScopeMetrics()
	for i := 0; i < sms.Len(); i++ {
		ms := sms.At(i).Metrics()
		for j := 0; j < ms.Len(); j++ {
			m := ms.At(j)
			if m.Name() != metric {
				continue
			}
			var dps pmetric.NumberDataPointSlice
			if m.Type() == pmetric.MetricTypeGauge {
				dps = m.Gauge().DataPoints()
			} else {
				dps = m.Sum().DataPoints()
			}
			for k := 0; k < dps.Len(); k++ {
				dp := dps.At(k)
				v := dp.DoubleValue()
				if dp.ValueType() == pmetric.NumberDataPointValueTypeInt {
					v = float64(dp.IntValue())
				}
				key := pointKey(dp.Attributes())
				require.NotContains(t, out, key, "%s%s twice on %s", metric, key, hwID)
				out[key] = v
			}
		}
	}
	return out
}

// value returns the one point of a metric with exactly these attributes.
func value(t *testing.T, md pmetric.Metrics, hwID, metric string, attrs ...string) float64 {
	t.Helper()
	key := "{"
	for i := 0; i+1 < len(attrs); i += 2 {
		if i > 0 {
			key += ","
		}
		key += attrs[i] + "=" + attrs[i+1]
	}
	key += "}"
	ps := points(t, md, hwID, metric)
	v, ok := ps[key]
	require.True(t, ok, "%s%s on %s; it has %v", metric, key, hwID, ps)
	return v
}

func pointKey(m pcommon.Map) string {
	var kv []string
	m.Range(func(k string, v pcommon.Value) bool {
		kv = append(kv, fmt.Sprintf("%s=%s", k, v.AsString()))
		return true
	})
	sort.Strings(kv)
	key := "{"
	for i, s := range kv {
		if i > 0 {
			key += ","
		}
		key += s
	}
	return key + "}"
}
