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
