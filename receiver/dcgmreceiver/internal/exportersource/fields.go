package exportersource

import (
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/model"
)

const mib = 1 << 20

// fieldFunc stores one DCGM field's value, converted to schema units, in the
// group (device) it belongs to.
type fieldFunc func(g *group, v float64, u units)

// units says how the scraped exporter reports the fields whose unit changed
// between DCGM releases.
type units struct {
	// violationScale turns *_VIOLATION values into seconds: 1e-9 for ns
	// (DCGM 3.x and later), 1e-6 for µs (older releases).
	violationScale float64
}

// fields maps the DCGM fields the schema has a place for. Fields not listed
// (DCGM_FI_DEV_MEM_COPY_UTIL: copy-engine busy time, not memory used;
// DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL: neither direction nor unit is stated)
// are skipped without complaint.
var fields = map[string]fieldFunc{
	"DCGM_FI_DEV_GPU_UTIL": func(g *group, v float64, _ units) { g.s.GPUUtil = model.Of(v / 100) },
	"DCGM_FI_DEV_ENC_UTIL": func(g *group, v float64, _ units) { g.s.EncoderUtil = model.Of(v / 100) },
	"DCGM_FI_DEV_DEC_UTIL": func(g *group, v float64, _ units) { g.s.DecoderUtil = model.Of(v / 100) },

	"DCGM_FI_DEV_FB_USED":         func(g *group, v float64, _ units) { g.fbUsed = model.Of(v) },
	"DCGM_FI_DEV_FB_FREE":         func(g *group, v float64, _ units) { g.fbFree = model.Of(v) },
	"DCGM_FI_DEV_FB_RESERVED":     func(g *group, v float64, _ units) { g.fbReserved = model.Of(v) },
	"DCGM_FI_DEV_FB_TOTAL":        func(g *group, v float64, _ units) { g.fbTotal = model.Of(v) },
	"DCGM_FI_DEV_FB_USED_PERCENT": func(g *group, v float64, _ units) { g.fbUsedRatio = model.Of(v) },

	"DCGM_FI_DEV_POWER_USAGE":              func(g *group, v float64, _ units) { g.s.Power = model.Of(v) },
	"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": func(g *group, v float64, _ units) { g.s.Energy = model.Of(v / 1000) },

	"DCGM_FI_DEV_GPU_TEMP":    func(g *group, v float64, _ units) { g.s.TempGPU = model.Of(v) },
	"DCGM_FI_DEV_MEMORY_TEMP": func(g *group, v float64, _ units) { g.s.TempMemory = model.Of(v) },

	"DCGM_FI_DEV_SM_CLOCK":  func(g *group, v float64, _ units) { g.s.ClockSM = model.Of(v * 1e6) },
	"DCGM_FI_DEV_MEM_CLOCK": func(g *group, v float64, _ units) { g.s.ClockMemory = model.Of(v * 1e6) },

	"DCGM_FI_DEV_POWER_VIOLATION":       violation(model.ThrottlePower),
	"DCGM_FI_DEV_THERMAL_VIOLATION":     violation(model.ThrottleThermal),
	"DCGM_FI_DEV_SYNC_BOOST_VIOLATION":  violation(model.ThrottleSyncBoost),
	"DCGM_FI_DEV_BOARD_LIMIT_VIOLATION": violation(model.ThrottleBoardLimit),
	"DCGM_FI_DEV_LOW_UTIL_VIOLATION":    violation(model.ThrottleLowUtil),
	"DCGM_FI_DEV_RELIABILITY_VIOLATION": violation(model.ThrottleReliability),
	"DCGM_FI_DEV_CLOCK_THROTTLE_REASONS": func(g *group, v float64, _ units) {
		g.s.SetThrottleReasons(uint64(v))
	},
	"DCGM_FI_DEV_CLOCKS_EVENT_REASONS": func(g *group, v float64, _ units) {
		g.s.SetThrottleReasons(uint64(v))
	},

	"DCGM_FI_DEV_PCIE_REPLAY_COUNTER": errorCount(model.ErrPCIeReplay),
	"DCGM_FI_DEV_ECC_SBE_VOL_TOTAL":   errorCount(model.ErrECCCorrected),
	"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL":   errorCount(model.ErrECCUncorrected),
	// Flit and data CRC errors are both CRC errors: they add up.
	"DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL": addErrorCount(model.ErrNVLinkCRC),
	"DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL": addErrorCount(model.ErrNVLinkCRC),
	"DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL":   errorCount(model.ErrNVLinkReplay),
	"DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL": errorCount(model.ErrNVLinkRecovery),
	"DCGM_FI_DEV_XID_ERRORS":                        func(g *group, v float64, _ units) { g.s.LastXID = model.Of(v) },

	"DCGM_FI_PROF_GR_ENGINE_ACTIVE":   func(g *group, v float64, _ units) { g.s.GREngineActive = model.Of(v) },
	"DCGM_FI_PROF_SM_ACTIVE":          func(g *group, v float64, _ units) { g.s.SMActive = model.Of(v) },
	"DCGM_FI_PROF_SM_OCCUPANCY":       func(g *group, v float64, _ units) { g.s.SMOccupancy = model.Of(v) },
	"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": func(g *group, v float64, _ units) { g.s.TensorActive = model.Of(v) },
	"DCGM_FI_PROF_DRAM_ACTIVE":        func(g *group, v float64, _ units) { g.s.DRAMActive = model.Of(v) },

	// PROF_*_BYTES are rates in bytes per second despite their names.
	"DCGM_FI_PROF_PCIE_TX_BYTES":   linkRate(model.LinkPCIe, model.DirTransmit),
	"DCGM_FI_PROF_PCIE_RX_BYTES":   linkRate(model.LinkPCIe, model.DirReceive),
	"DCGM_FI_PROF_NVLINK_TX_BYTES": linkRate(model.LinkNVLink, model.DirTransmit),
	"DCGM_FI_PROF_NVLINK_RX_BYTES": linkRate(model.LinkNVLink, model.DirReceive),
	// The 1.x/2.x NVML-based PCIe throughput, in KB/s; used only when the
	// profiling field is absent.
	"DCGM_FI_DEV_PCIE_TX_THROUGHPUT": func(g *group, v float64, _ units) { g.pcieLegacy[model.DirTransmit] = model.Of(v * 1024) },
	"DCGM_FI_DEV_PCIE_RX_THROUGHPUT": func(g *group, v float64, _ units) { g.pcieLegacy[model.DirReceive] = model.Of(v * 1024) },

	"DCGM_FI_DEV_RETIRED_SBE": func(g *group, v float64, _ units) {
		g.s.RetiredPages[model.RetiredSingleBit] = model.Of(v)
	},
	"DCGM_FI_DEV_RETIRED_DBE": func(g *group, v float64, _ units) {
		g.s.RetiredPages[model.RetiredDoubleBit] = model.Of(v)
	},
	"DCGM_FI_DEV_RETIRED_PENDING": func(g *group, v float64, _ units) {
		g.s.RetiredPages[model.RetiredPending] = model.Of(v)
		g.s.RetirementPending = model.Bool(v > 0)
	},
	"DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS":   func(g *group, v float64, _ units) { g.s.RemappedCorrectable = model.Of(v) },
	"DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS": func(g *group, v float64, _ units) { g.s.RemappedUncorrectable = model.Of(v) },
	"DCGM_FI_DEV_ROW_REMAP_FAILURE":           func(g *group, v float64, _ units) { g.s.RemapFailed = model.Bool(v > 0) },
	"DCGM_FI_DEV_ROW_REMAP_PENDING":           func(g *group, v float64, _ units) { g.s.RemapPending = model.Bool(v > 0) },
}

func violation(reason int) fieldFunc {
	return func(g *group, v float64, u units) { g.s.ThrottleTime[reason] = model.Of(v * u.violationScale) }
}

func errorCount(kind int) fieldFunc {
	return func(g *group, v float64, _ units) { g.s.Errors[kind] = model.Of(v) }
}

func addErrorCount(kind int) fieldFunc {
	return func(g *group, v float64, _ units) { g.s.Errors[kind] = model.Of(g.s.Errors[kind].V + v) }
}

func linkRate(link, dir int) fieldFunc {
	return func(g *group, v float64, _ units) { g.s.LinkRate[link][dir] = model.Of(v) }
}
