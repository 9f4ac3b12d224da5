package dashboards

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/otelcol-accel/otelcol-accel/distributions/otelcol-accel/dashboards/promschema"
)

const dsUID = "${DS_PROMETHEUS}"

// builtinValues stand in for Grafana's built-in variables: the dashboards'
// default range and a rate window several scrape intervals wide.
var builtinValues = map[string]string{
	"__rate_interval": "1m",
	"__interval":      "15s",
	"__interval_ms":   "15000",
	"__range":         "6h",
	"__range_s":       "21600",
	"__range_ms":      "21600000",
}

func loadAll(t *testing.T) map[string]*GrafanaDashboard {
	t.Helper()
	out := map[string]*GrafanaDashboard{}
	for _, name := range Grafana {
		d, err := LoadGrafana(name)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = d
	}
	return out
}

func TestEveryDashboardFileIsListed(t *testing.T) {
	entries, err := files.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != CloudWatch && !slices.Contains(Grafana, e.Name()) {
			t.Errorf("%s is embedded but neither in Grafana nor CloudWatch: the tests would not check it", e.Name())
		}
	}
}

func TestGrafanaDashboardStructure(t *testing.T) {
	uids := map[string]string{}
	for name, d := range loadAll(t) {
		t.Run(name, func(t *testing.T) {
			if !strings.HasPrefix(d.UID, "otelcol-accel-") || len(d.UID) > 40 {
				t.Errorf("uid %q: want otelcol-accel-… (at most 40 characters)", d.UID)
			}
			if other, dup := uids[d.UID]; dup {
				t.Errorf("uid %q also used by %s", d.UID, other)
			}
			uids[d.UID] = name
			if d.SchemaVersion < 39 {
				t.Errorf("schemaVersion %d: export from a current Grafana (≥ 39)", d.SchemaVersion)
			}
			checkVariables(t, d)
			checkPanels(t, d)
			checkLayout(t, d)
		})
	}
}

func checkVariables(t *testing.T, d *GrafanaDashboard) {
	ds, ok := d.Variable("DS_PROMETHEUS")
	if !ok || ds.Type != "datasource" || string(ds.Query) != `"prometheus"` {
		t.Errorf("want a datasource variable DS_PROMETHEUS of type prometheus, got %+v", ds)
	}
	used := strings.Builder{}
	for _, p := range d.AllPanels() {
		for _, tg := range p.Targets {
			used.WriteString(tg.Expr + "\n")
		}
	}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		used.WriteString(v.VariableQuery() + "\n")
		if v.Datasource == nil || v.Datasource.UID != dsUID {
			t.Errorf("variable %s: datasource must be %s", v.Name, dsUID)
		}
		if !v.IncludeAll || v.AllValue != ".*" || !v.Multi {
			t.Errorf("variable %s: want multi-value with All = .* (so an unset label matches too)", v.Name)
		}
		if _, _, err := ParseLabelValues(v.VariableQuery()); err != nil {
			t.Errorf("variable %s: %v", v.Name, err)
		}
		if v.Definition != v.VariableQuery() {
			t.Errorf("variable %s: definition %q differs from query %q", v.Name, v.Definition, v.VariableQuery())
		}
	}
	for _, v := range d.Templating.List {
		if v.Type == "query" && !strings.Contains(used.String(), "$"+v.Name) {
			t.Errorf("variable %s is never used", v.Name)
		}
	}
}

func checkPanels(t *testing.T, d *GrafanaDashboard) {
	ids := map[int]bool{}
	titles := map[string]bool{}
	values := d.AllSelected(builtinValues)
	for _, p := range d.AllPanels() {
		if ids[p.ID] {
			t.Errorf("panel id %d used twice", p.ID)
		}
		ids[p.ID] = true
		if p.Type == "row" {
			continue
		}
		where := fmt.Sprintf("panel %q", p.Title)
		if titles[p.Title] {
			t.Errorf("%s: two panels with this title", where)
		}
		titles[p.Title] = true
		if p.Title == "" || p.Description == "" {
			t.Errorf("%s: every panel needs a title and a description", where)
		}
		if p.Datasource == nil || p.Datasource.UID != dsUID || p.Datasource.Type != "prometheus" {
			t.Errorf("%s: datasource must be prometheus %s", where, dsUID)
		}
		if len(p.Targets) == 0 {
			t.Errorf("%s: no queries", where)
		}
		if p.FieldConfig.Defaults.Unit == "" {
			t.Errorf("%s: no unit", where)
		}
		refs := map[string]bool{}
		for _, tg := range p.Targets {
			if refs[tg.RefID] || tg.RefID == "" {
				t.Errorf("%s: refId %q missing or repeated", where, tg.RefID)
			}
			refs[tg.RefID] = true
			if tg.Datasource == nil || tg.Datasource.UID != dsUID {
				t.Errorf("%s %s: datasource must be %s", where, tg.RefID, dsUID)
			}
			if strings.TrimSpace(tg.Expr) == "" {
				t.Errorf("%s %s: empty query", where, tg.RefID)
			}
			if _, err := Interpolate(tg.Expr, values); err != nil {
				t.Errorf("%s %s: %v", where, tg.RefID, err)
			}
			// Tables, bars and pies show one instant, graphs a range;
			// single values may show either.
			switch p.Type {
			case "table", "bargauge", "piechart":
				if !tg.Instant || tg.Range {
					t.Errorf("%s %s: a %s panel needs an instant query", where, tg.RefID, p.Type)
				}
			case "timeseries":
				if tg.Instant || !tg.Range {
					t.Errorf("%s %s: a time series panel needs a range query", where, tg.RefID)
				}
			}
		}
	}
}

// checkLayout rejects panels that overlap or stick out of the 24 columns.
func checkLayout(t *testing.T, d *GrafanaDashboard) {
	type cell struct{ x, y int }
	owner := map[cell]string{}
	for _, p := range d.AllPanels() {
		g := p.GridPos
		if g.W <= 0 || g.H <= 0 || g.X < 0 || g.X+g.W > 24 {
			t.Errorf("panel %q: gridPos %+v is outside the 24-column grid", p.Title, g)
			continue
		}
		for x := g.X; x < g.X+g.W; x++ {
			for y := g.Y; y < g.Y+g.H; y++ {
				if other, taken := owner[cell{x, y}]; taken {
					t.Errorf("panel %q overlaps %q at (%d,%d)", p.Title, other, x, y)
					return
				}
				owner[cell{x, y}] = p.Title
			}
		}
	}
}

// Every metric, label and enumerated value a query uses must be one the
// collector emits (internal/accelschema, translated as the prometheus
// exporter does; see promschema).
func TestGrafanaQueriesUseRegisteredNames(t *testing.T) {
	checker, err := promschema.NewChecker()
	if err != nil {
		t.Fatal(err)
	}
	for name, d := range loadAll(t) {
		values := d.AllSelected(builtinValues)
		var queries []string
		for _, v := range d.Templating.List {
			if v.Type == "query" {
				sel, label, _ := ParseLabelValues(v.VariableQuery())
				queries = append(queries, sel)
				if !checker.HasLabel(label) {
					t.Errorf("%s variable %s: label %s is not a registered attribute", name, v.Name, label)
				}
			}
		}
		for _, p := range d.AllPanels() {
			for _, tg := range p.Targets {
				queries = append(queries, tg.Expr)
			}
		}
		for _, q := range queries {
			expr, err := Interpolate(q, values)
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			for _, err := range checker.Check(expr) {
				t.Errorf("%s: %v", name, err)
			}
		}
	}
}
