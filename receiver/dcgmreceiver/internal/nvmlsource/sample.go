package nvmlsource

import (
	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/model"
)

// violationPolicies are the throttle reasons NVML keeps a violation time
// for (nvmlDeviceGetViolationStatus, nanoseconds).
var violationPolicies = [...]struct {
	policy nvml.PerfPolicyType
	reason int
}{
	{nvml.PERF_POLICY_POWER, model.ThrottlePower},
	{nvml.PERF_POLICY_THERMAL, model.ThrottleThermal},
	{nvml.PERF_POLICY_SYNC_BOOST, model.ThrottleSyncBoost},
	{nvml.PERF_POLICY_BOARD_LIMIT, model.ThrottleBoardLimit},
	{nvml.PERF_POLICY_LOW_UTILIZATION, model.ThrottleLowUtil},
	{nvml.PERF_POLICY_RELIABILITY, model.ThrottleReliability},
}

// reading tracks one device's calls within a scrape: a lost GPU stops the
// rest of its reads, unsupported reads are simply absent, other failures
// are reported (rate-limited) once per call.
type reading struct {
	s    *Source
	g    *gpu
	lost bool
}

func (r *reading) ok(call string, ret nvml.Return) bool {
	switch ret {
	case nvml.SUCCESS:
		return true
	case nvml.ERROR_GPU_IS_LOST:
		r.lost = true
	default:
		r.s.callFailed(r.g, call, ret)
	}
	return false
}

// callFailed reports a failed NVML call; "not supported" is normal (a
// feature the GPU lacks) and stays quiet.
func (s *Source) callFailed(g *gpu, call string, ret nvml.Return) {
	switch ret {
	case nvml.ERROR_NOT_SUPPORTED, nvml.ERROR_FUNCTION_NOT_FOUND, nvml.ERROR_NOT_FOUND:
		return
	}
	s.warnf(g.id.HWID+"/"+call, "NVML %s failed on %s: %v", call, g.id.HWID, ret)
}

