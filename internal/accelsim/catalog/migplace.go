package catalog

import (
	"fmt"
	"strings"
)

// MIGPlacement is where one GPU instance of a layout sits.
type MIGPlacement struct {
	Profile MIGProfile
	// Start is the first memory slice the instance occupies.
	Start int
	// GIID is the GPU-instance id the driver assigns to that placement.
	GIID int
}

// PlaceMIG finds placements for a layout on one GPU, as the driver would
// have to: every instance on a start slice its profile allows, no memory
// slice used twice, at most 7 compute slices. The layout order is kept; the
// first arrangement found (lowest starts first) is returned.
func (m *GPUModel) PlaceMIG(layout []string) ([]MIGPlacement, error) {
	if !m.MIGCapable() {
		return nil, fmt.Errorf("%s does not support MIG", m.Key)
	}
	profiles := make([]MIGProfile, len(layout))
	count := map[string]int{}
	compute := 0
	for i, name := range layout {
		p, ok := m.MIGProfile(name)
		if !ok {
			return nil, fmt.Errorf("unknown MIG profile %q for %s (want one of %s)", name, m.Key, OneOf(m.MIGProfileNames()))
		}
		profiles[i] = p
		count[name]++
		if count[name] > p.Max {
			return nil, fmt.Errorf("at most %d × %s fit on one %s, layout has %d", p.Max, name, m.Key, count[name])
		}
		compute += p.ComputeSlices
	}
	if compute > 7 {
		return nil, fmt.Errorf("layout [%s] needs %d compute slices, a GPU has 7", strings.Join(layout, " "), compute)
	}
	out := make([]MIGPlacement, len(profiles))
	var used [8]bool
	var place func(i int) bool
	place = func(i int) bool {
		if i == len(profiles) {
			return true
		}
		p := profiles[i]
		for _, s := range validStarts(p) {
			if !free(used[:], s, p.MemorySlices) {
				continue
			}
			mark(used[:], s, p.MemorySlices, true)
			out[i] = MIGPlacement{Profile: p, Start: s, GIID: giID(p.MemorySlices, s)}
			if place(i + 1) {
				return true
			}
			mark(used[:], s, p.MemorySlices, false)
		}
		return false
	}
	if !place(0) {
		return nil, fmt.Errorf("layout [%s] does not fit one %s: its instances need more than the GPU's 8 memory slices in allowed positions", strings.Join(layout, " "), m.Key)
	}
	return out, nil
}

// validStarts are the memory slices an instance of the profile may start on.
func validStarts(p MIGProfile) []int {
	switch p.MemorySlices {
	case 8:
		return []int{0}
	case 4:
		if p.ComputeSlices == 4 {
			return []int{0}
		}
		return []int{0, 4}
	case 2:
		if p.ComputeSlices == 1 {
			return []int{0, 2, 4, 6}
		}
		return []int{0, 2, 4}
	default:
		return []int{0, 1, 2, 3, 4, 5, 6}
	}
}

// giID follows the driver's numbering by placement: 0 for the full GPU, 1-2
// for half-GPU instances, 3-6 for quarter ones, 7-13 for the smallest.
func giID(memSlices, start int) int {
	switch memSlices {
	case 8:
		return 0
	case 4:
		return 1 + start/4
	case 2:
		return 3 + start/2
	default:
		return 7 + start
	}
}

func free(used []bool, start, n int) bool {
	if start+n > len(used) {
		return false
	}
	for i := start; i < start+n; i++ {
		if used[i] {
			return false
		}
	}
	return true
}

func mark(used []bool, start, n int, v bool) {
	for i := start; i < start+n; i++ {
		used[i] = v
	}
}
