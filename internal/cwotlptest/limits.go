package cwotlptest

import (
	"fmt"

	"go.opentelemetry.io/collector/pdata/pmetric"
)

// Limits of the metrics endpoint that cloudwatch-otlp.yaml is written to
// keep, as docs/cloudwatch.md states them (from a third-party summary, not
// verified against CloudWatch): a request that breaks one is a violation,
// but it is still taken, so a test sees both what was sent and what was
// wrong with it.
const (
	maxDataPointsPerRequest = 1000
	maxLabelsPerDataPoint   = 150
)

// checkMetrics returns what in md breaks those limits.
func checkMetrics(md pmetric.Metrics) []string {
	var out []string
	if n := md.DataPointCount(); n > maxDataPointsPerRequest {
		out = append(out, fmt.Sprintf("%d data points in one request, over %d", n, maxDataPointsPerRequest))
	}
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		resourceLabels := rms.At(i).Resource().Attributes().Len()
		sms := rms.At(i).ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				m := ms.At(k)
				if most := resourceLabels + mostPointAttributes(m); most > maxLabelsPerDataPoint {
					out = append(out, fmt.Sprintf("%s has a data point with %d labels (resource and point attributes), over %d", m.Name(), most, maxLabelsPerDataPoint))
				}
			}
		}
	}
	return out
}

// mostPointAttributes is the largest number of attributes on one of m's
// data points.
func mostPointAttributes(m pmetric.Metric) int {
	most := 0
	count := func(n int) { most = max(most, n) }
	switch m.Type() {
	case pmetric.MetricTypeGauge:
		for i := 0; i < m.Gauge().DataPoints().Len(); i++ {
			count(m.Gauge().DataPoints().At(i).Attributes().Len())
		}
	case pmetric.MetricTypeSum:
		for i := 0; i < m.Sum().DataPoints().Len(); i++ {
			count(m.Sum().DataPoints().At(i).Attributes().Len())
		}
	case pmetric.MetricTypeHistogram:
		for i := 0; i < m.Histogram().DataPoints().Len(); i++ {
			count(m.Histogram().DataPoints().At(i).Attributes().Len())
		}
	case pmetric.MetricTypeExponentialHistogram:
		for i := 0; i < m.ExponentialHistogram().DataPoints().Len(); i++ {
			count(m.ExponentialHistogram().DataPoints().At(i).Attributes().Len())
		}
	case pmetric.MetricTypeSummary:
		for i := 0; i < m.Summary().DataPoints().Len(); i++ {
			count(m.Summary().DataPoints().At(i).Attributes().Len())
		}
	}
	return most
}
