package promschema

import (
	"fmt"
	"slices"
	"strings"

	as "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

// Checker checks queries against the registry's Prometheus names.
type Checker struct {
	series map[string]as.MetricDef
	labels map[string]as.AttributeDef
	// Metrics are names beyond the registry a query may read (recording
	// rules, the collector's own telemetry), each with the labels it has
	// beyond the registry's.
	Metrics map[string][]string
}

// NewChecker builds a Checker over internal/accelschema.
func NewChecker() (*Checker, error) {
	series, err := Series()
	if err != nil {
		return nil, err
	}
	labels, err := Labels()
	if err != nil {
		return nil, err
	}
	return &Checker{series: series, labels: labels, Metrics: map[string][]string{}}, nil
}

// Check returns what is wrong with a query: a metric the collector does not
// emit, a label no registered attribute becomes, a literal that is not a
// value of the label's enumeration. A query that reads no metric is wrong
// too.
func (c *Checker) Check(expr string) []error {
	refs, err := Parse(expr)
	if err != nil {
		return []error{err}
	}
	var errs []error
	if len(refs.Metrics) == 0 {
		errs = append(errs, fmt.Errorf("%q reads no metric", expr))
	}
	var extraLabels []string
	for _, m := range refs.Metrics {
		if _, ok := c.series[m]; ok {
			continue
		}
		if l, ok := c.Metrics[m]; ok {
			extraLabels = append(extraLabels, l...)
			continue
		}
		errs = append(errs, fmt.Errorf("metric %s is not emitted (not a registered metric's Prometheus name) in %q", m, expr))
	}
	for _, l := range refs.Labels {
		if _, ok := c.labels[l]; ok || l == "le" || slices.Contains(BuiltinLabels, l) ||
			slices.Contains(refs.NewLabels, l) || slices.Contains(extraLabels, l) {
			continue
		}
		errs = append(errs, fmt.Errorf("label %s is not a registered attribute in %q", l, expr))
	}
	for _, m := range refs.Matchers {
		if err := c.checkEnumValue(m); err != nil {
			errs = append(errs, fmt.Errorf("%w in %q", err, expr))
		}
	}
	return errs
}

// HasLabel reports whether a label name is a registered attribute's.
func (c *Checker) HasLabel(name string) bool {
	_, ok := c.labels[name]
	return ok
}

// checkEnumValue rejects a literal (or a|b alternation) that is not a value
// of the label's enumeration.
func (c *Checker) checkEnumValue(m Matcher) error {
	a, ok := c.labels[m.Label]
	if !ok || a.Enum == nil || m.Value == "" || strings.HasPrefix(m.Value, ".") {
		return nil
	}
	values := []string{m.Value}
	if m.Op == "=~" || m.Op == "!~" {
		if strings.ContainsAny(m.Value, `.*+?[](){}\^$`) {
			return nil // a real pattern, not a list of values
		}
		values = strings.Split(m.Value, "|")
	}
	for _, v := range values {
		if !a.Enum.Has(v) {
			return fmt.Errorf("%s=%q is not a value of %s", m.Label, v, a.Key)
		}
	}
	return nil
}
