package pmetricutil

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

func TestEveryTypeCountsAndDatesItsPoints(t *testing.T) {
	ms := pmetric.NewMetricSlice()
	g := ms.AppendEmpty().SetEmptyGauge().DataPoints()
	g.AppendEmpty().SetTimestamp(5)
	g.AppendEmpty().SetTimestamp(9)
	ms.AppendEmpty().SetEmptySum().DataPoints().AppendEmpty().SetTimestamp(3)
	h := ms.AppendEmpty().SetEmptyHistogram().DataPoints()
	h.AppendEmpty().SetTimestamp(7)
	h.AppendEmpty().SetTimestamp(2)
	h.AppendEmpty().SetTimestamp(4)
	ms.AppendEmpty().SetEmptyExponentialHistogram().DataPoints().AppendEmpty().SetTimestamp(11)
	ms.AppendEmpty().SetEmptySummary().DataPoints().AppendEmpty().SetTimestamp(1)
	ms.AppendEmpty() // no type
	wantCount := []int{2, 1, 3, 1, 1, 0}
	wantLatest := []pcommon.Timestamp{9, 3, 7, 11, 1, 0}
	for i := 0; i < ms.Len(); i++ {
		assert.Equal(t, wantCount[i], PointCount(ms.At(i)), "metric %d (%s)", i, ms.At(i).Type())
		assert.Equal(t, wantLatest[i], LatestTimestamp(ms.At(i)), "metric %d (%s)", i, ms.At(i).Type())
	}
}
