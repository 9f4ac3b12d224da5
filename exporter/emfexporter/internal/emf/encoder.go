// Package emf encodes OpenTelemetry metrics as CloudWatch Embedded Metric
// Format (EMF) log events.
//
// Points of one resource that share a timestamp (in milliseconds) and a set
// of data point attributes become one event, holding one root member per
// metric and one directive per distinct list of dimension sets. Every limit
// of the specification is kept by splitting: more than 100 metrics, a
// dimension set with more than 30 keys, a histogram with more than 100
// distinct values or an event over the size limit are spread over several
// sets or events, never cut.
package emf

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-accel/otelcol-accel/exporter/emfexporter/internal/attrhash"
	"github.com/otelcol-accel/otelcol-accel/exporter/emfexporter/internal/jsonw"
)

// Encoder turns metrics into EMF events. It is safe for concurrent use.
type Encoder struct {
	opts          Options
	maxEventBytes int
	dimIndex      map[string]int    // dimension name → index in opts.Dimensions
	attrToDim     map[string]string // attribute key → the first dimension read from it
	exclude       map[string]bool
	// infos caches metricInfo by name and unit. A map under a read lock,
	// not a sync.Map: its key would be a string built (allocated) for
	// every metric of every resource.
	infosMu sync.RWMutex
	infos   map[infoKey]*metricInfo
	scratch sync.Pool
}

// Problem names a data point the encoder could not turn into EMF and why.
type Problem struct {
	Metric string
	Reason string
}

// Stats counts what one call did.
type Stats struct {
	Points    int // data points read
	Events    int
	Skipped   int // data points that could not be encoded (see Problem)
	Empty     int // histograms without observations and no-recorded-value points
	Truncated int // dimension values cut to 1,024 bytes, events sent without attribute fields
	Split     int // events beyond the first that one group (resource, timestamp, attributes) became
}

// Add accumulates o into s.
func (s *Stats) Add(o Stats) {
	s.Points += o.Points
	s.Events += o.Events
	s.Skipped += o.Skipped
	s.Empty += o.Empty
	s.Truncated += o.Truncated
	s.Split += o.Split
}

// NewEncoder returns an encoder for opts. Options are expected to be
// validated (the exporter's Config.Validate does it).
func NewEncoder(opts Options) *Encoder {
	e := &Encoder{
		opts:          opts,
		maxEventBytes: opts.MaxEventBytes,
		dimIndex:      map[string]int{},
		attrToDim:     map[string]string{},
		exclude:       map[string]bool{},
		infos:         map[infoKey]*metricInfo{},
	}
	if e.maxEventBytes <= 0 {
		e.maxEventBytes = DefaultMaxEventBytes
	}
	for i, d := range opts.Dimensions {
		e.dimIndex[d.Name] = i
		for _, a := range d.Attributes {
			if _, ok := e.attrToDim[a]; !ok {
				e.attrToDim[a] = d.Name
			}
		}
	}
	for _, k := range opts.ExcludeDatapointDimensions {
		e.exclude[k] = true
	}
	e.scratch.New = func() any {
		return &scratch{groups: map[groupKey]*group{}}
	}
	return e
}

type infoKey struct{ name, unit string }

// metricInfo is what the encoder derives from a metric's name and unit, once.
type metricInfo struct {
	name       string
	unit       string
	resolution int
	setsKey    string
	sets       [][]string
	invalid    string
}

