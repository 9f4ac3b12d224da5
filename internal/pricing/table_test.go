package pricing

import (
	"math"
	"strings"
	"testing"
)

func mustParseCSV(t *testing.T, name, text string) []parsedRow {
	t.Helper()
	rows, err := ParseCSV(name, strings.NewReader(text))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return rows
}

func TestOverridesAndAdditions(t *testing.T) {
	bundled, err := bundledRows()
	if err != nil {
		t.Fatal(err)
	}
	user := mustParseCSV(t, "user.csv", `instance_type,region,price_per_hour,price_factor,accelerator_count,accelerator_model,accelerator_memory_gb
# spot for p5 in the default region: only the factor changes
p5.48xlarge,,,0.4,,,
# a region the bundled table does not have
g6e.xlarge,eu-west-1,2.2,,1,L40S,48
`)
	table, err := Build(Options{}, bundled, user)
	if err != nil {
		t.Fatal(err)
	}
	p5, m := table.Lookup("p5.48xlarge", "us-east-1", "")
	if m != ExactMatch || math.Abs(p5.AcceleratorHourly()-55.04/8*0.4) > 1e-9 {
		t.Errorf("p5 spot: got %v (%v), want %v", p5.AcceleratorHourly(), m, 55.04/8*0.4)
	}
	if p5.AcceleratorModel != "H100" || p5.Source == "" || p5.Origin != "user.csv:3" {
		t.Errorf("an override keeps the fields it does not set: %+v", p5)
	}
	eu, m := table.Lookup("g6e.xlarge", "eu-west-1", "")
	if m != ExactMatch || eu.AcceleratorHourly() != 2.2 {
		t.Errorf("eu-west-1 row: %v %v", eu.AcceleratorHourly(), m)
	}
	// A region the table does not price falls back to the default region.
	fb, m := table.Lookup("g5.xlarge", "ap-south-1", "")
	if m != RegionFallback || fb.AcceleratorHourly() != 1.006 {
		t.Errorf("fallback: %v %v", fb.AcceleratorHourly(), m)
	}
	if _, m := table.Lookup("x9.huge", "us-east-1", "NVIDIA H100 80GB HBM3"); m != NoMatch {
		t.Errorf("unknown instance type without a model row: got %v", m)
	}
}

func TestTablePriceFactorAndPerAcceleratorRows(t *testing.T) {
	user := mustParseCSV(t, "onprem.csv", `instance_type,region,price_per_accelerator_hour,accelerator_model,accelerator_memory_gb
*,dc1,2.10,H100,80
*,,0.90,L4,24
*,,1.50,L40S,48
dgx-a100,dc1,1.75,A100,80
`)
	table, err := Build(Options{DefaultRegion: "dc1", PriceFactor: 0.5, WithoutBundled: true}, user)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		instanceType, region, model string
		want                        float64
		match                       Match
	}{
		{"", "dc1", "NVIDIA H100 80GB HBM3", 1.05, ModelMatch},
		{"", "", "NVIDIA L4", 0.45, ModelMatch},
		{"", "", "NVIDIA L40S", 0.75, ModelMatch},
		{"unknown", "dc2", "NVIDIA L40S", 0.75, ModelMatch},
		{"dgx-a100", "", "anything", 0.875, ExactMatch},
		{"", "", "NVIDIA A10G", 0, NoMatch},
	}
	for _, tt := range tests {
		r, m := table.Lookup(tt.instanceType, tt.region, tt.model)
		if m != tt.match || math.Abs(r.AcceleratorHourly()-tt.want) > 1e-9 {
			t.Errorf("Lookup(%q,%q,%q) = %v %v, want %v %v", tt.instanceType, tt.region, tt.model, r.AcceleratorHourly(), m, tt.want, tt.match)
		}
	}
}

func TestSameModelCheapestFirst(t *testing.T) {
	table, err := Bundled()
	if err != nil {
		t.Fatal(err)
	}
	g6e, _ := table.Lookup("g6e.48xlarge", "", "")
	rows := table.SameModel(g6e)
	if len(rows) != 3 || rows[0].InstanceType != "g6e.xlarge" || rows[2].InstanceType != "g6e.48xlarge" {
		t.Fatalf("L40S rows cheapest first: %v", rows)
	}
	a100, _ := table.Lookup("p4de.24xlarge", "", "")
	rows = table.SameModel(a100)
	if len(rows) != 2 || rows[0].InstanceType != "p4d.24xlarge" {
		t.Fatalf("A100 rows: %v", rows)
	}
}

func TestContainsWord(t *testing.T) {
	for _, tt := range []struct {
		h, n string
		want bool
	}{
		{"NVIDIA L4", "L4", true},
		{"NVIDIA L40S", "L4", false},
		{"NVIDIA L40S", "l40s", true},
		{"NVIDIA A100-SXM4-80GB", "A100", true},
		{"NVIDIA A1000", "A100", false},
		{"Tesla T4", "T4", true},
		{"xA100 A100", "A100", true},
		{"", "A100", false},
		{"A100", "", false},
	} {
		if got := containsWord(tt.h, tt.n); got != tt.want {
			t.Errorf("containsWord(%q, %q) = %v", tt.h, tt.n, got)
		}
	}
}
