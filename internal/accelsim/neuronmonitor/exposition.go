package neuronmonitor

import (
	"math"
	"slices"
	"strconv"
	"strings"
)

// registry is the part of prometheus_client that neuron-monitor-prometheus.py
// uses: gauges, counters and infos with labels, kept in registration order
// and rendered as generate_latest renders them (text format 0.0.4): labels
// sorted, values as Python prints floats, each counter followed by its
// `_created` gauge family.
type registry struct {
	families []*family
	byName   map[string]*family
}

type familyType int

const (
	gaugeFamily familyType = iota
	counterFamily
	infoFamily
)

type family struct {
	name, help string
	typ        familyType
	series     []*series // in creation order, as prometheus_client keeps them
	byKey      map[string]*series
}

type series struct {
	labels  []label // sorted by name
	value   float64
	created float64 // unix seconds; counters only
}

type label struct{ name, value string }

func newRegistry() *registry { return &registry{byName: map[string]*family{}} }

// family returns the named family, registering it on first use: the script
// creates its Gauge and Counter objects when a group is first processed.
func (r *registry) family(name, help string, typ familyType) *family {
	if f := r.byName[name]; f != nil {
		return f
	}
	f := &family{name: name, help: help, typ: typ, byKey: map[string]*series{}}
	r.families = append(r.families, f)
	r.byName[name] = f
	return f
}

// labels is `.labels(**labels)`: the child series of those label values,
// created (with its creation time) when new.
func (f *family) labels(now float64, ls ...label) *series {
	sorted := slices.Clone(ls)
	slices.SortFunc(sorted, func(a, b label) int { return strings.Compare(a.name, b.name) })
	var key strings.Builder
	for _, l := range sorted {
		key.WriteString(l.name)
		key.WriteByte(0)
		key.WriteString(l.value)
		key.WriteByte(0)
	}
	if s := f.byKey[key.String()]; s != nil {
		return s
	}
	s := &series{labels: sorted, created: now}
	f.byKey[key.String()] = s
	f.series = append(f.series, s)
	return s
}

// clear drops every series, as the script does to its gauges and counters
// when no runtime is left (`metrics._metrics.clear()`).
func (f *family) clear() {
	f.series = nil
	clear(f.byKey)
}

// render appends the page.
func (r *registry) render(b []byte) []byte {
	b = append(b, defaultCollectors...)
	for _, f := range r.families {
		name, typ := f.name, "gauge"
		switch f.typ {
		case counterFamily:
			name, typ = f.name+"_total", "counter"
		case infoFamily:
			name = f.name + "_info"
		}
		b = header(b, name, f.help, typ)
		for _, s := range f.series {
			b = sample(b, name, s.labels, s.value)
		}
		if f.typ == counterFamily && len(f.series) > 0 {
			b = header(b, f.name+"_created", f.help, "gauge")
			for _, s := range f.series {
				b = sample(b, f.name+"_created", s.labels, s.created)
			}
		}
	}
	return b
}

func header(b []byte, name, help, typ string) []byte {
	b = append(b, "# HELP "...)
	b = append(b, name...)
	b = append(b, ' ')
	b = append(b, strings.NewReplacer(`\`, `\\`, "\n", `\n`).Replace(help)...)
	b = append(b, "\n# TYPE "...)
	b = append(b, name...)
	b = append(b, ' ')
	b = append(b, typ...)
	return append(b, '\n')
}

var labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)

func sample(b []byte, name string, labels []label, v float64) []byte {
	b = append(b, name...)
	if len(labels) > 0 {
		b = append(b, '{')
		for i, l := range labels {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, l.name...)
			b = append(b, `="`...)
			b = append(b, labelEscaper.Replace(l.value)...)
			b = append(b, '"')
		}
		b = append(b, '}')
	}
	b = append(b, ' ')
	b = append(b, floatToGoString(v)...)
	return append(b, '\n')
}

