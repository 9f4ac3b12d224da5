// Package rightsize answers "what smaller thing would this workload fit in?"
// for the rightsizing and inference findings: a smaller MIG profile of the
// same GPU, or a cheaper instance type with the same accelerator model.
//
// MIG profiles follow one pattern on every MIG-capable GPU (NVIDIA MIG user
// guide; reference/cost_k8s.md §3): compute slices out of 7 and memory
// slices out of 8 in the shapes 1/1, 1/2, 2/2, 3/4, 4/4 and 7/8, named after
// the memory they get, round(GPU memory × memory slices / 8). That yields
// 1g.10gb…7g.80gb on an 80 GB GPU, 1g.18gb…7g.141gb on an H200 and
// 1g.23gb…7g.180gb on a B200. Cross-model moves (H100 → L4) are not
// suggested: the price table says nothing about relative performance.
package rightsize

import (
	"fmt"
	"math"
	"strings"

	"github.com/otelcol-accel/otelcol-accel/internal/mig"
	"github.com/otelcol-accel/otelcol-accel/internal/pricing"
)

// shapes are (compute slices, memory slices) of the standard profiles,
// smallest first.
var shapes = [...]struct{ compute, memory int }{{1, 1}, {1, 2}, {2, 2}, {3, 4}, {4, 4}, {7, 8}}

// migCapable are the GPU families with MIG and the standard shapes.
var migCapable = []string{"A100", "H100", "H200", "GH200", "H800", "B200", "GB200", "B300"}

// MIGCapable reports whether a GPU model supports MIG with the standard
// profile shapes.
func MIGCapable(model string) bool {
	u := strings.ToUpper(model)
	for _, m := range migCapable {
		if i := strings.Index(u, m); i >= 0 {
			end := i + len(m)
			if (i == 0 || !alnum(u[i-1])) && (end == len(u) || !alnum(u[end])) {
				return true
			}
		}
	}
	return false
}

func alnum(c byte) bool { return c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' }

// Profiles lists the standard MIG profiles of a GPU with gpuMemoryGB of
// memory, smallest first.
func Profiles(gpuMemoryGB float64) []mig.Profile {
	if gpuMemoryGB <= 0 {
		return nil
	}
	out := make([]mig.Profile, 0, len(shapes))
	for _, s := range shapes {
		gb := int(math.Floor(gpuMemoryGB*float64(s.memory)/mig.MemorySlices + 0.5))
		p, err := mig.ParseProfile(fmt.Sprintf("%dg.%dgb", s.compute, gb))
		if err == nil {
			out = append(out, p)
		}
	}
	return out
}

// Need is what a workload needs, as fractions of one whole GPU.
type Need struct {
	// ComputeSlices is peak activity × the compute slices it ran on ×
	// (1 + headroom).
	ComputeSlices float64
	// MemoryFraction is peak memory / the GPU's memory × (1 + headroom).
	MemoryFraction float64
}

// SmallestProfile returns the profile with the smallest share that covers
// need, if its share is below current (the share the workload holds now).
func SmallestProfile(gpuMemoryGB float64, need Need, current float64) (mig.Profile, float64, bool) {
	var best mig.Profile
	bestShare := math.Inf(1)
	for _, p := range Profiles(gpuMemoryGB) {
		memFrac := float64(p.MemorySlicesOn(gpuMemoryGB)) / mig.MemorySlices
		if float64(p.ComputeSlices) < need.ComputeSlices || memFrac < need.MemoryFraction {
			continue
		}
		if share := p.Share(gpuMemoryGB); share < bestShare {
			best, bestShare = p, share
		}
	}
	if math.IsInf(bestShare, 1) || bestShare >= current-1e-9 {
		return mig.Profile{}, 0, false
	}
	return best, bestShare, true
}

// CheaperInstance returns the cheapest instance type in the current row's
// region with the same accelerator model and at least needGiB of memory per
// accelerator, if it is cheaper per accelerator-hour than the current row.
func CheaperInstance(table *pricing.Table, current pricing.Row, needGiB float64) (pricing.Row, bool) {
	for _, r := range table.SameModel(current) {
		if r.AcceleratorHourly() >= current.AcceleratorHourly()-1e-9 {
			return pricing.Row{}, false // cheapest first: nothing cheaper left
		}
		if r.InstanceType == current.InstanceType || r.AcceleratorMemoryGB < needGiB {
			continue
		}
		return r, true
	}
	return pricing.Row{}, false
}
