package nvmlsource

import (
	"slices"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/model"
)

// notAvailable is NVML_VALUE_NOT_AVAILABLE (-1) as an unsigned long long.
const notAvailable = ^uint64(0)

// processList is the compute and MPS client processes of one device (a GPU,
// or a MIG instance), by PID, with their memory and GPU-instance id.
type processList map[uint32]nvml.ProcessInfo

// listProcesses asks a device for its compute and MPS client processes. A
// process can be both (an MPS client is also a compute process of the MPS
// server's context); it holds its memory once.
func listProcesses(h nvml.Device) (processList, nvml.Return) {
	out := processList{}
	add := func(list []nvml.ProcessInfo) {
		for _, p := range list {
			if cur, ok := out[p.Pid]; !ok || p.UsedGpuMemory > cur.UsedGpuMemory {
				out[p.Pid] = p
			}
		}
	}
	compute, ret := h.GetComputeRunningProcesses()
	if ret != nvml.SUCCESS {
		return nil, ret
	}
	add(compute)
	mps, ret := h.GetMPSComputeRunningProcesses()
	if ret == nvml.SUCCESS {
		add(mps)
	}
	return out, nvml.SUCCESS
}

// toModel orders processes by PID and attaches SM utilization (percent
// samples averaged per PID) where there is some.
func (pl processList) toModel(util map[uint32]float64) []model.Process {
	pids := make([]uint32, 0, len(pl))
	for pid := range pl {
		pids = append(pids, pid)
	}
	slices.Sort(pids)
	out := make([]model.Process, 0, len(pids))
	for _, pid := range pids {
		p := model.Process{PID: int64(pid)}
		// NVML reports an amount it cannot see (another container's process
		// without the permission to look) as "not available".
		if mem := pl[pid].UsedGpuMemory; mem != notAvailable {
			p.MemBytes = model.Of(float64(mem))
		}
		if u, ok := util[pid]; ok {
			p.SMUtil = model.Of(u)
		}
		out = append(out, p)
	}
	return out
}

// gpuProcesses reads a GPU's processes with their SM utilization since the
// previous scrape, so that a shared GPU can be split per pod downstream.
func (s *Source) gpuProcesses(r *reading, g *gpu) []model.Process {
	pl, ret := listProcesses(g.handle)
	if !r.ok("GetComputeRunningProcesses", ret) {
		return nil
	}
	util := map[uint32]float64{}
	samples, ret := g.handle.GetProcessUtilization(g.lastProcessSample)
	if r.ok("GetProcessUtilization", ret) {
		sum, n := map[uint32]float64{}, map[uint32]float64{}
		for _, ps := range samples {
			if ps.TimeStamp > g.lastProcessSample {
				g.lastProcessSample = ps.TimeStamp
			}
			sum[ps.Pid] += float64(ps.SmUtil)
			n[ps.Pid]++
		}
		for pid := range sum {
			util[pid] = sum[pid] / n[pid] / 100
		}
	}
	return pl.toModel(util)
}

// migProcesses reads each MIG instance's processes through its own handle
// (NVML has no per-process utilization on MIG). Drivers that do not answer
// on MIG handles get the GPU's list split by GPU-instance id instead.
func (s *Source) migProcesses(r *reading, g *gpu, migs []*migDevice) map[string][]model.Process {
	out := make(map[string][]model.Process, len(migs))
	var fallback []*migDevice
	for _, m := range migs {
		pl, ret := listProcesses(m.handle)
		switch ret {
		case nvml.SUCCESS:
			out[m.id.HWID] = pl.toModel(nil)
		case nvml.ERROR_NOT_SUPPORTED, nvml.ERROR_INVALID_ARGUMENT:
			fallback = append(fallback, m)
		default:
			r.ok("MIG GetComputeRunningProcesses", ret)
		}
	}
	if len(fallback) == 0 {
		return out
	}
	all, ret := listProcesses(g.handle)
	if !r.ok("GetComputeRunningProcesses", ret) {
		return out
	}
	for _, m := range fallback {
		pl := processList{}
		for pid, p := range all {
			if p.GpuInstanceId != noInstance && int(p.GpuInstanceId) == m.id.GPUInstanceID &&
				(p.ComputeInstanceId == noInstance || m.id.ComputeInstanceID < 0 || int(p.ComputeInstanceId) == m.id.ComputeInstanceID) {
				pl[pid] = p
			}
		}
		out[m.id.HWID] = pl.toModel(nil)
	}
	return out
}
