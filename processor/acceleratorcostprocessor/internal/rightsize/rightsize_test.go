package rightsize

import (
	"math"
	"strings"
	"testing"

	"github.com/otelcol-accel/otelcol-accel/internal/pricing"
)

func names(gb float64) string {
	var s []string
	for _, p := range Profiles(gb) {
		s = append(s, p.Name)
	}
	return strings.Join(s, " ")
}

// The generated names match the profile tables of reference/cost_k8s.md §3.
func TestProfilesMatchNVIDIANames(t *testing.T) {
	for gb, want := range map[float64]string{
		40:  "1g.5gb 1g.10gb 2g.10gb 3g.20gb 4g.20gb 7g.40gb",
		80:  "1g.10gb 1g.20gb 2g.20gb 3g.40gb 4g.40gb 7g.80gb",
		94:  "1g.12gb 1g.24gb 2g.24gb 3g.47gb 4g.47gb 7g.94gb",
		141: "1g.18gb 1g.35gb 2g.35gb 3g.71gb 4g.71gb 7g.141gb",
		180: "1g.23gb 1g.45gb 2g.45gb 3g.90gb 4g.90gb 7g.180gb",
		269: "1g.34gb 1g.67gb 2g.67gb 3g.135gb 4g.135gb 7g.269gb",
	} {
		if got := names(gb); got != want {
			t.Errorf("%v GB: %s, want %s", gb, got, want)
		}
	}
	if Profiles(0) != nil {
		t.Error("unknown memory: no profiles")
	}
}

func TestSmallestProfile(t *testing.T) {
	tests := []struct {
		name    string
		need    Need
		current float64
		want    string
		share   float64
	}{
		// A whole H100 at 10 % activity (0.7 slices ×1.2) using 6 GB of 80 (×1.2).
		{"tiny load on a whole GPU", Need{0.7 * 1.2, 6.0 / 80 * 1.2}, 1, "1g.10gb", 1.0 / 7},
		// 1 compute slice but 15 GB: the 1g.20gb (2 memory slices → share 2/8).
		{"memory bound", Need{0.8, 15.0 / 80 * 1.2}, 1, "1g.20gb", 2.0 / 8},
		// 2.5 slices: a 3g.40gb (share 4/8).
		{"compute bound", Need{2.5, 0.1}, 1, "3g.40gb", 0.5},
		// Already on the smallest that fits.
		{"no smaller", Need{2.5, 0.1}, 0.5, "", 0},
		// Needs the whole GPU.
		{"needs everything", Need{6.5, 0.2}, 1, "", 0},
	}
	for _, tt := range tests {
		p, share, ok := SmallestProfile(80, tt.need, tt.current)
		if tt.want == "" {
			if ok {
				t.Errorf("%s: got %s, want none", tt.name, p.Name)
			}
			continue
		}
		if !ok || p.Name != tt.want || math.Abs(share-tt.share) > 1e-12 {
			t.Errorf("%s: got %s (%v, %v), want %s (%v)", tt.name, p.Name, share, ok, tt.want, tt.share)
		}
	}
}

func TestMIGCapable(t *testing.T) {
	for model, want := range map[string]bool{
		"NVIDIA A100-SXM4-80GB": true, "NVIDIA H100 80GB HBM3": true, "NVIDIA H200": true,
		"NVIDIA B200": true, "NVIDIA L40S": false, "NVIDIA A10G": false, "Tesla T4": false,
		"NVIDIA A1000": false, "trainium2": false,
	} {
		if got := MIGCapable(model); got != want {
			t.Errorf("MIGCapable(%q) = %v", model, got)
		}
	}
}

func TestCheaperInstance(t *testing.T) {
	table, err := pricing.Bundled()
	if err != nil {
		t.Fatal(err)
	}
	p4de, _ := table.Lookup("p4de.24xlarge", "", "")
	// 30 GiB fits the 40 GB A100 of a p4d.
	if r, ok := CheaperInstance(table, p4de, 30); !ok || r.InstanceType != "p4d.24xlarge" {
		t.Errorf("p4de with 30 GiB: got %v %v", r.InstanceType, ok)
	}
	// 60 GiB does not.
	if r, ok := CheaperInstance(table, p4de, 60); ok {
		t.Errorf("p4de with 60 GiB: got %v", r.InstanceType)
	}
	g6e48, _ := table.Lookup("g6e.48xlarge", "", "")
	if r, ok := CheaperInstance(table, g6e48, 20); !ok || r.InstanceType != "g6e.xlarge" {
		t.Errorf("g6e.48xlarge: got %v %v", r.InstanceType, ok)
	}
	g6eSmall, _ := table.Lookup("g6e.xlarge", "", "")
	if r, ok := CheaperInstance(table, g6eSmall, 1); ok {
		t.Errorf("the cheapest L40S has nothing cheaper, got %v", r.InstanceType)
	}
	p5, _ := table.Lookup("p5.48xlarge", "", "")
	if r, ok := CheaperInstance(table, p5, 1); ok {
		t.Errorf("p5.4xlarge costs the same per GPU, got %v", r.InstanceType)
	}
}
