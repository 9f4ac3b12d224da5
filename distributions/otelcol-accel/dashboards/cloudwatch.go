package dashboards

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// CloudWatchDashboard is a CloudWatch DashboardBody (PutDashboard).
type CloudWatchDashboard struct {
	Start          string   `json:"start"`
	PeriodOverride string   `json:"periodOverride"`
	Widgets        []Widget `json:"widgets"`
}

// Widget is one widget of a CloudWatch dashboard.
type Widget struct {
	Type       string           `json:"type"`
	X          int              `json:"x"`
	Y          int              `json:"y"`
	Width      int              `json:"width"`
	Height     int              `json:"height"`
	Properties WidgetProperties `json:"properties"`
}

// WidgetProperties holds what metric and text widgets carry.
type WidgetProperties struct {
	Title    string            `json:"title"`
	View     string            `json:"view"`
	Region   string            `json:"region"`
	Stat     string            `json:"stat"`
	Period   int               `json:"period"`
	Metrics  []json.RawMessage `json:"metrics"`
	Markdown string            `json:"markdown"`
}

// MetricSearch is one SEARCH expression of a metric widget. The dashboards
// here use only the form
//
//	SEARCH('{Namespace,Dim1,"dim.2"} MetricName="name"', 'Stat', Period)
//
// so that the schema (the exact dimension set CloudWatch matches) can be
// checked against what the exporter writes.
type MetricSearch struct {
	ID         string
	Label      string
	Expression string
	Namespace  string
	Dimensions []string
	MetricName string
	Stat       string
	Period     int
}

// LoadCloudWatch parses the embedded CloudWatch dashboard.
func LoadCloudWatch() (*CloudWatchDashboard, error) {
	b, err := Read(CloudWatch)
	if err != nil {
		return nil, err
	}
	var d CloudWatchDashboard
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("%s: %w", CloudWatch, err)
	}
	return &d, nil
}

// Searches returns the widget's metric searches. Every entry of a metric
// widget's metrics array must be a one-element array holding an expression
// object; anything else is an error (a hard-coded metric would pin a
// dimension value such as one cluster's name).
func (w Widget) Searches() ([]MetricSearch, error) {
	var out []MetricSearch
	for i, raw := range w.Properties.Metrics {
		var entry []struct {
			Expression string `json:"expression"`
			ID         string `json:"id"`
			Label      string `json:"label"`
			Period     int    `json:"period"`
		}
		if err := json.Unmarshal(raw, &entry); err != nil || len(entry) != 1 || entry[0].Expression == "" {
			return nil, fmt.Errorf("widget %q: metrics[%d] is not [{\"expression\": \"SEARCH(…)\", …}]: %s", w.Properties.Title, i, raw)
		}
		s, err := ParseSearch(entry[0].Expression)
		if err != nil {
			return nil, fmt.Errorf("widget %q: metrics[%d]: %w", w.Properties.Title, i, err)
		}
		s.ID, s.Label = entry[0].ID, entry[0].Label
		if entry[0].Period != 0 && entry[0].Period != s.Period {
			return nil, fmt.Errorf("widget %q: metrics[%d]: period %d differs from the expression's %d", w.Properties.Title, i, entry[0].Period, s.Period)
		}
		out = append(out, s)
	}
	return out, nil
}

var searchExpr = regexp.MustCompile(`^SEARCH\('\{([^}]*)\}\s+MetricName="([^"]+)"\s*'\s*,\s*'([^']+)'\s*,\s*(\d+)\s*\)$`)

// ParseSearch parses SEARCH('{Namespace,Dims…} MetricName="x"', 'Stat', Period).
func ParseSearch(expr string) (MetricSearch, error) {
	m := searchExpr.FindStringSubmatch(expr)
	if m == nil {
		return MetricSearch{}, fmt.Errorf(`%q is not SEARCH('{Namespace,Dimension,…} MetricName="name"', 'Stat', Period)`, expr)
	}
	schema, err := splitSchema(m[1])
	if err != nil {
		return MetricSearch{}, fmt.Errorf("%q: %w", expr, err)
	}
	period, _ := strconv.Atoi(m[4])
	return MetricSearch{
		Expression: expr,
		Namespace:  schema[0],
		Dimensions: schema[1:],
		MetricName: m[2],
		Stat:       m[3],
		Period:     period,
	}, nil
}

// splitSchema splits the inside of {…}: names separated by commas, a name
// with characters other than letters and digits in double quotes (as
// CloudWatch requires).
func splitSchema(s string) ([]string, error) {
	var out []string
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		quoted := len(part) >= 2 && part[0] == '"' && part[len(part)-1] == '"'
		if quoted {
			part = part[1 : len(part)-1]
		}
		if part == "" {
			return nil, fmt.Errorf("empty name in schema {%s}", s)
		}
		if !quoted && strings.IndexFunc(part, func(r rune) bool { return !isAlnum(r) && r != '/' }) >= 0 {
			return nil, fmt.Errorf("schema name %q needs double quotes", part)
		}
		out = append(out, part)
	}
	return out, nil
}

func isAlnum(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}
