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