func (e *Encoder) info(name, unit string) *metricInfo {
	key := infoKey{name, unit}
	e.infosMu.RLock()
	mi, ok := e.infos[key]
	e.infosMu.RUnlock()
	if ok {
		return mi
	}
	// Invalid UTF-8 would be written as U+FFFD; use that form throughout so
	// that two names differing only in invalid bytes cannot collide within
	// an event.
	mi = &metricInfo{name: strings.ToValidUTF8(name, "\uFFFD"), resolution: 60}
	switch {
	case name == "":
		mi.invalid = "metric has no name"
	case len(name) > MaxMetricNameBytes:
		mi.invalid = "metric name is longer than 255 bytes"
	case name == "_aws":
		mi.invalid = `metric name "_aws" is reserved by EMF`
	}
	mi.unit = CloudWatchUnit(unit)
	if u, ok := e.opts.Units[name]; ok {
		mi.unit = u
	}
	for _, re := range e.opts.HighResolution {
		if re.MatchString(name) {
			mi.resolution = 1
			break
		}
	}
	var keys []string
	for i, d := range e.opts.Declarations {
		for _, re := range d.MetricNameSelectors {
			if re.MatchString(name) {
				keys = append(keys, strconv.Itoa(i))
				for _, s := range d.DimensionSets {
					if !slices.ContainsFunc(mi.sets, func(x []string) bool { return slices.Equal(x, s) }) {
						mi.sets = append(mi.sets, s)
					}
				}
				break
			}
		}
	}
	if keys == nil {
		mi.sets = e.opts.DimensionSets
	} else {
		mi.setsKey = strings.Join(keys, ",")
	}
	// The key's strings may be the request's; keep copies.
	key = infoKey{strings.Clone(name), strings.Clone(unit)}
	e.infosMu.Lock()
	defer e.infosMu.Unlock()
	if v, ok := e.infos[key]; ok {
		return v
	}
	e.infos[key] = mi
	return mi
}

// member is one metric value in an event.
type member struct {
	info  *metricInfo
	isInt bool
	ival  int64
	fval  float64
	dist  *Distribution // histogram or statistic set when non-nil
}

// field is an attribute written as a root member. enc is the member as
// written (`,"key":"value"`), escaped once for all the events that carry it.
type field struct {
	key, val string
	enc      []byte
}

// group collects the points of one resource with one timestamp and one set
// of data point attributes.
type group struct {
	ts        int64
	attrs     pcommon.Map
	events    [][]member
	next      map[string]int // metric name → first event index it may still go to
	dimVals   map[string]string
	sets      map[string][][]string
	extras    []string
	fields    []field
	prepped   bool
	truncated int // dimension values cut to MaxDimensionValueBytes
	fieldBuf  []byte
	same      *group // the next group whose key (timestamp, hash) is equal
}

// reset readies a group from an earlier call for reuse, keeping what it
// allocated (maps, lists, the fields' buffer).
func (g *group) reset(ts int64, attrs pcommon.Map) {
	for i := range g.events {
		clear(g.events[i])
		g.events[i] = g.events[i][:0]
	}
	clear(g.fields)
	clear(g.extras)
	*g = group{
		ts: ts, attrs: attrs, events: g.events[:0], next: g.next, dimVals: g.dimVals, sets: g.sets,
		extras: g.extras[:0], fields: g.fields[:0], fieldBuf: g.fieldBuf[:0],
	}
	if g.next == nil {
		g.next, g.dimVals, g.sets = map[string]int{}, map[string]string{}, map[string][][]string{}
	} else {
		clear(g.next)
		clear(g.dimVals)
		clear(g.sets)
	}
}

type groupKey struct {
	ts   int64
	hash uint64
}

// scratch is what one EncodeResource call works in, kept between calls: a
// gateway encodes thousands of small groups a second (real agent output is
// 1.5 points a group), and allocating each group's maps and lists anew was
// most of what the encoder left to the garbage collector.
type scratch struct {
	buf        []byte
	names      map[string]struct{}
	directives []directive
	dimNames   []string
	res        resource
	groups     map[groupKey]*group // the first group of a key; more chain on via same
	order      []*group
	// pool holds every group an earlier call used; the first used of them
	// are in use by this call.
	pool []*group
	used int
}

// newGroup returns a group for this call, reusing one from an earlier call
// when there is one.
func (sc *scratch) newGroup(ts int64, attrs pcommon.Map) *group {
	if sc.used == len(sc.pool) {
		sc.pool = append(sc.pool, &group{})
	}
	g := sc.pool[sc.used]
	sc.used++
	g.reset(ts, attrs)
	return g
}

// begin readies sc for a call on the resource attributes attrs.
func (sc *scratch) begin(attrs pcommon.Map) *resource {
	clear(sc.groups)
	clear(sc.order)
	sc.order = sc.order[:0]
	sc.used = 0
	r := &sc.res
	clear(r.fields)
	r.attrs, r.fields = attrs, r.fields[:0]
	r.addBuf, r.setBuf, r.outBuf = r.addBuf[:0], r.setBuf[:0], r.outBuf[:0]
	return r
}

