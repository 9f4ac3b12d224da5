package exportersource

import (
	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/model"
)

const mib = 1 << 20

// fieldFunc stores one DCGM field's value, converted to schema units, in the
// group (resource) it belongs to.
type fieldFunc func(g *group, v float64, u units)

// units says how the scraped exporter reports the fields whose unit changed
// between DCGM releases.
type units struct {
	// violationScale turns *_VIOLATION values into seconds: 1e-9 for ns
	// (DCGM 3.x and later), 1e-6 for µs (older releases).
	violationScale float64
}

// field is one family the schema has a place for.
type field struct {
	name string
	// metric is the schema metric the family feeds. Its counting
	// (accelschema.Counting) says where a MIG instance's row goes: a
	// device-scoped family measures the physical GPU, so the row's value is
	// the GPU's (see rank); any other stays on the resource the row names.
	metric string
	apply  fieldFunc
	// perPod stores one pod's reading, for the families dcgm-exporter 4.5+
	// measures per pod on a shared GPU (per_pod_usage).
	perPod func(s *model.Sample, pod string, v float64)
	// byXID: one series per XID code, in the `xid` label.
	byXID bool

	device bool // set from metric at init
}

// fields maps the DCGM families the schema has a place for. Families not
// listed (DCGM_FI_DEV_MEM_COPY_UTIL: copy-engine busy time, not memory
// used; DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL: neither direction nor unit is
// stated; the other DCGM_EXP_* window counts) are skipped without
// complaint.
var fields = []field{
	{name: "DCGM_FI_DEV_GPU_UTIL", metric: accelschema.MetricGPUUtilization,
		apply: func(g *group, v float64, _ units) { g.s.GPUUtil = model.Of(v / 100) },
		perPod: func(s *model.Sample, pod string, v float64) {
			s.PodGPUUtil = append(s.PodGPUUtil, model.PodReading{Pod: pod, V: v / 100})
		}},
	{name: "DCGM_FI_DEV_ENC_UTIL", metric: accelschema.MetricGPUUtilization, apply: func(g *group, v float64, _ units) { g.s.EncoderUtil = model.Of(v / 100) }},
	{name: "DCGM_FI_DEV_DEC_UTIL", metric: accelschema.MetricGPUUtilization, apply: func(g *group, v float64, _ units) { g.s.DecoderUtil = model.Of(v / 100) }},

	{name: "DCGM_FI_DEV_FB_USED", metric: accelschema.MetricGPUMemoryUsage,
		apply: func(g *group, v float64, _ units) { g.fbUsed = model.Of(v) },
		perPod: func(s *model.Sample, pod string, v float64) {
			s.PodMemUsed = append(s.PodMemUsed, model.PodReading{Pod: pod, V: v * mib})
		}},
	// Free, reserved and total are the size of what the row names: the
	// GPU's on a GPU's row, the instance's on a MIG instance's. They stay
	// where they were measured, as a partition's size does.
	{name: "DCGM_FI_DEV_FB_FREE", metric: accelschema.MetricPartitionMemoryLimit, apply: func(g *group, v float64, _ units) { g.fbFree = model.Of(v) }},
	{name: "DCGM_FI_DEV_FB_RESERVED", metric: accelschema.MetricPartitionMemoryLimit, apply: func(g *group, v float64, _ units) { g.fbReserved = model.Of(v) }},
	{name: "DCGM_FI_DEV_FB_TOTAL", metric: accelschema.MetricPartitionMemoryLimit, apply: func(g *group, v float64, _ units) { g.fbTotal = model.Of(v) }},
	{name: "DCGM_FI_DEV_FB_USED_PERCENT", metric: accelschema.MetricGPUMemoryUtilization, apply: func(g *group, v float64, _ units) { g.fbUsedRatio = model.Of(v) }},

	{name: "DCGM_FI_DEV_POWER_USAGE", metric: accelschema.MetricPower, apply: func(g *group, v float64, _ units) { g.s.Power = model.Of(v) }},
	{name: "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", metric: accelschema.MetricEnergy, apply: func(g *group, v float64, _ units) { g.s.Energy = model.Of(v / 1000) }},

	{name: "DCGM_FI_DEV_GPU_TEMP", metric: accelschema.MetricTemperature, apply: func(g *group, v float64, _ units) { g.s.TempGPU = model.Of(v) }},
	{name: "DCGM_FI_DEV_MEMORY_TEMP", metric: accelschema.MetricTemperature, apply: func(g *group, v float64, _ units) { g.s.TempMemory = model.Of(v) }},

	{name: "DCGM_FI_DEV_SM_CLOCK", metric: accelschema.MetricClockFrequency, apply: func(g *group, v float64, _ units) { g.s.ClockSM = model.Of(v * 1e6) }},
	{name: "DCGM_FI_DEV_MEM_CLOCK", metric: accelschema.MetricClockFrequency, apply: func(g *group, v float64, _ units) { g.s.ClockMemory = model.Of(v * 1e6) }},

	{name: "DCGM_FI_DEV_POWER_VIOLATION", metric: accelschema.MetricThrottleTime, apply: violation(model.ThrottlePower)},
	{name: "DCGM_FI_DEV_THERMAL_VIOLATION", metric: accelschema.MetricThrottleTime, apply: violation(model.ThrottleThermal)},
	{name: "DCGM_FI_DEV_SYNC_BOOST_VIOLATION", metric: accelschema.MetricThrottleTime, apply: violation(model.ThrottleSyncBoost)},
	{name: "DCGM_FI_DEV_BOARD_LIMIT_VIOLATION", metric: accelschema.MetricThrottleTime, apply: violation(model.ThrottleBoardLimit)},
	{name: "DCGM_FI_DEV_LOW_UTIL_VIOLATION", metric: accelschema.MetricThrottleTime, apply: violation(model.ThrottleLowUtil)},
	{name: "DCGM_FI_DEV_RELIABILITY_VIOLATION", metric: accelschema.MetricThrottleTime, apply: violation(model.ThrottleReliability)},
	{name: "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", metric: accelschema.MetricThrottleActive, apply: throttleReasons},
	{name: "DCGM_FI_DEV_CLOCKS_EVENT_REASONS", metric: accelschema.MetricThrottleActive, apply: throttleReasons},

	{name: "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", metric: accelschema.MetricErrors, apply: errorCount(model.ErrPCIeReplay)},
	{name: "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", metric: accelschema.MetricErrors, apply: errorCount(model.ErrECCCorrected)},
	{name: "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", metric: accelschema.MetricErrors, apply: errorCount(model.ErrECCUncorrected)},
	// Flit and data CRC errors are both CRC errors: they add up.
	{name: "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", metric: accelschema.MetricErrors, apply: addErrorCount(model.ErrNVLinkCRC)},
	{name: "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL", metric: accelschema.MetricErrors, apply: addErrorCount(model.ErrNVLinkCRC)},
	{name: "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", metric: accelschema.MetricErrors, apply: errorCount(model.ErrNVLinkReplay)},
	{name: "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL", metric: accelschema.MetricErrors, apply: errorCount(model.ErrNVLinkRecovery)},
	// The last XID (4.x adds err_code/err_msg labels, which change nothing
	// here), and newer exporters' count of each XID over a window.
	{name: "DCGM_FI_DEV_XID_ERRORS", metric: accelschema.MetricErrors, apply: func(g *group, v float64, _ units) { g.s.LastXID = model.Of(v) }},
	{name: "DCGM_EXP_XID_ERRORS_COUNT", metric: accelschema.MetricErrors, byXID: true},

	{name: "DCGM_FI_PROF_GR_ENGINE_ACTIVE", metric: accelschema.MetricGREngineActive, apply: func(g *group, v float64, _ units) { g.s.GREngineActive = model.Of(v) }},
	{name: "DCGM_FI_PROF_SM_ACTIVE", metric: accelschema.MetricSMActive, apply: func(g *group, v float64, _ units) { g.s.SMActive = model.Of(v) }},
	{name: "DCGM_FI_PROF_SM_OCCUPANCY", metric: accelschema.MetricSMOccupancy, apply: func(g *group, v float64, _ units) { g.s.SMOccupancy = model.Of(v) }},
	{name: "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", metric: accelschema.MetricTensorActive, apply: func(g *group, v float64, _ units) { g.s.TensorActive = model.Of(v) }},
	{name: "DCGM_FI_PROF_DRAM_ACTIVE", metric: accelschema.MetricDRAMActive, apply: func(g *group, v float64, _ units) { g.s.DRAMActive = model.Of(v) }},

	// PROF_*_BYTES are rates in bytes per second despite their names.
	{name: "DCGM_FI_PROF_PCIE_TX_BYTES", metric: accelschema.MetricLinkThroughput, apply: linkRate(model.LinkPCIe, model.DirTransmit)},
	{name: "DCGM_FI_PROF_PCIE_RX_BYTES", metric: accelschema.MetricLinkThroughput, apply: linkRate(model.LinkPCIe, model.DirReceive)},
	{name: "DCGM_FI_PROF_NVLINK_TX_BYTES", metric: accelschema.MetricLinkThroughput, apply: linkRate(model.LinkNVLink, model.DirTransmit)},
	{name: "DCGM_FI_PROF_NVLINK_RX_BYTES", metric: accelschema.MetricLinkThroughput, apply: linkRate(model.LinkNVLink, model.DirReceive)},
	// The 1.x/2.x NVML-based PCIe throughput, in KB/s; used only when the
	// profiling field is absent.
	{name: "DCGM_FI_DEV_PCIE_TX_THROUGHPUT", metric: accelschema.MetricLinkThroughput,
		apply: func(g *group, v float64, _ units) { g.pcieLegacy[model.DirTransmit] = model.Of(v * 1024) }},
	{name: "DCGM_FI_DEV_PCIE_RX_THROUGHPUT", metric: accelschema.MetricLinkThroughput,
		apply: func(g *group, v float64, _ units) { g.pcieLegacy[model.DirReceive] = model.Of(v * 1024) }},

	{name: "DCGM_FI_DEV_RETIRED_SBE", metric: accelschema.MetricRetiredPages, apply: func(g *group, v float64, _ units) {
		g.s.RetiredPages[model.RetiredSingleBit] = model.Of(v)
	}},
	{name: "DCGM_FI_DEV_RETIRED_DBE", metric: accelschema.MetricRetiredPages, apply: func(g *group, v float64, _ units) {
		g.s.RetiredPages[model.RetiredDoubleBit] = model.Of(v)
	}},
	{name: "DCGM_FI_DEV_RETIRED_PENDING", metric: accelschema.MetricRetiredPages, apply: func(g *group, v float64, _ units) {
		g.s.RetiredPages[model.RetiredPending] = model.Of(v)
		g.s.RetirementPending = model.Bool(v > 0)
	}},
	{name: "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", metric: accelschema.MetricRemappedRows, apply: func(g *group, v float64, _ units) { g.s.RemappedCorrectable = model.Of(v) }},
	{name: "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", metric: accelschema.MetricRemappedRows, apply: func(g *group, v float64, _ units) { g.s.RemappedUncorrectable = model.Of(v) }},
	{name: "DCGM_FI_DEV_ROW_REMAP_FAILURE", metric: accelschema.MetricRowRemapFailed, apply: func(g *group, v float64, _ units) { g.s.RemapFailed = model.Bool(v > 0) }},
	{name: "DCGM_FI_DEV_ROW_REMAP_PENDING", metric: accelschema.MetricRowRemapPending, apply: func(g *group, v float64, _ units) { g.s.RemapPending = model.Bool(v > 0) }},
}

// fieldIndex finds a family's entry in fields.
var fieldIndex = func() map[string]int {
	out := make(map[string]int, len(fields))
	for i := range fields {
		f := &fields[i]
		def, ok := accelschema.LookupMetric(f.metric)
		if !ok {
			panic("exportersource: " + f.name + " feeds unregistered metric " + f.metric)
		}
		f.device = def.Counted == accelschema.CountedPerDevice
		out[f.name] = i
	}
	return out
}()

func throttleReasons(g *group, v float64, _ units) { g.s.SetThrottleReasons(uint64(v)) }

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
