// Package dashboards holds the Grafana and CloudWatch dashboards shipped with
// otelcol-accel, and the model the tests use to read them: every Grafana
// panel's PromQL and every CloudWatch widget's metric search, with Grafana's
// template variables substituted the way Grafana does.
//
// The JSON files are the product; this package only embeds and parses them.
// Its unit tests check them against internal/accelschema (names, labels,
// enumerated values) and the cloudwatch_emf exporter's dimension sets; the
// end-to-end test in test/e2e runs every query against a real Prometheus
// scraping the demo fleet.
package dashboards

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
)

//go:embed *.json
var files embed.FS

// Grafana dashboards, by file name.
var Grafana = []string{"fleet.json", "cost.json", "inference.json"}

// CloudWatch is the CloudWatch dashboard (a DashboardBody).
const CloudWatch = "cloudwatch.json"

// FS is the embedded dashboard files.
func FS() fs.FS { return files }

// Read returns a dashboard file's bytes.
func Read(name string) ([]byte, error) { return files.ReadFile(name) }

// GrafanaDashboard is the part of Grafana's dashboard model the checks read.
type GrafanaDashboard struct {
	UID           string  `json:"uid"`
	Title         string  `json:"title"`
	SchemaVersion int     `json:"schemaVersion"`
	Panels        []Panel `json:"panels"`
	Templating    struct {
		List []Variable `json:"list"`
	} `json:"templating"`
	Time struct {
		From string `json:"from"`
		To   string `json:"to"`
	} `json:"time"`
}

// Panel is a Grafana panel (or row: rows hold their panels when collapsed).
type Panel struct {
	ID          int            `json:"id"`
	Type        string         `json:"type"`
	Title       string         `json:"title"`
	Description string         `json:"description"`
	GridPos     GridPos        `json:"gridPos"`
	Datasource  *DatasourceRef `json:"datasource"`
	Targets     []Target       `json:"targets"`
	FieldConfig struct {
		Defaults struct {
			Unit string `json:"unit"`
		} `json:"defaults"`
	} `json:"fieldConfig"`
	Panels []Panel `json:"panels"`
}

// GridPos places a panel on Grafana's 24-column grid.
type GridPos struct {
	X int `json:"x"`
	Y int `json:"y"`
	W int `json:"w"`
	H int `json:"h"`
}

// DatasourceRef names a data source, here always the ${DS_PROMETHEUS} variable.
type DatasourceRef struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

// Target is one query of a panel.
type Target struct {
	RefID        string         `json:"refId"`
	Expr         string         `json:"expr"`
	LegendFormat string         `json:"legendFormat"`
	Instant      bool           `json:"instant"`
	Range        bool           `json:"range"`
	Format       string         `json:"format"`
	Datasource   *DatasourceRef `json:"datasource"`
}

// Variable is a template variable.
type Variable struct {
	Name       string          `json:"name"`
	Type       string          `json:"type"`
	Label      string          `json:"label"`
	Query      json.RawMessage `json:"query"`
	Definition string          `json:"definition"`
	IncludeAll bool            `json:"includeAll"`
	AllValue   string          `json:"allValue"`
	Multi      bool            `json:"multi"`
	Datasource *DatasourceRef  `json:"datasource"`
}

// LoadGrafana parses an embedded Grafana dashboard.
func LoadGrafana(name string) (*GrafanaDashboard, error) {
	b, err := Read(name)
	if err != nil {
		return nil, err
	}
	var d GrafanaDashboard
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &d, nil
}

// AllPanels returns every panel, including those inside collapsed rows, rows
// themselves included.
func (d *GrafanaDashboard) AllPanels() []Panel {
	var out []Panel
	var walk func([]Panel)
	walk = func(ps []Panel) {
		for _, p := range ps {
			out = append(out, p)
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	return out
}

// Variable returns the template variable with that name.
func (d *GrafanaDashboard) Variable(name string) (Variable, bool) {
	for _, v := range d.Templating.List {
		if v.Name == name {
			return v, true
		}
	}
	return Variable{}, false
}

// AllSelected is the variable values Grafana substitutes with "All" chosen
// in every query variable, on top of the given built-ins ($__interval, …).
func (d *GrafanaDashboard) AllSelected(builtins map[string]string) map[string]string {
	values := make(map[string]string, len(builtins)+len(d.Templating.List))
	for k, v := range builtins {
		values[k] = v
	}
	for _, v := range d.Templating.List {
		if v.Type == "query" {
			values[v.Name] = v.AllValue
		}
	}
	return values
}

// VariableQuery is a query variable's PromQL-ish query: Grafana stores it as
// a string in old dashboards and as {"query": …} in current ones.
func (v Variable) VariableQuery() string {
	var s string
	if json.Unmarshal(v.Query, &s) == nil {
		return s
	}
	var obj struct {
		Query string `json:"query"`
	}
	if json.Unmarshal(v.Query, &obj) == nil && obj.Query != "" {
		return obj.Query
	}
	return v.Definition
}