// end drops what sc refers to of the call's data, so that a pooled scratch
// does not keep a request's pdata alive.
func (sc *scratch) end() {
	for _, g := range sc.pool[:sc.used] {
		g.attrs = pcommon.Map{}
		for i := range g.events {
			clear(g.events[i])
		}
	}
	clear(sc.groups)
	sc.res.attrs = pcommon.Map{}
}

// resource holds what every event of one resource shares.
type resource struct {
	attrs    pcommon.Map
	fields   []field
	fieldBuf []byte
	// addBuf, setBuf and outBuf back extend's and setsFor's work for the
	// resource's groups.
	addBuf []string
	setBuf []string
	outBuf [][]string
}

// EncodeResource encodes the points of one ResourceMetrics. emit receives
// each event's timestamp (milliseconds since the epoch) and message; the
// message is the encoder's buffer, valid only until emit returns (copy it
// to keep it: a gateway's caller copies it into an arena, not a message
// allocated per event). problem, when not nil, is called for
// every point that cannot be encoded. now stands in for missing timestamps.
func (e *Encoder) EncodeResource(rm pmetric.ResourceMetrics, now time.Time, emit func(tsMillis int64, msg []byte), problem func(Problem)) Stats {
	var st Stats
	sc := e.scratch.Get().(*scratch)
	defer func() {
		sc.end()
		e.scratch.Put(sc)
	}()
	res := sc.begin(rm.Resource().Attributes())
	if e.opts.ResourceAttributesAsFields {
		res.fields, res.fieldBuf = sortedFields(res.attrs, res.fields, res.fieldBuf)
	}
	nowMillis := now.UnixMilli()

	getGroup := func(ts pcommon.Timestamp, attrs pcommon.Map) *group {
		ms := nowMillis
		if ts != 0 {
			ms = int64(uint64(ts) / uint64(time.Millisecond))
		}
		k := groupKey{ts: ms, hash: attrhash.Map(attrs)}
		first := sc.groups[k]
		for g := first; g != nil; g = g.same {
			if g.attrs.Equal(attrs) {
				return g
			}
		}
		g := sc.newGroup(ms, attrs)
		g.same, sc.groups[k] = first, g
		sc.order = append(sc.order, g)
		return g
	}
	skip := func(name, reason string) {
		st.Skipped++
		if problem != nil {
			problem(Problem{Metric: name, Reason: reason})
		}
	}

	sms := rm.ScopeMetrics()
	for i := 0; i < sms.Len(); i++ {
		ms := sms.At(i).Metrics()
		for j := 0; j < ms.Len(); j++ {
			m := ms.At(j)
			mi := e.info(m.Name(), m.Unit())
			switch m.Type() {
			case pmetric.MetricTypeGauge:
				e.addNumbers(m.Gauge().DataPoints(), mi, &st, getGroup, skip)
			case pmetric.MetricTypeSum:
				e.addNumbers(m.Sum().DataPoints(), mi, &st, getGroup, skip)
			case pmetric.MetricTypeHistogram:
				addDistributions(e, m.Histogram().DataPoints(), FromExplicit, mi, &st, getGroup, skip)
			case pmetric.MetricTypeExponentialHistogram:
				addDistributions(e, m.ExponentialHistogram().DataPoints(), FromExponential, mi, &st, getGroup, skip)
			case pmetric.MetricTypeSummary:
				addDistributions(e, m.Summary().DataPoints(), FromSummary, mi, &st, getGroup, skip)
			default:
				skip(mi.name, "metric has no data type")
			}
		}
	}

	for _, g := range sc.order {
		before := st.Events
		for _, members := range g.events {
			e.emitMembers(sc, res, g, members, &st, emit, skip)
		}
		if n := st.Events - before; n > 1 {
			st.Split += n - 1
		}
		st.Truncated += g.truncated
	}
	return st
}

// point is what every pdata data point type has in common that the encoder
// needs; pdata gives them no shared interface.
type point interface {
	Flags() pmetric.DataPointFlags
	Timestamp() pcommon.Timestamp
	Attributes() pcommon.Map
}

