package accelschema

import "sync"

var (
	indexOnce   sync.Once
	metricIndex map[string]*MetricDef
	attrIndex   map[string]*AttributeDef
)

func buildIndex() {
	metricIndex = make(map[string]*MetricDef, len(Metrics))
	for i := range Metrics {
		metricIndex[Metrics[i].Name] = &Metrics[i]
	}
	attrIndex = make(map[string]*AttributeDef, len(Attributes))
	for i := range Attributes {
		attrIndex[Attributes[i].Key] = &Attributes[i]
	}
}

// LookupMetric returns the definition of a registered metric.
func LookupMetric(name string) (MetricDef, bool) {
	indexOnce.Do(buildIndex)
	m, ok := metricIndex[name]
	if !ok {
		return MetricDef{}, false
	}
	return *m, true
}

// MustMetric returns the definition of a metric a component emits by a
// constant name. A name missing from the registry is a programming error
// that the component's own tests hit at init, so it panics, naming the
// component (who) and the metric.
func MustMetric(who, name string) MetricDef {
	d, ok := LookupMetric(name)
	if !ok {
		panic(who + ": metric " + name + " is not registered in internal/accelschema")
	}
	return d
}

// LookupAttribute returns the definition of a registered attribute key.
func LookupAttribute(key string) (AttributeDef, bool) {
	indexOnce.Do(buildIndex)
	a, ok := attrIndex[key]
	if !ok {
		return AttributeDef{}, false
	}
	return *a, true
}

// Enums lists every enum referenced by an attribute, in registry order.
func Enums() []Enum {
	seen := map[string]bool{}
	var out []Enum
	for _, a := range Attributes {
		if a.Enum != nil && !seen[a.Enum.Name] {
			seen[a.Enum.Name] = true
			out = append(out, *a.Enum)
		}
	}
	return out
}
