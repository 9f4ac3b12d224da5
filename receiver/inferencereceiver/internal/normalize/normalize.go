// Package normalize maps the metrics of LLM inference servers (vLLM V1/V0,
// SGLang before and after its renames, Triton, TGI, NIM) onto the
// accelerator schema's gen_ai.server.* metrics: one point per (model,
// metric, attribute, source series), in schema units, histograms with the
// source's own bucket bounds.
//
// It is a pure function of one scrape; start times, resets and aggregation
// across source series are the cumulative package's job.
package normalize // import "github.com/otelcol-accel/otelcol-accel/receiver/inferencereceiver/internal/normalize"

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/otelcol-accel/otelcol-accel/internal/promscrape"
)

// Point is one source series mapped onto the schema.
type Point struct {
	Model     string
	Metric    string
	Kind      Kind
	Agg       Agg
	AttrKey   string // "" when the metric has no data point attribute
	AttrValue string
	// Source identifies the series within its (model, metric, attribute)
	// group, from the labels the schema does not keep (vLLM engine, SGLang
	// ranks, Triton model version); "" when there is only one.
	Source string
	Value  float64 // gauge or counter
	Hist   Histogram
	// Created is when the source series started, in Unix seconds, from its
	// _created sample; 0 when the server does not say.
	Created float64
	// Exemplars are the histogram's bucket exemplars (OpenMetrics pages
	// only), in page order.
	Exemplars []Exemplar
}

// Histogram is an explicit-bucket histogram in OTLP form: Counts has one
// more entry than Bounds (the last is the overflow bucket). A histogram with
// no bounds has a single count (Triton's totals).
type Histogram struct {
	Bounds []float64
	Counts []uint64
	Count  uint64
	Sum    float64
	HasSum bool
}

// Result is the normalized content of one scrape.
type Result struct {
	Points []Point
	// Matched counts the samples that fed an output; 0 means the target
	// served no metrics of its kind.
	Matched int
	// Errors describes series that were dropped because they could not be
	// read (at most MaxErrors); ErrorCount counts all of them.
	Errors     []error
	ErrorCount int
	// ExemplarErrors describe exemplars kept without their trace (a
	// malformed trace_id or span_id), at most MaxErrors;
	// ExemplarErrorCount counts them all.
	ExemplarErrors     []error
	ExemplarErrorCount int
}

// MaxErrors bounds the errors one Result keeps.
const MaxErrors = 16

func (r *Result) addError(err error) {
	r.ErrorCount++
	if len(r.Errors) < MaxErrors {
		r.Errors = append(r.Errors, err)
	}
}

// Detect names the server kind whose metric names the samples carry most,
// and whether any matched at all.
func Detect(samples []promscrape.Sample[string]) (string, bool) {
	best, bestCount := "", 0
	for _, kind := range Kinds {
		idx := indexes[kind]
		n := 0
		for i := range samples {
			if _, ok := idx.bySample[samples[i].Name]; ok {
				n++
			}
		}
		if n > bestCount {
			best, bestCount = kind, n
		}
	}
	return best, bestCount > 0
}

type accKey struct {
	model  string
	outIdx int
	rank   int
	attr   string
	source string
}

type bucket struct {
	le, cum float64
}

type acc struct {
	key      accKey
	out      output
	value    float64
	hasValue bool
	created  float64
	buckets  []bucket
	sum      float64
	hasSum   bool
	count    float64
	hasCount bool
	line     int
	// exemplars are the buckets' exemplars, in page order.
	exemplars []Exemplar
	// broken is set when a sample of the series could not be read: a
	// histogram missing one bucket would misstate the distribution, so
	// the whole series is dropped.
	broken bool
}

// Normalize maps one scrape of a server of the given kind. defaultModel
// names the model when the server's samples carry no model label.
func Normalize(kind string, samples []promscrape.Sample[string], defaultModel string) Result {
	return normalize(kind, samples, nil, defaultModel)
}

// NormalizePage is Normalize of a whole page, with the exemplars of its
// histograms' buckets.
func NormalizePage(kind string, pg *promscrape.Page, defaultModel string) Result {
	return normalize(kind, pg.Samples, pg.Exemplars, defaultModel)
}