// eachPoint applies the rules every point goes through — counted, an empty
// point skipped as empty, a metric CloudWatch cannot carry skipped with its
// reason — and hands the rest to add.
func eachPoint[P point, S interface {
	Len() int
	At(int) P
}](dps S, mi *metricInfo, st *Stats, skip func(string, string), add func(P)) {
	for k := 0; k < dps.Len(); k++ {
		dp := dps.At(k)
		st.Points++
		if dp.Flags().NoRecordedValue() {
			st.Empty++
			continue
		}
		if mi.invalid != "" {
			skip(mi.name, mi.invalid)
			continue
		}
		add(dp)
	}
}

func (e *Encoder) addNumbers(dps pmetric.NumberDataPointSlice, mi *metricInfo, st *Stats, getGroup func(pcommon.Timestamp, pcommon.Map) *group, skip func(string, string)) {
	eachPoint(dps, mi, st, skip, func(dp pmetric.NumberDataPoint) {
		m := member{info: mi}
		switch dp.ValueType() {
		case pmetric.NumberDataPointValueTypeInt:
			m.isInt, m.ival = true, dp.IntValue()
		case pmetric.NumberDataPointValueTypeDouble:
			v := dp.DoubleValue()
			if !finite(v) {
				skip(mi.name, "value is "+strconv.FormatFloat(v, 'g', -1, 64)+", which JSON and CloudWatch cannot carry")
				return
			}
			if v > maxMagnitude || v < -maxMagnitude {
				skip(mi.name, "value is beyond ±2^360, the range CloudWatch accepts")
				return
			}
			m.fval = v
		default:
			skip(mi.name, "data point has no value")
			return
		}
		getGroup(dp.Timestamp(), dp.Attributes()).add(m)
	})
}

// addDistributions converts every point of a histogram, exponential
// histogram or summary with convert and adds it to its group.
func addDistributions[P point, S interface {
	Len() int
	At(int) P
}](e *Encoder, dps S, convert func(P) (Distribution, error), mi *metricInfo, st *Stats, getGroup func(pcommon.Timestamp, pcommon.Map) *group, skip func(string, string)) {
	eachPoint(dps, mi, st, skip, func(dp P) {
		d, err := convert(dp)
		e.addDistribution(d, err, mi, getGroup(dp.Timestamp(), dp.Attributes()), st, skip)
	})
}

func (e *Encoder) addDistribution(d Distribution, err error, mi *metricInfo, g *group, st *Stats, skip func(string, string)) {
	if errors.Is(err, errNoObservations) {
		st.Empty++
		return
	}
	if err != nil {
		skip(mi.name, err.Error())
		return
	}
	if d.Values == nil {
		g.add(member{info: mi, dist: &d})
		return
	}
	for _, p := range d.Split(MaxValuesPerArray) {
		p := p
		g.add(member{info: mi, dist: &p})
	}
}

// add puts m into the first event that has room and does not hold the metric
// yet, so a metric name is never repeated within an event.
func (g *group) add(m member) {
	for i := g.next[m.info.name]; ; i++ {
		if i == len(g.events) {
			if i < cap(g.events) {
				// A list a reused group had before.
				g.events = g.events[:i+1]
			} else {
				// Most groups of real agent output hold one or two
				// points (a state, an error type, a waste reason each
				// make their own).
				g.events = append(g.events, make([]member, 0, 2))
			}
		}
		if len(g.events[i]) < MaxMetricsPerEvent {
			g.events[i] = append(g.events[i], m)
			g.next[m.info.name] = i + 1
			return
		}
	}
}

// emitMembers encodes members as one event, or, when that event is larger
// than the limit, as two halves (recursively). A single metric that still
// does not fit is sent without the attribute fields that are not dimensions.
func (e *Encoder) emitMembers(sc *scratch, res *resource, g *group, members []member, st *Stats, emit func(int64, []byte), skip func(string, string)) {
	sc.buf = e.encodeEvent(sc, sc.buf[:0], res, g, members, true)
	if len(sc.buf) <= e.maxEventBytes {
		st.Events++
		emit(g.ts, sc.buf)
		return
	}
	if len(members) > 1 {
		half := len(members) / 2
		e.emitMembers(sc, res, g, members[:half], st, emit, skip)
		e.emitMembers(sc, res, g, members[half:], st, emit, skip)
		return
	}
	sc.buf = e.encodeEvent(sc, sc.buf[:0], res, g, members, false)
	if len(sc.buf) <= e.maxEventBytes {
		st.Events++
		st.Truncated++
		emit(g.ts, sc.buf)
		return
	}
	skip(members[0].info.name, "event is larger than max_event_bytes even with only its dimensions")
}

