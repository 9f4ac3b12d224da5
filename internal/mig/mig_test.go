package mig

import (
	"math"
	"testing"
)

func TestParseProfile(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Profile
	}{
		{"1g.10gb", Profile{"1g.10gb", 1, 10, false}},
		{"3g.40gb", Profile{"3g.40gb", 3, 40, false}},
		{"1g.10gb+me", Profile{"1g.10gb+me", 1, 10, true}},
		{"NVIDIA A100-SXM4-40GB MIG 1g.5gb", Profile{"1g.5gb", 1, 5, false}},
		{"7g.141gb", Profile{"7g.141gb", 7, 141, false}},
	} {
		got, err := ParseProfile(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseProfile(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "gpu", "8g.80gb", "0g.10gb"} {
		if _, err := ParseProfile(bad); err == nil {
			t.Errorf("ParseProfile(%q) accepted a non-profile", bad)
		}
	}
}

func TestShare(t *testing.T) {
	p := func(s string) Profile { pr, _ := ParseProfile(s); return pr }
	for _, tc := range []struct {
		profile string
		gpuGB   float64
		want    float64
	}{
		{"1g.10gb", 80, 1.0 / 7},  // compute dominates: 1/7 > 1/8
		{"3g.40gb", 80, 4.0 / 8},  // memory dominates
		{"4g.40gb", 80, 4.0 / 7},  // compute dominates
		{"7g.80gb", 80, 1},        // whole GPU
		{"1g.10gb", 40, 2.0 / 8},  // on a 40 GB A100, 1g.10gb holds two memory slices
		{"3g.71gb", 141, 4.0 / 8}, // H200
		{"2g.20gb", 0, 2.0 / 7},   // memory unknown: compute only
	} {
		if got := p(tc.profile).Share(tc.gpuGB); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s on %v GB: share %v, want %v", tc.profile, tc.gpuGB, got, tc.want)
		}
	}
}

func TestStranded(t *testing.T) {
	p := func(s string) Profile { pr, _ := ParseProfile(s); return pr }
	// 3g + 4g fill an 80 GB GPU exactly.
	if got := Stranded([]Profile{p("3g.40gb"), p("4g.40gb")}, 80); got != 0 {
		t.Errorf("3g+4g: stranded %v, want 0", got)
	}
	// Two 3g.40gb take all memory and leave one compute slice no profile can use.
	if got := Stranded([]Profile{p("3g.40gb"), p("3g.40gb")}, 80); math.Abs(got-1.0/7) > 1e-9 {
		t.Errorf("2×3g: stranded %v, want 1/7", got)
	}
	// Seven 1g.10gb leave one memory slice stranded.
	seven := []Profile{}
	for i := 0; i < 7; i++ {
		seven = append(seven, p("1g.10gb"))
	}
	if got := Stranded(seven, 80); math.Abs(got-1.0/8) > 1e-9 {
		t.Errorf("7×1g: stranded %v, want 1/8", got)
	}
	// Free space that can still host a profile is not stranded.
	if got := Stranded([]Profile{p("3g.40gb")}, 80); got != 0 {
		t.Errorf("one 3g: stranded %v, want 0", got)
	}
}

func TestMemoryGBFromModel(t *testing.T) {
	for model, want := range map[string]float64{
		"NVIDIA A100-SXM4-40GB": 40, "NVIDIA H100 80GB HBM3": 80, "NVIDIA H200": 141, "NVIDIA L4": 24, "Tesla T4": 16, "mystery": 0,
	} {
		if got := MemoryGBFromModel(model); got != want {
			t.Errorf("%q: %v, want %v", model, got, want)
		}
	}
}

func TestShares(t *testing.T) {
	p := func(s string) Profile { pr, _ := ParseProfile(s); return pr }
	for _, tc := range []struct {
		name   string
		layout []string
		gpuGB  float64
		want   []float64
	}{
		// 4/8 + 4/7 = 15/14 of a GPU: both scaled by 14/15.
		{"3g+4g on 80 GB", []string{"3g.40gb", "4g.40gb"}, 80, []float64{0.5 * 14 / 15, 4.0 / 7 * 14 / 15}},
		// 4/8 + 4/8 = 1: the 7th compute slice is stranded, not a share.
		{"2×3g on 80 GB", []string{"3g.40gb", "3g.40gb"}, 80, []float64{0.5, 0.5}},
		{"7×1g on 80 GB", []string{"1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb"}, 80,
			[]float64{1.0 / 7, 1.0 / 7, 1.0 / 7, 1.0 / 7, 1.0 / 7, 1.0 / 7, 1.0 / 7}},
		{"a single 3g", []string{"3g.40gb"}, 80, []float64{0.5}},
		// The demo's H100 GPU 0: 4/8 + 2/7 + 1/7 + 1/7 = 15/14.
		{"3g+2g+1g+1g on 80 GB", []string{"3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"}, 80,
			[]float64{0.5 * 14 / 15, 2.0 / 7 * 14 / 15, 1.0 / 7 * 14 / 15, 1.0 / 7 * 14 / 15}},
		// On a 40 GB A100 a 1g.10gb holds 2 of 8 memory slices: four of them
		// would be 4 × 2/8 = 1 GPU, with three compute slices left.
		{"4×1g.10gb on 40 GB", []string{"1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb"}, 40, []float64{0.25, 0.25, 0.25, 0.25}},
		{"empty", nil, 80, []float64{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			layout := make([]Profile, len(tc.layout))
			for i, s := range tc.layout {
				layout[i] = p(s)
			}
			got := Shares(layout, tc.gpuGB)
			if len(got) != len(tc.want) {
				t.Fatalf("got %d shares, want %d", len(got), len(tc.want))
			}
			sum := 0.0
			for i := range got {
				sum += got[i]
				if math.Abs(got[i]-tc.want[i]) > 1e-12 {
					t.Errorf("share %d (%s): %v, want %v", i, tc.layout[i], got[i], tc.want[i])
				}
				// The per-instance rule still orders the instances.
				for j := range got {
					if layout[i].Share(tc.gpuGB) < layout[j].Share(tc.gpuGB) && got[i] > got[j] {
						t.Errorf("%s pays more than %s", tc.layout[i], tc.layout[j])
					}
				}
			}
			if sum > 1+1e-12 {
				t.Errorf("shares add up to %v, more than one GPU", sum)
			}
		})
	}
}

func TestFit(t *testing.T) {
	shares := []float64{0.5, 4.0 / 7}
	if f := Fit(shares); math.Abs(f-14.0/15) > 1e-12 {
		t.Errorf("factor %v, want 14/15", f)
	}
	if s := shares[0] + shares[1]; math.Abs(s-1) > 1e-12 {
		t.Errorf("fitted shares add up to %v", s)
	}
	under := []float64{0.25, 0.5}
	if f := Fit(under); f != 1 || under[0] != 0.25 || under[1] != 0.5 {
		t.Errorf("shares that fit were changed: factor %v, %v", f, under)
	}
	// Seven 1/7 shares add up to 1 within rounding: not rescaled.
	for _, total := range []float64{7 * (1.0 / 7), 1, 1 + 1e-15} {
		if f := FitFactor(total); f != 1 {
			t.Errorf("FitFactor(%v) = %v, want 1", total, f)
		}
	}
	if f := FitFactor(2); f != 0.5 {
		t.Errorf("FitFactor(2) = %v, want 0.5", f)
	}
}