func normalize(kind string, samples []promscrape.Sample[string], exemplars []promscrape.PageExemplar, defaultModel string) Result {
	var res Result
	idx, ok := indexes[kind]
	if !ok {
		res.addError(fmt.Errorf("unknown server kind %q", kind))
		return res
	}
	accs := map[string]*acc{}
	var order []*acc
	var keyBuf []byte
	for i := range samples {
		s := &samples[i]
		bindings := idx.bySample[s.Name]
		if len(bindings) == 0 {
			continue
		}
		dialect := idx.dialectOf(s)
		modelLabel := idx.modelLabels[dialect]
		model := defaultModel
		if modelLabel != "" {
			if m, ok := s.Label(modelLabel); ok && m != "" {
				model = m
			}
		}
		matched := false
		for bi := range bindings {
			b := &bindings[bi]
			if b.dialect != dialect {
				continue
			}
			matched = true
			attr := b.out.attrValue
			if b.attrLabel != "" {
				attr, _ = s.Label(b.attrLabel)
			}
			// The lookup key is built in a reused buffer; a string is
			// allocated only for a series seen for the first time.
			keyBuf = appendLookupKey(keyBuf[:0], model, b, attr)
			srcStart := len(keyBuf)
			keyBuf = appendSourceKey(keyBuf, s.Labels, modelLabel, b)
			a := accs[string(keyBuf)]
			if a == nil {
				k := string(keyBuf)
				key := accKey{model: model, outIdx: b.outIdx, rank: b.rank, attr: attr, source: k[srcStart:]}
				a = &acc{key: key, out: b.out, line: s.Line}
				accs[k] = a
				order = append(order, a)
			}
			// A broken series is never emitted; its first error is reported.
			if a.broken {
				continue
			}
			if err := a.add(b, s); err != nil {
				a.broken = true
				res.addError(err)
				continue
			}
			if s.HasExemplar && b.part == partBucket && a.out.kind == KindHistogram {
				// The exemplars are in sample order: catch up to this one.
				for len(exemplars) > 0 && exemplars[0].Sample < i {
					exemplars = exemplars[1:]
				}
				if len(exemplars) > 0 && exemplars[0].Sample == i {
					e, err := exemplarOf(exemplars[0].Exemplar, a.buckets[len(a.buckets)-1].le, b.divisor, s)
					if err != nil {
						res.ExemplarErrorCount++
						if len(res.ExemplarErrors) < MaxErrors {
							res.ExemplarErrors = append(res.ExemplarErrors, err)
						}
					}
					a.exemplars = append(a.exemplars, e)
				}
			}
		}
		if matched {
			res.Matched++
		}
	}
	if len(order) == 0 {
		return res
	}

	// Of the families feeding one slot, keep only the most preferred one
	// present for each model (V1 over V0 names; no double counting).
	type slotKey struct{ model, slot string }
	best := map[slotKey]int{}
	for _, a := range order {
		if !a.usable() {
			continue
		}
		k := slotKey{a.key.model, a.out.slot()}
		if r, ok := best[k]; !ok || a.key.rank < r {
			best[k] = a.key.rank
		}
	}
	res.Points = make([]Point, 0, len(order))
	for _, a := range order {
		if !a.usable() || best[slotKey{a.key.model, a.out.slot()}] != a.key.rank {
			continue
		}
		p, err := a.point()
		if err != nil {
			res.addError(err)
			continue
		}
		res.Points = append(res.Points, p)
	}
	return res
}

func appendLookupKey(buf []byte, model string, b *binding, attr string) []byte {
	buf = append(buf, model...)
	buf = append(buf, 0)
	buf = strconv.AppendInt(buf, int64(b.outIdx), 10)
	buf = append(buf, 0)
	buf = strconv.AppendInt(buf, int64(b.rank), 10)
	buf = append(buf, 0)
	buf = append(buf, attr...)
	return append(buf, 0)
}

// appendSourceKey renders the labels that identify a source series within
// its output: all but the model label, le, the attribute label and dropped
// ones.
func appendSourceKey(buf []byte, labels []promscrape.Label[string], modelLabel string, b *binding) []byte {
	start := len(buf)
	for _, l := range labels {
		if l.Name == modelLabel || l.Name == "le" || l.Name == b.attrLabel || slices.Contains(b.drop, l.Name) {
			continue
		}
		if len(buf) > start {
			buf = append(buf, ',')
		}
		buf = append(buf, l.Name...)
		buf = append(buf, `="`...)
		buf = append(buf, l.Value...)
		buf = append(buf, '"')
	}
	return buf
}

func (a *acc) add(b *binding, s *promscrape.Sample[string]) error {
	v := s.Value
	switch b.part {
	case partValue:
		// Several samples add up when a dropped label split them
		// (Triton failures by reason).
		a.value += v / b.divisor
		a.hasValue = true
	case partCreated:
		a.created = v
	case partBucket:
		leText, ok := s.Label("le")
		if !ok {
			return a.errorf(s, "bucket without an le label")
		}
		le, err := strconv.ParseFloat(leText, 64)
		if err != nil || math.IsNaN(le) || math.IsInf(le, -1) {
			return a.errorf(s, "bucket bound le=%q is not a number", leText)
		}
		if !math.IsInf(le, 1) {
			le /= b.divisor
		}
		a.buckets = append(a.buckets, bucket{le: le, cum: v})
	case partSum:
		a.sum += v / b.divisor
		a.hasSum = true
	case partCount:
		a.count += v
		a.hasCount = true
	}
	return nil
}

