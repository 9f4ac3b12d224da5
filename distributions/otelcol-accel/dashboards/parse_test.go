package dashboards

import (
	"slices"
	"strings"
	"testing"
)

func TestInterpolate(t *testing.T) {
	values := map[string]string{"team": ".*", "__rate_interval": "1m", "model": "a|b"}
	for _, tc := range []struct{ in, want, err string }{
		{in: `rate(x{t=~"$team"}[$__rate_interval])`, want: `rate(x{t=~".*"}[1m])`},
		{in: `x{t=~"${team}", m=~"${model:regex}"}`, want: `x{t=~".*", m=~"a|b"}`},
		{in: `x{t=~"[[team]]"}`, want: `x{t=~".*"}`},
		// label_replace group references stay.
		{in: `label_replace(x, "d", "$1", "s", "(.+)")`, want: `label_replace(x, "d", "$1", "s", "(.+)")`},
		{in: `x{t=~"$teams"}`, err: "no value for $teams"},
		{in: `x[$__range]`, err: "no value for $__range"},
	} {
		got, err := Interpolate(tc.in, values)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.in, err, tc.err)
			}
		case err != nil:
			t.Errorf("%q: %v", tc.in, err)
		case got != tc.want:
			t.Errorf("%q: got %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestParseLabelValues(t *testing.T) {
	sel, label, err := ParseLabelValues(`label_values(hw_status{k8s_cluster_name=~"$cluster"},k8s_node_name)`)
	if err != nil || sel != `hw_status{k8s_cluster_name=~"$cluster"}` || label != "k8s_node_name" {
		t.Errorf("got %q %q %v", sel, label, err)
	}
	for _, bad := range []string{"", "label_values(hw_status)", "label_names()", "query_result(up)", "label_values(x, a b)"} {
		if _, _, err := ParseLabelValues(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestParseSearch(t *testing.T) {
	s, err := ParseSearch(`SEARCH('{OtelcolAccel,Cluster,"accelerator.waste.reason"} MetricName="accelerator.waste"', 'Sum', 3600)`)
	if err != nil {
		t.Fatal(err)
	}
	if s.Namespace != "OtelcolAccel" || !slices.Equal(s.Dimensions, []string{"Cluster", "accelerator.waste.reason"}) ||
		s.MetricName != "accelerator.waste" || s.Stat != "Sum" || s.Period != 3600 {
		t.Errorf("got %+v", s)
	}
	for _, bad := range []string{
		``,
		`SEARCH('{OtelcolAccel,Cluster} accelerator.cost', 'Sum', 60)`,                    // no MetricName=
		`SEARCH('{OtelcolAccel,Cluster,hw.state} MetricName="hw.status"', 'Average', 60)`, // dotted name unquoted
		`SEARCH('{OtelcolAccel,,Cluster} MetricName="hw.status"', 'Average', 60)`,         // empty name
		`SEARCH('{OtelcolAccel,Cluster} MetricName="hw.status"', 'Average')`,              // no period
		`METRICS()`,
	} {
		if _, err := ParseSearch(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func FuzzParseSearch(f *testing.F) {
	f.Add(`SEARCH('{OtelcolAccel,Cluster,"hw.state"} MetricName="hw.status"', 'Average', 60)`)
	f.Add(`SEARCH('{A} MetricName=""', '', 0)`)
	f.Fuzz(func(t *testing.T, expr string) {
		s, err := ParseSearch(expr)
		if err != nil {
			return
		}
		if s.Namespace == "" || s.MetricName == "" || s.Stat == "" {
			t.Fatalf("%q parsed to %+v", expr, s)
		}
		for _, d := range s.Dimensions {
			if d == "" {
				t.Fatalf("%q: empty dimension", expr)
			}
		}
	})
}

func FuzzInterpolate(f *testing.F) {
	f.Add(`rate(x{t=~"$team"}[$__rate_interval]) ${team:csv} [[team]] $1`)
	f.Add(`x{t=~"$teams"}`)
	known := map[string]string{"team": "T", "__rate_interval": "1m"}
	f.Fuzz(func(t *testing.T, q string) {
		_, err := Interpolate(q, known)
		unknown := false
		for _, m := range variableRef.FindAllStringSubmatch(q, -1) {
			name := m[1] + m[2] + m[3]
			if _, ok := known[name]; !ok && !isDigits(name) {
				unknown = true
			}
		}
		if unknown != (err != nil) {
			t.Fatalf("%q: unknown reference %v, error %v", q, unknown, err)
		}
	})
}
