package dashboards

import (
	"fmt"
	"regexp"
	"strings"
)

// Grafana's variable syntaxes: $name, ${name}, ${name:format}, [[name]].
var variableRef = regexp.MustCompile(`\$\{(\w+)(?::[^}]*)?\}|\$(\w+)|\[\[(\w+)(?::[^\]]*)?\]\]`)

// Interpolate substitutes template variables in a query as Grafana would
// before sending it, from values (dashboard variables and built-ins such as
// __rate_interval, __range). A reference to anything not in values is an
// error, so a dashboard cannot use a variable the test did not think of;
// $1, $2… are left alone (they are label_replace group references, which
// Grafana leaves alone too).
func Interpolate(query string, values map[string]string) (string, error) {
	var missing []string
	out := variableRef.ReplaceAllStringFunc(query, func(ref string) string {
		m := variableRef.FindStringSubmatch(ref)
		name := m[1] + m[2] + m[3]
		if v, ok := values[name]; ok {
			return v
		}
		if isDigits(name) {
			return ref
		}
		missing = append(missing, ref)
		return ref
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("no value for %s in %q", strings.Join(missing, ", "), query)
	}
	return out, nil
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

var labelValuesCall = regexp.MustCompile(`^\s*label_values\(\s*(.*?)\s*,\s*(\w+)\s*\)\s*$`)

// ParseLabelValues splits a Prometheus query variable of the form
// label_values(selector, label).
func ParseLabelValues(q string) (selector, label string, err error) {
	m := labelValuesCall.FindStringSubmatch(q)
	if m == nil {
		return "", "", fmt.Errorf("%q is not label_values(selector, label)", q)
	}
	return m[1], m[2], nil
}
