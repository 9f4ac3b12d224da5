package pricing

import (
	"math"
	"strings"
	"testing"
)

// The per-accelerator prices of reference/cost_k8s.md §6.3 ($/accel-h column,
// rounded there to the cent or the tenth of a cent).
var referencePerAccelerator = map[string]float64{
	"p4d.24xlarge": 2.745, "p4de.24xlarge": 3.431, "p5.48xlarge": 6.88, "p5.4xlarge": 6.88,
	"p5en.48xlarge": 7.912, "p6-b200.48xlarge": 14.24, "p6-b300.48xlarge": 17.80,
	"g4dn.xlarge": 0.526, "g4dn.12xlarge": 0.978, "g5.xlarge": 1.006, "g5.12xlarge": 1.418,
	"g5.48xlarge": 2.036, "g6.xlarge": 0.805, "g6.12xlarge": 1.150, "g6.48xlarge": 1.669,
	"g6e.xlarge": 1.861, "g6e.12xlarge": 2.623, "g6e.48xlarge": 3.766, "trn1.32xlarge": 1.344,
	"inf2.xlarge": 0.758, "inf2.24xlarge": 1.082, "inf2.48xlarge": 1.082,
}

func TestBundledTableCoversRequiredFamilies(t *testing.T) {
	table, err := Bundled()
	if err != nil {
		t.Fatalf("bundled table: %v", err)
	}
	families := map[string]bool{}
	for _, r := range table.Rows() {
		families[r.InstanceType[:strings.IndexByte(r.InstanceType, '.')]] = true
		if r.Source == "" || r.Date == "" {
			t.Errorf("%s: every bundled row needs a source and a date", r.InstanceType)
		}
		if r.AcceleratorCount == 0 || r.AcceleratorModel == "" || r.AcceleratorMemoryGB == 0 {
			t.Errorf("%s: needs accelerator count, model and memory", r.InstanceType)
		}
		if r.Region != DefaultRegion {
			t.Errorf("%s: bundled rows are %s prices, got region %q", r.InstanceType, DefaultRegion, r.Region)
		}
	}
	for _, f := range []string{"p4d", "p4de", "p5", "p5en", "p6-b200", "g4dn", "g5", "g6", "g6e", "trn1", "inf2"} {
		if !families[f] {
			t.Errorf("family %s missing from the bundled table", f)
		}
	}
}

func TestBundledPricesMatchReference(t *testing.T) {
	table, err := Bundled()
	if err != nil {
		t.Fatal(err)
	}
	if table.Len() != len(referencePerAccelerator) {
		t.Errorf("bundled table has %d rows, the reference lists %d", table.Len(), len(referencePerAccelerator))
	}
	for it, want := range referencePerAccelerator {
		r, m := table.Lookup(it, "us-east-1", "")
		if m != ExactMatch {
			t.Errorf("%s: not found", it)
			continue
		}
		if got := r.AcceleratorHourly(); math.Abs(got-want) > 0.005 {
			t.Errorf("%s: %.5f $/accelerator-h, reference says %.3f", it, got, want)
		}
	}
	trn1, _ := table.Lookup("trn1.32xlarge", "", "")
	if trn1.CoresPerAccelerator != 2 {
		t.Errorf("trn1 has 32 NeuronCores on 16 devices, got %d per device", trn1.CoresPerAccelerator)
	}
}
