//go:build load

package load

import (
	"fmt"
	"hash/fnv"
	"regexp"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

// capture keeps what an agent exported, to be replayed to the gateway as
// the output of many nodes.
type capture struct {
	mu  sync.Mutex
	got []pmetric.Metrics
}

func (c *capture) add(md pmetric.Metrics) {
	cp := pmetric.NewMetrics()
	md.CopyTo(cp)
	c.mu.Lock()
	c.got = append(c.got, cp)
	c.mu.Unlock()
}

// oneInterval returns the points stamped in [from, from+interval): one
// scrape of every receiver, whichever batches carried them.
func (c *capture) oneInterval(from time.Time, interval time.Duration) pmetric.Metrics {
	c.mu.Lock()
	defer c.mu.Unlock()
	lo, hi := pcommon.NewTimestampFromTime(from), pcommon.NewTimestampFromTime(from.Add(interval))
	in := func(ts pcommon.Timestamp) bool { return ts >= lo && ts < hi }
	out := pmetric.NewMetrics()
	for _, md := range c.got {
		for i := 0; i < md.ResourceMetrics().Len(); i++ {
			rm := md.ResourceMetrics().At(i)
			var nrm pmetric.ResourceMetrics
			for j := 0; j < rm.ScopeMetrics().Len(); j++ {
				sm := rm.ScopeMetrics().At(j)
				var nsm pmetric.ScopeMetrics
				for k := 0; k < sm.Metrics().Len(); k++ {
					m := sm.Metrics().At(k)
					cp := pmetric.NewMetric()
					m.CopyTo(cp)
					if keepPoints(cp, in) == 0 {
						continue
					}
					if nrm == (pmetric.ResourceMetrics{}) {
						nrm = out.ResourceMetrics().AppendEmpty()
						rm.Resource().CopyTo(nrm.Resource())
						nrm.SetSchemaUrl(rm.SchemaUrl())
					}
					if nsm == (pmetric.ScopeMetrics{}) {
						nsm = nrm.ScopeMetrics().AppendEmpty()
						sm.Scope().CopyTo(nsm.Scope())
						nsm.SetSchemaUrl(sm.SchemaUrl())
					}
					cp.MoveTo(nsm.Metrics().AppendEmpty())
				}
			}
		}
	}
	return out
}

// keepPoints drops the points whose timestamp fails in and returns how many
// are left.
func keepPoints(m pmetric.Metric, in func(pcommon.Timestamp) bool) int {
	switch m.Type() {
	case pmetric.MetricTypeGauge:
		m.Gauge().DataPoints().RemoveIf(func(p pmetric.NumberDataPoint) bool { return !in(p.Timestamp()) })
		return m.Gauge().DataPoints().Len()
	case pmetric.MetricTypeSum:
		m.Sum().DataPoints().RemoveIf(func(p pmetric.NumberDataPoint) bool { return !in(p.Timestamp()) })
		return m.Sum().DataPoints().Len()
	case pmetric.MetricTypeHistogram:
		m.Histogram().DataPoints().RemoveIf(func(p pmetric.HistogramDataPoint) bool { return !in(p.Timestamp()) })
		return m.Histogram().DataPoints().Len()
	case pmetric.MetricTypeExponentialHistogram:
		m.ExponentialHistogram().DataPoints().RemoveIf(func(p pmetric.ExponentialHistogramDataPoint) bool { return !in(p.Timestamp()) })
		return m.ExponentialHistogram().DataPoints().Len()
	case pmetric.MetricTypeSummary:
		m.Summary().DataPoints().RemoveIf(func(p pmetric.SummaryDataPoint) bool { return !in(p.Timestamp()) })
		return m.Summary().DataPoints().Len()
	}
	return 0
}

var uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// The resource attributes that say which node, device and pod a resource
// is; everything else (models, profiles, teams, namespaces) repeats across
// a real fleet.
var identityAttrs = []string{
	accelschema.AttrHWID, accelschema.AttrHWParent, accelschema.AttrHostName, accelschema.AttrHostID,
	accelschema.AttrK8sNodeName, accelschema.AttrK8sPodName, accelschema.AttrK8sPodUID,
	accelschema.AttrK8sStatefulSetName, accelschema.AttrK8sJobName, accelschema.AttrWorkloadName,
	accelschema.AttrServerAddress,
}

// asNode rewrites a copy of one node's export as node number n's: node
// name, device and pod UUIDs, pod and workload names, so that replaying
// it for many n is a fleet of distinct nodes, devices and pods.
func asNode(template pmetric.Metrics, fromNode string, n int) pmetric.Metrics {
	md := pmetric.NewMetrics()
	template.CopyTo(md)
	node := fmt.Sprintf("gpu-node-%04d", n)
	block := fmt.Sprintf("-n%04d", n)
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		attrs := md.ResourceMetrics().At(i).Resource().Attributes()
		for _, k := range identityAttrs {
			v, ok := attrs.Get(k)
			if !ok || v.Type() != pcommon.ValueTypeStr {
				continue
			}
			s := strings.ReplaceAll(v.Str(), fromNode, node)
			// Pods and workloads of the generated scenarios are named
			// <kind>-bNN…; make them unique per node.
			s = strings.ReplaceAll(s, "-b0", block+"-b0")
			s = uuidRE.ReplaceAllStringFunc(s, func(u string) string { return nodeUUID(u, n) })
			v.SetStr(s)
		}
	}
	return md
}

func nodeUUID(u string, n int) string {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d", u, n)
	return u[:24] + fmt.Sprintf("%012x", h.Sum64()&0xffffffffffff)
}

// shiftTimestamps moves every point's timestamp by d (start times stay:
// cumulative series keep their start).
func shiftTimestamps(md pmetric.Metrics, d time.Duration) {
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		sms := rms.At(i).ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				m := ms.At(k)
				shift := func(ts pcommon.Timestamp) pcommon.Timestamp { return ts + pcommon.Timestamp(d) }
				switch m.Type() {
				case pmetric.MetricTypeGauge:
					for p := 0; p < m.Gauge().DataPoints().Len(); p++ {
						dp := m.Gauge().DataPoints().At(p)
						dp.SetTimestamp(shift(dp.Timestamp()))
					}
				case pmetric.MetricTypeSum:
					for p := 0; p < m.Sum().DataPoints().Len(); p++ {
						dp := m.Sum().DataPoints().At(p)
						dp.SetTimestamp(shift(dp.Timestamp()))
					}
				case pmetric.MetricTypeHistogram:
					for p := 0; p < m.Histogram().DataPoints().Len(); p++ {
						dp := m.Histogram().DataPoints().At(p)
						dp.SetTimestamp(shift(dp.Timestamp()))
					}
				case pmetric.MetricTypeExponentialHistogram:
					for p := 0; p < m.ExponentialHistogram().DataPoints().Len(); p++ {
						dp := m.ExponentialHistogram().DataPoints().At(p)
						dp.SetTimestamp(shift(dp.Timestamp()))
					}
				case pmetric.MetricTypeSummary:
					for p := 0; p < m.Summary().DataPoints().Len(); p++ {
						dp := m.Summary().DataPoints().At(p)
						dp.SetTimestamp(shift(dp.Timestamp()))
					}
				}
			}
		}
	}
}