// sampleGPU appends the GPU's sample and those of its MIG instances.
func (s *Source) sampleGPU(g *gpu, snap *model.Snapshot) {
	h := g.handle
	r := &reading{s: s, g: g}
	smp := model.Sample{Identity: g.id}

	mem, ret := h.GetMemoryInfo()
	if r.ok("GetMemoryInfo", ret) {
		smp.MemUsed, smp.MemTotal = model.Of(float64(mem.Used)), model.Of(float64(mem.Total))
		if mem.Total > 0 {
			smp.MemUtil = model.Of(float64(mem.Used) / float64(mem.Total))
		}
	}
	if r.lost {
		smp.Lost = true
		if g.selected {
			snap.Samples = append(snap.Samples, smp)
		}
		return
	}
	migMode := false
	if cur, _, ret := h.GetMigMode(); ret == nvml.SUCCESS && cur == nvml.DEVICE_MIG_ENABLE {
		migMode = true
	}
	if !migMode {
		// Utilization counters are not available with MIG enabled; the MIG
		// instances report GPM activity instead.
		if u, ret := h.GetUtilizationRates(); r.ok("GetUtilizationRates", ret) {
			smp.GPUUtil = model.Of(float64(u.Gpu) / 100)
		}
		if u, _, ret := h.GetEncoderUtilization(); r.ok("GetEncoderUtilization", ret) {
			smp.EncoderUtil = model.Of(float64(u) / 100)
		}
		if u, _, ret := h.GetDecoderUtilization(); r.ok("GetDecoderUtilization", ret) {
			smp.DecoderUtil = model.Of(float64(u) / 100)
		}
	}
	if mw, ret := h.GetPowerUsage(); r.ok("GetPowerUsage", ret) {
		smp.Power = model.Of(float64(mw) / 1000)
	}
	if mj, ret := h.GetTotalEnergyConsumption(); r.ok("GetTotalEnergyConsumption", ret) {
		smp.Energy = model.Of(float64(mj) / 1000)
	}
	if t, ret := h.GetTemperature(nvml.TEMPERATURE_GPU); r.ok("GetTemperature", ret) {
		smp.TempGPU = model.Of(float64(t))
	}
	if mhz, ret := h.GetClockInfo(nvml.CLOCK_SM); r.ok("GetClockInfo(SM)", ret) {
		smp.ClockSM = model.Of(float64(mhz) * 1e6)
	}
	if mhz, ret := h.GetClockInfo(nvml.CLOCK_MEM); r.ok("GetClockInfo(MEM)", ret) {
		smp.ClockMemory = model.Of(float64(mhz) * 1e6)
	}
	if mask, ret := h.GetCurrentClocksEventReasons(); r.ok("GetCurrentClocksEventReasons", ret) {
		smp.SetThrottleReasons(mask)
	}
	for _, p := range violationPolicies {
		if v, ret := h.GetViolationStatus(p.policy); r.ok("GetViolationStatus", ret) {
			smp.ThrottleTime[p.reason] = model.Of(float64(v.ViolationTime) / 1e9)
		}
	}
	if n, ret := h.GetTotalEccErrors(nvml.MEMORY_ERROR_TYPE_CORRECTED, nvml.VOLATILE_ECC); r.ok("GetTotalEccErrors", ret) {
		smp.Errors[model.ErrECCCorrected] = model.Of(float64(n))
	}
	if n, ret := h.GetTotalEccErrors(nvml.MEMORY_ERROR_TYPE_UNCORRECTED, nvml.VOLATILE_ECC); r.ok("GetTotalEccErrors", ret) {
		smp.Errors[model.ErrECCUncorrected] = model.Of(float64(n))
	}
	if n, ret := h.GetPcieReplayCounter(); r.ok("GetPcieReplayCounter", ret) {
		smp.Errors[model.ErrPCIeReplay] = model.Of(float64(n))
	}
	if kbs, ret := h.GetPcieThroughput(nvml.PCIE_UTIL_TX_BYTES); r.ok("GetPcieThroughput", ret) {
		smp.LinkRate[model.LinkPCIe][model.DirTransmit] = model.Of(float64(kbs) * 1024)
	}
	if kbs, ret := h.GetPcieThroughput(nvml.PCIE_UTIL_RX_BYTES); r.ok("GetPcieThroughput", ret) {
		smp.LinkRate[model.LinkPCIe][model.DirReceive] = model.Of(float64(kbs) * 1024)
	}
	s.readFieldValues(r, &smp)
	if pages, ret := h.GetRetiredPages(nvml.PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS); r.ok("GetRetiredPages", ret) {
		smp.RetiredPages[model.RetiredSingleBit] = model.Of(float64(len(pages)))
	}
	if pages, ret := h.GetRetiredPages(nvml.PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR); r.ok("GetRetiredPages", ret) {
		smp.RetiredPages[model.RetiredDoubleBit] = model.Of(float64(len(pages)))
	}
	if st, ret := h.GetRetiredPagesPendingStatus(); r.ok("GetRetiredPagesPendingStatus", ret) {
		smp.RetirementPending = model.Bool(st == nvml.FEATURE_ENABLED)
	}
	if corr, unc, pending, failed, ret := h.GetRemappedRows(); r.ok("GetRemappedRows", ret) {
		smp.RemappedCorrectable, smp.RemappedUncorrectable = model.Of(float64(corr)), model.Of(float64(unc))
		smp.RemapPending, smp.RemapFailed = model.Bool(pending), model.Bool(failed)
	}

	var migs []*migDevice
	if migMode && !r.lost {
		migs = s.refreshMIG(g, smp.MemTotal.V)
	}
	if s.set.Want.GPM && g.gpm && !migMode && !r.lost {
		s.readGPM(&g.gpmPair, func(sm nvml.GpmSample) nvml.Return { return h.GpmSampleGet(sm) }, &smp, g)
	}
	var migProcs map[string][]model.Process
	if s.set.Want.Processes && !r.lost {
		if migMode {
			migProcs = s.migProcesses(r, g, migs)
		} else {
			smp.Processes = s.gpuProcesses(r, g)
		}
	}
	if r.lost {
		smp = model.Sample{Identity: g.id, Lost: true}
		migs = nil
	}
	// In MIG mode the GPU's memory use is its instances' (they report it
	// themselves); the GPU keeps its memory size and what the board measures.
	smp.Partitioned = migMode && !r.lost
	smp.KeepOwn()
	if g.selected {
		snap.Samples = append(snap.Samples, smp)
	}
	for _, m := range migs {
		snap.Samples = append(snap.Samples, s.sampleMIG(g, m, migProcs[m.id.HWID]))
	}
}

// sampleMIG reads one MIG instance: its memory, its GPM activity (read
// through the parent GPU) and its processes.
func (s *Source) sampleMIG(g *gpu, m *migDevice, procs []model.Process) model.Sample {
	r := &reading{s: s, g: g}
	smp := model.Sample{Identity: m.id}
	if mem, ret := m.handle.GetMemoryInfo(); r.ok("MIG GetMemoryInfo", ret) {
		smp.MemUsed, smp.MemTotal = model.Of(float64(mem.Used)), model.Of(float64(mem.Total))
		if mem.Total > 0 {
			smp.MemUtil = model.Of(float64(mem.Used) / float64(mem.Total))
		}
	}
	if s.set.Want.GPM && g.gpm {
		gi := m.id.GPUInstanceID
		s.readGPM(&m.gpmPair, func(sm nvml.GpmSample) nvml.Return { return g.handle.GpmMigSampleGet(gi, sm) }, &smp, g)
	}
	smp.Processes = procs
	smp.KeepOwn()
	return smp
}
