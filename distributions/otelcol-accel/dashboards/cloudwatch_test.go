package dashboards

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/otelcol-accel/otelcol-accel/exporter/emfexporter"
	as "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

// The CloudWatch dashboard must find data whichever of the two shipped
// setups writes it: the exporter's defaults (the demo, a minimal config) and
// distributions/otelcol-accel/config/cloudwatch-emf.yaml (which narrows cost
// and inference metrics with metric_declarations). So every search's
// dimension set must be one both produce for that metric.

func defaultEMFConfig() *emfexporter.Config {
	return emfexporter.NewFactory().CreateDefaultConfig().(*emfexporter.Config)
}

func shippedEMFConfig(t *testing.T) *emfexporter.Config {
	t.Helper()
	conf, err := confmaptest.LoadConf(filepath.Join("..", "config", "cloudwatch-emf.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	exporters, err := conf.Sub("exporters")
	if err != nil {
		t.Fatal(err)
	}
	sub, err := exporters.Sub("cloudwatch_emf")
	if err != nil {
		t.Fatal(err)
	}
	cfg := defaultEMFConfig()
	if err := sub.Unmarshal(cfg); err != nil {
		t.Fatalf("cloudwatch-emf.yaml: %v", err)
	}
	return cfg
}

// emfSets returns the dimension sets the exporter configuration gives a
// metric: the union of the sets of every declaration selecting it, else the
// default sets.
func emfSets(t *testing.T, cfg *emfexporter.Config, metric string) [][]string {
	t.Helper()
	var sets [][]string
	for _, d := range cfg.MetricDeclarations {
		for _, sel := range d.MetricNameSelectors {
			re, err := regexp.Compile(sel)
			if err != nil {
				t.Fatalf("selector %q: %v", sel, err)
			}
			if re.MatchString(metric) {
				sets = append(sets, d.DimensionSets...)
				break
			}
		}
	}
	if sets == nil {
		sets = cfg.DimensionSets
	}
	return sets
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// checkSearchAgainst explains why cfg would not produce s's dimension set,
// or returns "".
func checkSearchAgainst(t *testing.T, cfg *emfexporter.Config, s MetricSearch, m as.MetricDef) string {
	configured := map[string]bool{}
	for _, d := range cfg.Dimensions {
		configured[d.Name] = true
	}
	var base, appended []string
	for _, d := range s.Dimensions {
		if configured[d] {
			base = append(base, d)
		} else {
			appended = append(appended, d)
		}
	}
	for _, a := range appended {
		if !cfg.DatapointDimensions.Enabled || slices.Contains(cfg.DatapointDimensions.Exclude, a) {
			return fmt.Sprintf("%s is not a dimension the exporter appends", a)
		}
		if !slices.Contains(m.Attributes, a) {
			return fmt.Sprintf("%s is neither a configured dimension nor a data point attribute of %s", a, m.Name)
		}
	}
	// The exporter appends every data point attribute a point has, so a
	// search that leaves one out finds nothing for this metric.
	for _, a := range m.Attributes {
		if !slices.Contains(appended, a) && !slices.Contains(cfg.DatapointDimensions.Exclude, a) && !optionalAttribute(m.Name, a) {
			return fmt.Sprintf("every %s point carries %s, so the set needs it", m.Name, a)
		}
	}
	for _, set := range emfSets(t, cfg, m.Name) {
		if sameSet(set, base) {
			return ""
		}
	}
	return fmt.Sprintf("%v is not one of its dimension sets %v", base, emfSets(t, cfg, m.Name))
}

// optionalAttribute: data point attributes only some points of a metric
// carry (the XID code only on XID errors; the engine only on GPU
// utilization, not on NeuronCores; the memory category only on Neuron; the
// consumer pod only on dcgm-exporter's per-pod points that no copy took).
func optionalAttribute(metric, attr string) bool {
	switch {
	case metric == as.MetricErrors && attr == as.AttrXID,
		metric == as.MetricGPUUtilization && attr == as.AttrHWGPUTask,
		metric == as.MetricGPUMemoryUsage && attr == as.AttrMemoryCategory,
		metric == as.MetricRequests && attr == as.AttrFinishReason,
		(metric == as.MetricGPUUtilization || metric == as.MetricGPUMemoryUsage) && attr == as.AttrConsumerPod:
		return true
	}
	return false
}

var cloudWatchStat = regexp.MustCompile(`^(SampleCount|Average|Sum|Minimum|Maximum|p(\d{1,2}(\.\d+)?|100))$`)

func TestCloudWatchDashboard(t *testing.T) {
	d, err := LoadCloudWatch()
	if err != nil {
		t.Fatal(err)
	}
	defaults := defaultEMFConfig()
	shipped := shippedEMFConfig(t)
	if shipped.Namespace != "${env:OTELCOL_ACCEL_EMF_NAMESPACE:-OtelcolAccel}" {
		t.Errorf("cloudwatch-emf.yaml namespace is %q: update this test and the dashboard", shipped.Namespace)
	}
	checkWidgetLayout(t, d)
	searches := 0
	for _, w := range d.Widgets {
		where := fmt.Sprintf("widget %q", w.Properties.Title)
		switch w.Type {
		case "text":
			if w.Properties.Markdown == "" {
				t.Errorf("text widget at (%d,%d) is empty", w.X, w.Y)
			}
			continue
		case "metric":
		default:
			t.Errorf("%s: unexpected widget type %q", where, w.Type)
			continue
		}
		if w.Properties.Title == "" || w.Properties.Region == "" || w.Properties.View == "" {
			t.Errorf("%s: a metric widget needs title, region and view", where)
		}
		list, err := w.Searches()
		if err != nil {
			t.Error(err)
			continue
		}
		if len(list) == 0 {
			t.Errorf("%s: no metrics", where)
		}
		ids := map[string]bool{}
		for _, s := range list {
			searches++
			if ids[s.ID] || !regexp.MustCompile(`^[a-z][a-zA-Z0-9_]*$`).MatchString(s.ID) {
				t.Errorf("%s: id %q repeated or not a valid CloudWatch id", where, s.ID)
			}
			ids[s.ID] = true
			if s.Namespace != defaults.Namespace {
				t.Errorf("%s: namespace %q, want the exporter's %q", where, s.Namespace, defaults.Namespace)
			}
			m, ok := as.LookupMetric(s.MetricName)
			if !ok {
				t.Errorf("%s: %s is not a registered metric", where, s.MetricName)
				continue
			}
			if !cloudWatchStat.MatchString(s.Stat) {
				t.Errorf("%s: %q is not a CloudWatch statistic", where, s.Stat)
			}
			if msg := statFits(m, s.Stat); msg != "" {
				t.Errorf("%s: %s", where, msg)
			}
			if s.Period < 60 || s.Period%60 != 0 {
				t.Errorf("%s: period %d: use whole minutes (only requests.running/waiting are high resolution)", where, s.Period)
			}
			for cfgName, cfg := range map[string]*emfexporter.Config{"the exporter's defaults": defaults, "cloudwatch-emf.yaml": shipped} {
				if msg := checkSearchAgainst(t, cfg, s, m); msg != "" {
					t.Errorf("%s: %s on %v: with %s, %s", where, s.MetricName, s.Dimensions, cfgName, msg)
				}
			}
		}
	}
	if searches < 10 {
		t.Errorf("only %d searches", searches)
	}
}

// statFits rejects statistics that mean nothing for the instrument: EMF
// sends counters as deltas (sum them), gauges and levels as values
// (average or extremes), histograms as distributions (percentiles).
func statFits(m as.MetricDef, stat string) string {
	percentile := strings.HasPrefix(stat, "p")
	switch m.Instrument {
	case as.Counter:
		if stat != "Sum" && stat != "SampleCount" {
			return fmt.Sprintf("%s is a counter sent as deltas: use Sum, not %s", m.Name, stat)
		}
	case as.Gauge, as.UpDownCounter:
		if stat == "Sum" || stat == "SampleCount" || percentile {
			return fmt.Sprintf("%s is a level: use Average, Minimum or Maximum, not %s", m.Name, stat)
		}
	case as.Histogram:
		if stat == "Minimum" || stat == "Maximum" {
			return ""
		}
	}
	return ""
}

func checkWidgetLayout(t *testing.T, d *CloudWatchDashboard) {
	type cell struct{ x, y int }
	owner := map[cell]string{}
	for i, w := range d.Widgets {
		name := fmt.Sprintf("widget %d %q", i, w.Properties.Title)
		if w.Width <= 0 || w.Height <= 0 || w.X < 0 || w.X+w.Width > 24 {
			t.Errorf("%s: position %d,%d size %dx%d is outside the 24-column grid", name, w.X, w.Y, w.Width, w.Height)
			continue
		}
		for x := w.X; x < w.X+w.Width; x++ {
			for y := w.Y; y < w.Y+w.Height; y++ {
				if other, taken := owner[cell{x, y}]; taken {
					t.Errorf("%s overlaps %s", name, other)
					return
				}
				owner[cell{x, y}] = name
			}
		}
	}
}
