package accelschema

import (
	"strings"
	"testing"
)

func TestMustMetricReturnsTheRegisteredDefinition(t *testing.T) {
	got := MustMetric("test", MetricCost)
	want, ok := LookupMetric(MetricCost)
	if !ok {
		t.Fatalf("%s is not registered", MetricCost)
	}
	if got.Name != want.Name || got.Unit != want.Unit || got.Brief != want.Brief {
		t.Fatalf("MustMetric(%q) = %+v, want %+v", MetricCost, got, want)
	}
}

func TestMustMetricPanicsNamingTheComponentAndTheMetric(t *testing.T) {
	defer func() {
		msg, _ := recover().(string)
		if !strings.Contains(msg, "accelerator_nothing") || !strings.Contains(msg, "no.such.metric") {
			t.Fatalf("panic %q does not name the component and the metric", msg)
		}
	}()
	MustMetric("accelerator_nothing", "no.such.metric")
	t.Fatal("MustMetric did not panic for an unregistered metric")
}
