// Package catalog holds the facts the simulator needs about real hardware:
// GPU models as dcgm-exporter and GPU Feature Discovery name them, their MIG
// profiles, AWS Neuron device shapes and EC2 instance types.
//
// Numbers are those the real devices report (framebuffer MiB, clocks, power
// limits) so that the collector's unit conversions and shares are exercised
// with realistic magnitudes.
package catalog

import (
	"fmt"
	"sort"
	"strings"
)

// GPUModel describes one NVIDIA GPU model.
type GPUModel struct {
	// Key is the name scenario files use ("H100-80GB").
	Key string
	// Name is what NVML and dcgm-exporter report as modelName.
	Name string
	// GFDProduct is the nvidia.com/gpu.product label value.
	GFDProduct   string
	Family       string // nvidia.com/gpu.family
	Architecture string // DRA driver "architecture" attribute
	ComputeMajor int
	ComputeMinor int
	// MemoryMiB is the framebuffer size (DCGM_FI_DEV_FB_TOTAL).
	MemoryMiB int64
	// ReservedMiB is the framebuffer the driver keeps (DCGM_FI_DEV_FB_RESERVED).
	ReservedMiB    int64
	IdlePowerW     float64
	MaxPowerW      float64
	IdleSMClockMHz int
	MaxSMClockMHz  int
	MemClockMHz    int
	IdleTempC      float64
	MaxTempC       float64
	NVLink         bool
	// Video engines (L4 is an inference/video card).
	VideoEngines bool
	// GenTokensPerSec is the decode throughput of one whole GPU serving an
	// 8B-class model, the reference the inference model scales from.
	GenTokensPerSec float64
	// MIGProfiles is empty when the model has no MIG.
	MIGProfiles []MIGProfile
}

// MIGProfile is one GPU-instance profile of a MIG-capable model.
type MIGProfile struct {
	Name string // "3g.40gb"
	// ID is the NVML GPU-instance profile id, part of the DRA device name.
	ID            int
	ComputeSlices int
	MemorySlices  int
	// Max is how many instances of the profile fit on one GPU.
	Max       int
	MemoryMiB int64
}

// MIGCapable reports whether the model supports MIG.
func (m *GPUModel) MIGCapable() bool { return len(m.MIGProfiles) > 0 }

// MIGProfile returns the named profile.
func (m *GPUModel) MIGProfile(name string) (MIGProfile, bool) {
	for _, p := range m.MIGProfiles {
		if p.Name == name {
			return p, true
		}
	}
	return MIGProfile{}, false
}

// MIGProfileNames lists the model's profiles in catalogue order.
func (m *GPUModel) MIGProfileNames() []string {
	out := make([]string, len(m.MIGProfiles))
	for i, p := range m.MIGProfiles {
		out[i] = p.Name
	}
	return out
}

// migProfiles builds the standard 7-compute/8-memory-slice profile set
// (NVIDIA MIG user guide; mig-parted default config). gb lists the memory in
// GB of the 1-, 2-, 4- and 8-memory-slice profiles.
func migProfiles(totalMiB int64, gb1, gb2, gb4, gb8 int) []MIGProfile {
	slice := totalMiB / 8
	mk := func(name string, id, c, m, maxInstances int) MIGProfile {
		// The usable memory of an instance is a little less than its slices.
		return MIGProfile{Name: name, ID: id, ComputeSlices: c, MemorySlices: m, Max: maxInstances, MemoryMiB: slice * int64(m) * 97 / 100}
	}
	return []MIGProfile{
		mk(fmt.Sprintf("1g.%dgb", gb1), 19, 1, 1, 7),
		mk(fmt.Sprintf("1g.%dgb+me", gb1), 20, 1, 1, 1),
		mk(fmt.Sprintf("1g.%dgb", gb2), 15, 1, 2, 4),
		mk(fmt.Sprintf("2g.%dgb", gb2), 14, 2, 2, 3),
		mk(fmt.Sprintf("3g.%dgb", gb4), 9, 3, 4, 2),
		mk(fmt.Sprintf("4g.%dgb", gb4), 5, 4, 4, 1),
		mk(fmt.Sprintf("7g.%dgb", gb8), 0, 7, 8, 1),
	}
}

var gpuModels = map[string]*GPUModel{
	"H100-80GB": {
		Key: "H100-80GB", Name: "NVIDIA H100 80GB HBM3", GFDProduct: "NVIDIA-H100-80GB-HBM3",
		Family: "hopper", Architecture: "Hopper", ComputeMajor: 9, ComputeMinor: 0,
		MemoryMiB: 81559, ReservedMiB: 579,
		IdlePowerW: 68, MaxPowerW: 700, IdleSMClockMHz: 345, MaxSMClockMHz: 1980, MemClockMHz: 2619,
		IdleTempC: 31, MaxTempC: 74, NVLink: true, GenTokensPerSec: 2600,
		MIGProfiles: migProfiles(81559, 10, 20, 40, 80),
	},
	"H200-141GB": {
		Key: "H200-141GB", Name: "NVIDIA H200", GFDProduct: "NVIDIA-H200",
		Family: "hopper", Architecture: "Hopper", ComputeMajor: 9, ComputeMinor: 0,
		MemoryMiB: 143771, ReservedMiB: 603,
		IdlePowerW: 75, MaxPowerW: 700, IdleSMClockMHz: 345, MaxSMClockMHz: 1980, MemClockMHz: 3201,
		IdleTempC: 30, MaxTempC: 72, NVLink: true, GenTokensPerSec: 3300,
		MIGProfiles: migProfiles(143771, 18, 35, 71, 141),
	},
	"A100-40GB": {
		Key: "A100-40GB", Name: "NVIDIA A100-SXM4-40GB", GFDProduct: "NVIDIA-A100-SXM4-40GB",
		Family: "ampere", Architecture: "Ampere", ComputeMajor: 8, ComputeMinor: 0,
		MemoryMiB: 40960, ReservedMiB: 424,
		IdlePowerW: 52, MaxPowerW: 400, IdleSMClockMHz: 210, MaxSMClockMHz: 1410, MemClockMHz: 1215,
		IdleTempC: 29, MaxTempC: 70, NVLink: true, GenTokensPerSec: 1300,
		MIGProfiles: migProfiles(40960, 5, 10, 20, 40),
	},
	"L4": {
		Key: "L4", Name: "NVIDIA L4", GFDProduct: "NVIDIA-L4",
		Family: "ada-lovelace", Architecture: "Ada Lovelace", ComputeMajor: 8, ComputeMinor: 9,
		MemoryMiB: 23034, ReservedMiB: 435,
		IdlePowerW: 16, MaxPowerW: 72, IdleSMClockMHz: 210, MaxSMClockMHz: 2040, MemClockMHz: 6251,
		IdleTempC: 34, MaxTempC: 78, VideoEngines: true, GenTokensPerSec: 420,
	},
}

// GPUModelByKey returns the model a scenario names.
func GPUModelByKey(key string) (*GPUModel, bool) {
	m, ok := gpuModels[key]
	return m, ok
}

// GPUModelKeys lists the keys scenario files may use, sorted.
func GPUModelKeys() []string { return sortedKeys(gpuModels) }

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// OneOf renders a list for "want one of …" messages.
func OneOf(values []string) string { return strings.Join(values, ", ") }
