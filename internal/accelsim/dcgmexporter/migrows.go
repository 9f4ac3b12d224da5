package dcgmexporter

import (
	"math"
	"slices"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/detrand"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/fleet"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/sim"
)

// A GPU in MIG mode has no row of its own: dcgm-exporter prints the GPU's
// families (power, energy, clocks, temperatures, PCIe…) once per GPU
// instance, and DCGM reads each of those at a slightly different moment.
// The row of the GPU's lowest GPU-instance id shows the GPU's sample as it
// is; the rows of the others are read later — lag instances after the
// first — so power and PCIe rates wander a little and energy has grown.
// The values are a pure function of the sample and the instance, so the
// page stays deterministic.

// readLag is how much later DCGM reads a GPU field for each further GPU
// instance of the same GPU.
const readLag = 0.004 // seconds

// laterRead returns a GPU family's value as read lag instances after the
// first, key telling the instances apart.
type laterRead func(s *sim.GPUSample, lag int, key uint64) (int64, float64)

// laterReads are the GPU families whose value moves between two reads a few
// milliseconds apart, by DCGM field id; the others (clocks, temperatures,
// counters of rare events) read the same.
var laterReads = map[int]laterRead{
	155: func(s *sim.GPUSample, _ int, key uint64) (int64, float64) { // POWER_USAGE
		return 0, s.PowerW * (1 + 0.004*detrand.Signed(detrand.Hash(key, "power", s.EnergyMJ)))
	},
	156: func(s *sim.GPUSample, lag int, _ uint64) (int64, float64) { // TOTAL_ENERGY_CONSUMPTION, mJ
		return s.EnergyMJ + int64(math.Round(s.PowerW*readLag*1000*float64(lag))), 0
	},
	1009: func(s *sim.GPUSample, _ int, key uint64) (int64, float64) { // PROF_PCIE_TX_BYTES
		return int64(float64(s.PCIeTxBytes) * (1 + 0.02*detrand.Signed(detrand.Hash(key, "pcie-tx", s.EnergyMJ)))), 0
	},
	1010: func(s *sim.GPUSample, _ int, key uint64) (int64, float64) { // PROF_PCIE_RX_BYTES
		return int64(float64(s.PCIeRxBytes) * (1 + 0.02*detrand.Signed(detrand.Hash(key, "pcie-rx", s.EnergyMJ)))), 0
	},
}

// migLag is how many of the GPU's instances have a lower GPU-instance id
// than mi: 0 for the instance whose rows show the GPU's sample as it is.
func migLag(g *fleet.GPU, mi *fleet.MIGInstance) int {
	ids := make([]int, 0, len(g.MIG))
	for _, other := range g.MIG {
		ids = append(ids, other.GIID)
	}
	slices.Sort(ids)
	return slices.Index(ids, mi.GIID)
}