type directive struct {
	key     string
	sets    [][]string
	members []int
}

func (e *Encoder) encodeEvent(sc *scratch, b []byte, res *resource, g *group, members []member, withAttrs bool) []byte {
	e.prepare(g, res)
	if len(members) > 8 { // isMetric's set, for the events it is worth it for
		if sc.names == nil {
			sc.names = map[string]struct{}{}
		}
		clear(sc.names)
		for _, m := range members {
			sc.names[m.info.name] = struct{}{}
		}
	}

	// The directives and their lists live in sc between events: an event
	// is encoded per group and split, many times a call.
	directives := sc.directives[:0]
	for i, m := range members {
		sets := e.setsFor(g, res, m.info)
		key := m.info.setsKey
		idx := slices.IndexFunc(directives, func(d directive) bool { return d.key == key })
		if idx < 0 {
			var d directive
			if n := len(directives); n < cap(directives) {
				d = directives[:n+1][n]
			}
			d.key, d.sets, d.members = key, d.sets[:0], d.members[:0]
			for _, s := range sets {
				if !slices.ContainsFunc(s, func(n string) bool { return isMetric(n, members, sc) }) {
					d.sets = append(d.sets, s)
				}
			}
			directives = append(directives, d)
			idx = len(directives) - 1
		}
		if len(directives[idx].sets) > 0 {
			directives[idx].members = append(directives[idx].members, i)
		}
	}

	b = append(b, `{"_aws":{"Timestamp":`...)
	b = strconv.AppendInt(b, g.ts, 10)
	b = append(b, `,"CloudWatchMetrics":[`...)
	dimNames := sc.dimNames[:0]
	first := true
	for _, d := range directives {
		if len(d.members) == 0 {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, `{"Namespace":`...)
		b = jsonw.String(b, e.opts.Namespace)
		b = append(b, `,"Dimensions":[`...)
		for si, s := range d.sets {
			if si > 0 {
				b = append(b, ',')
			}
			b = append(b, '[')
			for ni, n := range s {
				if ni > 0 {
					b = append(b, ',')
				}
				b = jsonw.String(b, n)
				if !slices.Contains(dimNames, n) {
					dimNames = append(dimNames, n)
				}
			}
			b = append(b, ']')
		}
		b = append(b, `],"Metrics":[`...)
		for mi, i := range d.members {
			if mi > 0 {
				b = append(b, ',')
			}
			info := members[i].info
			b = append(b, `{"Name":`...)
			b = jsonw.String(b, info.name)
			b = append(b, `,"Unit":`...)
			b = jsonw.String(b, info.unit)
			b = append(b, `,"StorageResolution":`...)
			b = strconv.AppendInt(b, int64(info.resolution), 10)
			b = append(b, '}')
		}
		b = append(b, "]}"...)
	}
	b = append(b, "]}"...)

	sc.directives, sc.dimNames = directives, dimNames
	slices.Sort(dimNames)
	for _, n := range dimNames {
		v, _ := e.dimValue(g, res, n)
		b = append(b, ',')
		b = jsonw.String(b, n)
		b = append(b, ':')
		b = jsonw.String(b, v)
	}
	if withAttrs {
		b = appendFields(b, g.fields, dimNames, nil, members, sc)
		b = appendFields(b, res.fields, dimNames, g.fields, members, sc)
	}
	for _, m := range members {
		b = append(b, ',')
		b = jsonw.String(b, m.info.name)
		b = append(b, ':')
		b = appendValue(b, m)
	}
	return append(b, '}')
}

