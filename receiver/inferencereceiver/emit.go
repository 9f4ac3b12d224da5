package inferencereceiver // import "github.com/otelcol-accel/otelcol-accel/receiver/inferencereceiver"

import (
	"math"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/receiver/inferencereceiver/internal/cumulative"
	"github.com/otelcol-accel/otelcol-accel/receiver/inferencereceiver/internal/metadata"
	"github.com/otelcol-accel/otelcol-accel/receiver/inferencereceiver/internal/normalize"
)

// emitter writes outputs as pdata: one resource per (target, model), with
// names, units and descriptions from internal/accelschema.
type emitter struct {
	resourceAttrs metadata.ResourceAttributesConfig
	scopeVersion  string
}

// emit appends the target's outputs, sorted by model and metric, to md.
func (e *emitter) emit(md pmetric.Metrics, t *target, kind string, outs []cumulative.Output) {
	for start := 0; start < len(outs); {
		end := start + 1
		for end < len(outs) && outs[end].Model == outs[start].Model {
			end++
		}
		e.emitModel(md, t, kind, outs[start:end])
		start = end
	}
}

func (e *emitter) emitModel(md pmetric.Metrics, t *target, kind string, outs []cumulative.Output) {
	rm := md.ResourceMetrics().AppendEmpty()
	e.resource(t, kind, outs[0].Model).MoveTo(rm.Resource())
	sm := rm.ScopeMetrics().AppendEmpty()
	sm.Scope().SetName(metadata.ScopeName)
	sm.Scope().SetVersion(e.scopeVersion)
	ms := sm.Metrics()
	for start := 0; start < len(outs); {
		end := start + 1
		for end < len(outs) && outs[end].Metric == outs[start].Metric {
			end++
		}
		writeMetric(ms.AppendEmpty(), outs[start:end])
		start = end
	}
}

func (e *emitter) resource(t *target, kind, model string) pcommon.Resource {
	rb := metadata.NewResourceBuilder(e.resourceAttrs)
	switch kind {
	case normalize.VLLM:
		rb.SetGenAiProviderNameVllm()
	case normalize.SGLang:
		rb.SetGenAiProviderNameSglang()
	case normalize.Triton:
		rb.SetGenAiProviderNameTriton()
	case normalize.TGI:
		rb.SetGenAiProviderNameTgi()
	case normalize.NIM:
		rb.SetGenAiProviderNameNim()
	}
	if model != "" {
		// A copy: the model name is a substring of the page, whose
		// buffer the next scrape reuses (target.body).
		rb.SetGenAiRequestModel(strings.Clone(model))
	}
	rb.SetGenAiOperationName(t.operation)
	rb.SetServerAddress(t.address)
	rb.SetServerPort(t.port)
	if t.pod != nil {
		setIf(rb.SetK8sPodName, t.pod.Name)
		setIf(rb.SetK8sPodUID, t.pod.UID)
		setIf(rb.SetK8sNamespaceName, t.pod.Namespace)
		setIf(rb.SetK8sNodeName, t.pod.NodeName)
	}
	return rb.Emit()
}

func setIf(set func(string), v string) {
	if v != "" {
		set(v)
	}
}

// writeMetric writes the data points of one metric (all attribute values).
func writeMetric(m pmetric.Metric, outs []cumulative.Output) {
	def, _ := accelschema.LookupMetric(outs[0].Metric)
	m.SetName(def.Name)
	m.SetUnit(def.Unit)
	m.SetDescription(def.Brief)
	intValues := def.ValueType == "int"
	switch outs[0].Kind {
	case normalize.KindGauge:
		dps := m.SetEmptyGauge().DataPoints()
		for i := range outs {
			numberPoint(dps.AppendEmpty(), &outs[i], intValues)
		}
	case normalize.KindCounter:
		sum := m.SetEmptySum()
		sum.SetIsMonotonic(true)
		sum.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
		for i := range outs {
			numberPoint(sum.DataPoints().AppendEmpty(), &outs[i], intValues)
		}
	case normalize.KindHistogram:
		h := m.SetEmptyHistogram()
		h.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
		for i := range outs {
			histogramPoint(h.DataPoints().AppendEmpty(), &outs[i])
		}
	}
}

func timestamps(o *cumulative.Output) (start, ts pcommon.Timestamp) {
	if !o.Start.IsZero() {
		start = pcommon.NewTimestampFromTime(o.Start)
	}
	return start, pcommon.NewTimestampFromTime(o.Time)
}

func numberPoint(dp pmetric.NumberDataPoint, o *cumulative.Output, intValue bool) {
	start, ts := timestamps(o)
	dp.SetStartTimestamp(start)
	dp.SetTimestamp(ts)
	if intValue {
		dp.SetIntValue(int64(math.Round(o.Value)))
	} else {
		dp.SetDoubleValue(o.Value)
	}
	if o.AttrKey != "" && o.AttrValue != "" {
		dp.Attributes().PutStr(o.AttrKey, strings.Clone(o.AttrValue)) // see resource
	}
}

func histogramPoint(dp pmetric.HistogramDataPoint, o *cumulative.Output) {
	start, ts := timestamps(o)
	dp.SetStartTimestamp(start)
	dp.SetTimestamp(ts)
	dp.SetCount(o.Hist.Count)
	if o.Hist.HasSum {
		dp.SetSum(o.Hist.Sum)
	}
	dp.ExplicitBounds().FromRaw(o.Hist.Bounds)
	dp.BucketCounts().FromRaw(o.Hist.Counts)
	if o.AttrKey != "" && o.AttrValue != "" {
		dp.Attributes().PutStr(o.AttrKey, strings.Clone(o.AttrValue)) // see resource
	}
	for i := range o.Exemplars {
		exemplar(dp.Exemplars().AppendEmpty(), &o.Exemplars[i], ts)
	}
}

// exemplar writes a bucket's exemplar: its trace and span, its value, when
// it was observed (the scrape's time when the server did not say), and its
// other labels as filtered attributes.
func exemplar(e pmetric.Exemplar, x *normalize.Exemplar, scraped pcommon.Timestamp) {
	e.SetDoubleValue(x.Value)
	e.SetTimestamp(scraped)
	if ms, ok := x.UnixMilli(); ok { // else the scrape's time stands in
		e.SetTimestamp(pcommon.Timestamp(ms * 1e6))
	}
	if x.TraceID != ([16]byte{}) {
		e.SetTraceID(x.TraceID)
	}
	if x.SpanID != ([8]byte{}) {
		e.SetSpanID(x.SpanID)
	}
	for _, l := range x.Filtered {
		// Copies: the labels are substrings of the page, whose buffer
		// the next scrape reuses (target.body).
		e.FilteredAttributes().PutStr(strings.Clone(l.Name), strings.Clone(l.Value))
	}
}
