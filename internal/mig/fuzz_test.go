package mig

import (
	"math"
	"strings"
	"testing"
)

// FuzzShares feeds MIG layouts as dcgm-exporter and NVML name them (profile
// strings from outside) and GPU memory sizes, and checks what the cost model
// relies on: a parsed profile holds a share in (0, 1], and the fitted shares
// of a layout never add up to more than the GPU and keep the instances'
// order.
func FuzzShares(f *testing.F) {
	f.Add("3g.40gb,4g.40gb", 80.0)
	f.Add("3g.40gb,2g.20gb,1g.10gb,1g.10gb", 80.0)
	f.Add("1g.10gb,1g.10gb,1g.10gb,1g.10gb,1g.10gb,1g.10gb,1g.10gb", 80.0)
	f.Add("NVIDIA A100-SXM4-40GB MIG 1g.5gb,1g.10gb+me", 40.0)
	f.Add("7g.141gb", 141.0)
	f.Add("3g.71gb,3g.71gb", 0.0)
	f.Fuzz(func(t *testing.T, names string, gpuGB float64) {
		if math.IsNaN(gpuGB) || math.IsInf(gpuGB, 0) {
			gpuGB = 0
		}
		var layout []Profile
		for _, n := range strings.Split(names, ",") {
			p, err := ParseProfile(n)
			if err != nil {
				continue
			}
			if s := p.Share(gpuGB); !(s > 0 && s <= 1) {
				t.Fatalf("%q on %v GB: share %v outside (0, 1]", n, gpuGB, s)
			}
			layout = append(layout, p)
		}
		shares := Shares(layout, gpuGB)
		sum := 0.0
		for i, s := range shares {
			sum += s
			for j := range shares {
				if layout[i].Share(gpuGB) < layout[j].Share(gpuGB) && s > shares[j] {
					t.Fatalf("%s pays %v, more than %s at %v", layout[i].Name, s, layout[j].Name, shares[j])
				}
			}
		}
		if sum > 1+1e-9 {
			t.Fatalf("%q on %v GB: fitted shares add up to %v", names, gpuGB, sum)
		}
		if st := Stranded(layout, gpuGB); !(st >= 0 && st <= 1) {
			t.Fatalf("%q on %v GB: stranded %v", names, gpuGB, st)
		}
	})
}