// appendFields writes the fields whose keys the event does not hold yet:
// not "_aws", not one of the dimensions (dimNames, sorted), not one of the
// fields written before them (written, sorted: a data point attribute wins
// over the resource's), not a metric of the event; the first of equal keys.
// The lists are all sorted by key, so this is a merge: looking each key up
// in a set, per field and event, was a fifth of the encoder's time.
func appendFields(b []byte, fields []field, dimNames []string, written []field, members []member, sc *scratch) []byte {
	di, wi := 0, 0
	for i, f := range fields {
		k := f.key
		if k == "_aws" || (i > 0 && fields[i-1].key == k) {
			continue
		}
		for di < len(dimNames) && dimNames[di] < k {
			di++
		}
		if di < len(dimNames) && dimNames[di] == k {
			continue
		}
		for wi < len(written) && written[wi].key < k {
			wi++
		}
		if wi < len(written) && written[wi].key == k {
			continue
		}
		if isMetric(k, members, sc) {
			continue
		}
		b = append(b, f.enc...)
	}
	return b
}

// isMetric reports whether one of the event's members is the metric k. An
// event holds one or two metrics mostly; a set (sc.names, which
// encodeEvent fills for more than 8) is only worth it for many.
func isMetric(k string, members []member, sc *scratch) bool {
	if len(members) > 8 {
		_, ok := sc.names[k]
		return ok
	}
	for _, m := range members {
		if m.info.name == k {
			return true
		}
	}
	return false
}

func appendValue(b []byte, m member) []byte {
	switch {
	case m.dist != nil:
		d := m.dist
		b = append(b, '{')
		if d.Values != nil {
			b = append(b, `"Values":[`...)
			for i, v := range d.Values {
				if i > 0 {
					b = append(b, ',')
				}
				b = jsonw.Float(b, v)
			}
			b = append(b, `],"Counts":[`...)
			for i, c := range d.Counts {
				if i > 0 {
					b = append(b, ',')
				}
				b = jsonw.Float(b, c)
			}
			b = append(b, "],"...)
		}
		b = append(b, `"Max":`...)
		b = jsonw.Float(b, d.Max)
		b = append(b, `,"Min":`...)
		b = jsonw.Float(b, d.Min)
		b = append(b, `,"Count":`...)
		b = jsonw.Float(b, d.Count)
		b = append(b, `,"Sum":`...)
		b = jsonw.Float(b, d.Sum)
		return append(b, '}')
	case m.isInt:
		return strconv.AppendInt(b, m.ival, 10)
	default:
		return jsonw.Float(b, m.fval)
	}
}

// prepare computes, once per group, its attribute fields and the data point
// attributes that extend its dimension sets.
func (e *Encoder) prepare(g *group, res *resource) {
	if g.prepped {
		return
	}
	g.prepped = true
	g.fields, g.fieldBuf = sortedFields(g.attrs, g.fields, g.fieldBuf)
	if !e.opts.DatapointDimensions {
		return
	}
	for _, f := range g.fields {
		if e.exclude[f.key] || f.val == "" {
			continue
		}
		name := f.key
		if d, ok := e.attrToDim[f.key]; ok {
			name = d
		}
		if len(name) > MaxDimensionNameBytes || slices.Contains(g.extras, name) {
			continue
		}
		if _, ok := e.dimValue(g, res, name); ok {
			g.extras = append(g.extras, name)
		}
	}
}

// dimValue resolves a dimension for a group. Empty values count as missing.
func (e *Encoder) dimValue(g *group, res *resource, name string) (string, bool) {
	if v, ok := g.dimVals[name]; ok {
		return v, v != ""
	}
	var v string
	if i, ok := e.dimIndex[name]; ok {
		for _, key := range e.opts.Dimensions[i].Attributes {
			if v = lookup(g.attrs, res.attrs, key); v != "" {
				break
			}
		}
	} else {
		v = lookup(g.attrs, res.attrs, name)
	}
	if len(v) > MaxDimensionValueBytes {
		v = jsonw.TruncateUTF8(v, MaxDimensionValueBytes)
		g.truncated++
	}
	g.dimVals[name] = v
	return v, v != ""
}

