// Package pmetricutil answers questions about a metric's points whatever its
// type (Gauge, Sum, Histogram, ExponentialHistogram, Summary), so that
// components ask them one way instead of each switching on the type.
package pmetricutil

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// PointCount is how many data points the metric carries (0 for an empty
// metric of no type).
func PointCount(m pmetric.Metric) int {
	switch m.Type() {
	case pmetric.MetricTypeGauge:
		return m.Gauge().DataPoints().Len()
	case pmetric.MetricTypeSum:
		return m.Sum().DataPoints().Len()
	case pmetric.MetricTypeHistogram:
		return m.Histogram().DataPoints().Len()
	case pmetric.MetricTypeExponentialHistogram:
		return m.ExponentialHistogram().DataPoints().Len()
	case pmetric.MetricTypeSummary:
		return m.Summary().DataPoints().Len()
	}
	return 0
}

// timestamped is what every data point type has.
type timestamped interface{ Timestamp() pcommon.Timestamp }

// slice is what every data point slice type has.
type slice[P timestamped] interface {
	Len() int
	At(int) P
}

func latestOf[P timestamped, S slice[P]](dps S) pcommon.Timestamp {
	var t pcommon.Timestamp
	for i := 0; i < dps.Len(); i++ {
		t = max(t, dps.At(i).Timestamp())
	}
	return t
}

// LatestTimestamp is the newest of the metric's points' timestamps, 0 when
// it has none.
func LatestTimestamp(m pmetric.Metric) pcommon.Timestamp {
	switch m.Type() {
	case pmetric.MetricTypeGauge:
		return latestOf[pmetric.NumberDataPoint](m.Gauge().DataPoints())
	case pmetric.MetricTypeSum:
		return latestOf[pmetric.NumberDataPoint](m.Sum().DataPoints())
	case pmetric.MetricTypeHistogram:
		return latestOf[pmetric.HistogramDataPoint](m.Histogram().DataPoints())
	case pmetric.MetricTypeExponentialHistogram:
		return latestOf[pmetric.ExponentialHistogramDataPoint](m.ExponentialHistogram().DataPoints())
	case pmetric.MetricTypeSummary:
		return latestOf[pmetric.SummaryDataPoint](m.Summary().DataPoints())
	}
	return 0
}
