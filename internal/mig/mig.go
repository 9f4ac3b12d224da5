// Package mig knows the arithmetic of NVIDIA Multi-Instance GPU profiles: how
// much of a GPU a profile takes (its cost share) and how much of a GPU's MIG
// capacity is stranded by a layout (the fragmentation waste).
//
// A MIG-capable GPU has 7 compute slices and 8 memory slices. A profile
// "<c>g.<m>gb" takes c compute slices and round(m / (GPU memory / 8)) memory
// slices; "+me" adds the media extensions and takes the same slices. The
// share of a profile is max(c/7, memory slices/8): a 3g.40gb and a 4g.40gb on
// an 80 GB GPU both hold half of its memory, so neither leaves room for the
// other's half of the compute (NVIDIA MIG user guide; reference/cost_k8s.md §3).
// Those per-instance shares can add up to more than one GPU; Shares (and Fit,
// for shares that were computed elsewhere) scales a whole layout's shares so
// that the instances of one GPU never cost more than the GPU.
package mig

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

const (
	// ComputeSlices on every MIG-capable GPU.
	ComputeSlices = 7
	// MemorySlices on every MIG-capable GPU.
	MemorySlices = 8
)

// Profile is a parsed MIG profile name.
type Profile struct {
	Name            string
	ComputeSlices   int
	MemoryGB        int
	MediaExtensions bool
}

var profileRE = regexp.MustCompile(`(\d+)g\.(\d+)gb(\+me)?`)

// ParseProfile reads a profile from its name ("3g.40gb", "1g.10gb+me") or
// from a MIG device name that contains one ("NVIDIA A100-SXM4-40GB MIG 1g.5gb").
func ParseProfile(s string) (Profile, error) {
	m := profileRE.FindStringSubmatch(strings.ToLower(s))
	if m == nil {
		return Profile{}, fmt.Errorf("%q is not a MIG profile (want <c>g.<m>gb, e.g. 3g.40gb)", s)
	}
	c, _ := strconv.Atoi(m[1])
	mem, _ := strconv.Atoi(m[2])
	if c < 1 || c > ComputeSlices || mem < 1 {
		return Profile{}, fmt.Errorf("%q is not a MIG profile: compute slices must be 1..7", s)
	}
	return Profile{Name: m[0], ComputeSlices: c, MemoryGB: mem, MediaExtensions: m[3] != ""}, nil
}

// MemorySlicesOn returns how many of the 8 memory slices the profile takes on
// a GPU with gpuMemoryGB of memory, or 0 when the GPU's memory is unknown.
func (p Profile) MemorySlicesOn(gpuMemoryGB float64) int {
	if gpuMemoryGB <= 0 {
		return 0
	}
	slices := int(math.Round(float64(p.MemoryGB) / (gpuMemoryGB / MemorySlices)))
	return max(1, min(MemorySlices, slices))
}

// Share is the fraction of the GPU the profile holds: max(compute/7,
// memory/8). With the GPU's memory unknown it falls back to compute/7.
func (p Profile) Share(gpuMemoryGB float64) float64 {
	share := float64(p.ComputeSlices) / ComputeSlices
	if ms := p.MemorySlicesOn(gpuMemoryGB); ms > 0 {
		share = math.Max(share, float64(ms)/MemorySlices)
	}
	return share
}

// Shares returns the cost share of every instance of one GPU's MIG layout,
// in the order given. Each instance first gets its own Share — its compute
// slices out of 7, or its memory slices out of 8 when that is larger — and
// when those add up to more than the whole GPU, every share is multiplied by
// the same factor 1/Σ (Fit), so the shares of one GPU add up to exactly 1.
//
// Why: max(compute, memory) is the right price of an instance on its own (a
// 3g.40gb on an 80 GB GPU holds half the memory, so it denies the others half
// the GPU), but two instances can both be memory-heavy and compute-heavy in
// different ways: 3g.40gb (4/8 of the memory) + 4g.40gb (4/7 of the compute)
// fill one H100 and would be charged 0.5 + 0.571 = 1.071 GPUs. Scaled, they
// pay 0.467 and 0.533: still in the order of their own shares, and together
// exactly the GPU. A layout that adds up to 1 or less is left as it is (the
// rest of the GPU is unpartitioned capacity, see Stranded).
func Shares(layout []Profile, gpuMemoryGB float64) []float64 {
	shares := make([]float64, len(layout))
	for i, p := range layout {
		shares[i] = p.Share(gpuMemoryGB)
	}
	Fit(shares)
	return shares
}

// Fit scales shares of one physical device in place so that they add up to
// at most 1, each multiplied by FitFactor of their sum; it returns the factor.
// Shares that already fit are left alone.
func Fit(shares []float64) float64 {
	total := 0.0
	for _, s := range shares {
		total += s
	}
	f := FitFactor(total)
	if f < 1 {
		for i := range shares {
			shares[i] *= f
		}
	}
	return f
}

// FitFactor is what shares adding up to total are multiplied by so that they
// add up to at most 1: 1/total when total exceeds 1, else 1. Sums within
// float rounding of 1 (seven 1g instances: 7 × 1/7) are not scaled.
func FitFactor(total float64) float64 {
	if total > 1+fitTolerance {
		return 1 / total
	}
	return 1
}

// fitTolerance keeps float rounding in a sum of shares from rescaling them.
const fitTolerance = 1e-12

// Stranded returns the fraction of a GPU's capacity that the given layout
// leaves free but unusable: every profile needs at least one compute slice
// and one memory slice, so free compute without free memory (or the reverse)
// can host nothing. Placement rules are not modelled, so this is a lower bound.
func Stranded(layout []Profile, gpuMemoryGB float64) float64 {
	usedC, usedM := 0, 0
	for _, p := range layout {
		usedC += p.ComputeSlices
		usedM += p.MemorySlicesOn(gpuMemoryGB)
	}
	freeC := max(0, ComputeSlices-usedC)
	freeM := max(0, MemorySlices-usedM)
	if gpuMemoryGB <= 0 {
		return 0
	}
	usable := min(freeC, freeM)
	return math.Max(float64(freeC-usable)/ComputeSlices, float64(freeM-usable)/MemorySlices)
}

var memoryRE = regexp.MustCompile(`(\d+)\s*GB`)

// knownMemoryGB covers models whose names do not carry their memory size.
var knownMemoryGB = []struct {
	substr string
	gb     float64
}{
	{"H200", 141}, {"B300", 288}, {"B200", 180}, {"H100 NVL", 94}, {"GH200", 96}, {"L40S", 48}, {"L4", 24}, {"A10G", 24}, {"T4", 16},
}

// MemoryGBFromModel guesses a GPU's memory from its model name ("NVIDIA
// A100-SXM4-40GB", "NVIDIA H100 80GB HBM3", "NVIDIA H200"); 0 when unknown.
// Prefer the device's reported memory (hw.gpu.memory.limit) when there is one.
func MemoryGBFromModel(model string) float64 {
	if m := memoryRE.FindStringSubmatch(strings.ToUpper(model)); m != nil {
		gb, _ := strconv.ParseFloat(m[1], 64)
		return gb
	}
	for _, k := range knownMemoryGB {
		if strings.Contains(model, k.substr) {
			return k.gb
		}
	}
	return 0
}