// setsFor resolves a metric's dimension sets for a group: sets with a
// missing dimension are skipped, the group's data point attributes are
// appended (spread over several sets when a set would exceed 30 keys), and
// when nothing is left the fallback applies.
func (e *Encoder) setsFor(g *group, res *resource, mi *metricInfo) [][]string {
	if s, ok := g.sets[mi.setsKey]; ok {
		return s
	}
	// The lists are carved from one buffer per call, like extend's sets:
	// at most one set per piece of extras for each declared set and the
	// fallback.
	need := (len(mi.sets) + 1) * max(1, len(g.extras))
	if cap(res.outBuf)-len(res.outBuf) < need {
		// Doubling: the buffer kept for the next call ends up large
		// enough for a whole resource.
		res.outBuf = make([][]string, 0, max(256, need, 2*cap(res.outBuf)))
	}
	n := len(res.outBuf)
	out := res.outBuf[n : n : n+need]
	for _, s := range mi.sets {
		complete := true
		for _, n := range s {
			if _, ok := e.dimValue(g, res, n); !ok {
				complete = false
				break
			}
		}
		if complete {
			out = res.extend(out, s, g.extras)
		}
	}
	if len(out) == 0 && e.opts.FallbackToAvailable {
		var avail []string
		for _, d := range e.opts.Dimensions {
			if _, ok := e.dimValue(g, res, d.Name); ok {
				avail = append(avail, d.Name)
				if len(avail) == MaxDimensionsPerSet {
					break
				}
			}
		}
		out = res.extend(out, avail, g.extras)
	}
	if len(out) == 0 {
		out = nil
	}
	if len(out) <= need {
		// In the buffer (append would have moved a longer list).
		res.outBuf = res.outBuf[:n+len(out)]
		out = out[:len(out):len(out)]
	}
	g.sets[mi.setsKey] = out
	return out
}

// extend appends to out the sets made of base and extras, spreading extras
// over several sets so that none exceeds MaxDimensionsPerSet keys. Each set
// keeps all of base. New sets are carved from one buffer per resource: a
// set per group and declaration was a quarter of the encoder's
// allocations.
func (r *resource) extend(out [][]string, base, extras []string) [][]string {
	add := r.addBuf[:0]
	for _, x := range extras {
		if !slices.Contains(base, x) {
			add = append(add, x)
		}
	}
	r.addBuf = add
	room := MaxDimensionsPerSet - len(base)
	if len(add) == 0 || room <= 0 {
		return append(out, base)
	}
	for start := 0; start < len(add); start += room {
		end := min(start+room, len(add))
		need := len(base) + end - start
		if cap(r.setBuf)-len(r.setBuf) < need {
			r.setBuf = make([]string, 0, max(256, need, 2*cap(r.setBuf)))
		}
		n := len(r.setBuf)
		set := append(append(r.setBuf[n:n:n+need], base...), add[start:end]...)
		r.setBuf = r.setBuf[:n+need]
		out = append(out, set)
	}
	return out
}

func lookup(point, res pcommon.Map, key string) string {
	if v, ok := point.Get(key); ok {
		if s := v.AsString(); s != "" {
			return s
		}
	}
	if v, ok := res.Get(key); ok {
		return v.AsString()
	}
	return ""
}

// sortedFields returns m's attributes sorted by key, each encoded once into
// buf (returned too, for the next call to reuse).
func sortedFields(m pcommon.Map, out []field, buf []byte) ([]field, []byte) {
	out = out[:0]
	size := 0
	m.Range(func(k string, v pcommon.Value) bool {
		f := field{key: strings.ToValidUTF8(k, "\uFFFD"), val: v.AsString()}
		size += len(f.key) + len(f.val) + 8
		out = append(out, f)
		return true
	})
	slices.SortFunc(out, func(a, b field) int { return strings.Compare(a.key, b.key) })
	// One buffer for all members; each field's enc is its part of it.
	if cap(buf) < size+size/8 {
		buf = make([]byte, 0, size+size/8)
	}
	buf = buf[:0]
	for i := range out {
		start := len(buf)
		buf = append(buf, ',')
		buf = jsonw.String(buf, out[i].key)
		buf = append(buf, ':')
		buf = jsonw.String(buf, out[i].val)
		out[i].enc = buf[start:len(buf):len(buf)]
	}
	return out, buf
}