// floatToGoString is prometheus_client.utils.floatToGoString: Python's
// repr, with numbers of seven or more integer digits written as
// `<mantissa>e+0<exponent>` (so 1.6e10 comes out as "1.6e+010", a quirk
// that parsers must and do accept).
func floatToGoString(d float64) string {
	switch {
	case math.IsInf(d, 1):
		return "+Inf"
	case math.IsInf(d, -1):
		return "-Inf"
	case math.IsNaN(d):
		return "NaN"
	}
	s := pyRepr(d)
	dot := strings.IndexByte(s, '.')
	if d > 0 && dot > 6 {
		mantissa := strings.TrimRight(s[:1]+"."+s[1:dot]+s[dot+1:], "0.")
		return mantissa + "e+0" + strconv.Itoa(dot-1)
	}
	return s
}

// pyRepr is Python's repr of a float: the shortest digits that read back
// exactly, positional for exponents from -4 to 15 (always with a fraction
// part), else scientific with at least two exponent digits.
func pyRepr(f float64) string {
	if f == 0 {
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // "-1.2345e+06"
	sign := ""
	if e[0] == '-' {
		sign, e = "-", e[1:]
	}
	mant, expText, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expText)
	digits := strings.Replace(mant, ".", "", 1)
	if exp < -4 || exp >= 16 {
		m := digits[:1]
		if len(digits) > 1 {
			m += "." + digits[1:]
		}
		es := "+"
		if exp < 0 {
			es, exp = "-", -exp
		}
		return sign + m + "e" + es + leftPad(strconv.Itoa(exp), 2)
	}
	if exp < 0 {
		return sign + "0." + strings.Repeat("0", -exp-1) + digits
	}
	if len(digits) <= exp+1 {
		return sign + digits + strings.Repeat("0", exp+1-len(digits)) + ".0"
	}
	return sign + digits[:exp+1] + "." + digits[exp+1:]
}

func leftPad(s string, n int) string {
	if len(s) >= n {
		return s
	}
	return strings.Repeat("0", n-len(s)) + s
}

// defaultCollectors is what prometheus_client's own collectors (gc,
// platform, process) put at the top of every page; the values are those of
// a freshly started script.
const defaultCollectors = `# HELP python_gc_objects_collected_total Objects collected during gc
# TYPE python_gc_objects_collected_total counter
python_gc_objects_collected_total{generation="0"} 1284.0
python_gc_objects_collected_total{generation="1"} 310.0
python_gc_objects_collected_total{generation="2"} 0.0
# HELP python_gc_objects_uncollectable_total Uncollectable objects found during GC
# TYPE python_gc_objects_uncollectable_total counter
python_gc_objects_uncollectable_total{generation="0"} 0.0
python_gc_objects_uncollectable_total{generation="1"} 0.0
python_gc_objects_uncollectable_total{generation="2"} 0.0
# HELP python_gc_collections_total Number of times this generation was collected
# TYPE python_gc_collections_total counter
python_gc_collections_total{generation="0"} 96.0
python_gc_collections_total{generation="1"} 8.0
python_gc_collections_total{generation="2"} 0.0
# HELP python_info Python platform information
# TYPE python_info gauge
python_info{implementation="CPython",major="3",minor="10",patchlevel="12",version="3.10.12"} 1.0
# HELP process_virtual_memory_bytes Virtual memory size in bytes.
# TYPE process_virtual_memory_bytes gauge
process_virtual_memory_bytes 3.4258944e+08
# HELP process_resident_memory_bytes Resident memory size in bytes.
# TYPE process_resident_memory_bytes gauge
process_resident_memory_bytes 2.8295168e+07
# HELP process_open_fds Number of open file descriptors.
# TYPE process_open_fds gauge
process_open_fds 7.0
# HELP process_max_fds Maximum number of open file descriptors.
# TYPE process_max_fds gauge
process_max_fds 1.048576e+06
`