// usable reports whether the series carries a value to emit, as opposed to a
// _created sample alone or a count without the totals it divides.
func (a *acc) usable() bool {
	if a.broken {
		return false
	}
	switch a.out.kind {
	case KindHistogram:
		if len(a.buckets) == 0 {
			return a.hasSum && a.hasCount
		}
		return true
	default:
		return a.hasValue
	}
}

func (a *acc) errorf(s *promscrape.Sample[string], format string, args ...any) error {
	return fmt.Errorf("%s from %s (line %d) dropped: %s", a.out.metric, s.Name, s.Line, fmt.Sprintf(format, args...))
}

func (a *acc) dropf(format string, args ...any) error {
	series := a.key.model
	if a.key.source != "" {
		series += " " + a.key.source
	}
	return fmt.Errorf("%s for model %q (from line %d) dropped: %s", a.out.metric, series, a.line, fmt.Sprintf(format, args...))
}

func (a *acc) point() (Point, error) {
	p := Point{
		Model:     a.key.model,
		Metric:    a.out.metric,
		Kind:      a.out.kind,
		Agg:       a.out.agg,
		AttrKey:   a.out.attrKey,
		AttrValue: a.key.attr,
		Source:    a.key.source,
	}
	if a.created > 0 && !math.IsInf(a.created, 0) {
		p.Created = a.created
	}
	switch a.out.kind {
	case KindGauge:
		if math.IsNaN(a.value) || math.IsInf(a.value, 0) {
			return p, a.dropf("value %v is not finite", a.value)
		}
		p.Value = a.value
	case KindCounter:
		if math.IsNaN(a.value) || math.IsInf(a.value, 0) || a.value < 0 {
			return p, a.dropf("counter value %v is not a finite non-negative number", a.value)
		}
		p.Value = a.value
	case KindHistogram:
		h, err := a.histogram()
		if err != nil {
			return p, a.dropf("%v", err)
		}
		p.Hist = h
		p.Exemplars = a.exemplars
	}
	return p, nil
}

// histogram turns Prometheus cumulative buckets into OTLP per-bucket counts,
// keeping the source's bounds.
func (a *acc) histogram() (Histogram, error) {
	var h Histogram
	if a.hasSum {
		if math.IsNaN(a.sum) || math.IsInf(a.sum, 0) {
			return h, fmt.Errorf("sum %v is not finite", a.sum)
		}
		h.Sum, h.HasSum = a.sum, true
	}
	count := a.count
	if len(a.buckets) == 0 {
		if !validCount(count) {
			return h, fmt.Errorf("count %v is not a finite non-negative number", count)
		}
		h.Count = uint64(math.Round(count))
		h.Counts = []uint64{h.Count}
		return h, nil
	}
	slices.SortFunc(a.buckets, func(x, y bucket) int {
		switch {
		case x.le < y.le:
			return -1
		case x.le > y.le:
			return 1
		}
		return 0
	})
	for i := 1; i < len(a.buckets); i++ {
		if a.buckets[i].le == a.buckets[i-1].le {
			return h, fmt.Errorf("bucket le=%v appears twice", a.buckets[i].le)
		}
	}
	finite := a.buckets
	if last := a.buckets[len(a.buckets)-1]; math.IsInf(last.le, 1) {
		finite = a.buckets[:len(a.buckets)-1]
		if !a.hasCount {
			count = last.cum
		} else if last.cum != count {
			return h, fmt.Errorf("le=\"+Inf\" bucket (%v) differs from _count (%v)", last.cum, count)
		}
	} else if !a.hasCount {
		return h, fmt.Errorf("neither a +Inf bucket nor a _count")
	}
	if !validCount(count) {
		return h, fmt.Errorf("count %v is not a finite non-negative number", count)
	}
	h.Bounds = make([]float64, len(finite))
	h.Counts = make([]uint64, len(finite)+1)
	prev := 0.0
	for i, b := range finite {
		if !validCount(b.cum) {
			return Histogram{}, fmt.Errorf("bucket le=%v count %v is not a finite non-negative number", b.le, b.cum)
		}
		if b.cum < prev {
			return Histogram{}, fmt.Errorf("bucket le=%v count %v is below the previous bucket's %v", b.le, b.cum, prev)
		}
		h.Bounds[i] = b.le
		h.Counts[i] = uint64(math.Round(b.cum - prev))
		prev = b.cum
	}
	if count < prev {
		return Histogram{}, fmt.Errorf("count %v is below the last bucket's %v", count, prev)
	}
	h.Counts[len(finite)] = uint64(math.Round(count - prev))
	h.Count = uint64(math.Round(count))
	// Rounding each bucket separately could drift from the total.
	var total uint64
	for _, c := range h.Counts {
		total += c
	}
	h.Count = total
	return h, nil
}

func validCount(v float64) bool {
	return !math.IsNaN(v) && !math.IsInf(v, 0) && v >= 0 && v < 1<<63
}
