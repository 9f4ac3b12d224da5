package nvmlsource

import (
	"slices"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/model"
)

// notAvailable is NVML_VALUE_NOT_AVAILABLE (-1) as an unsigned long long.
const notAvailable = ^uint64(0)

// readProcesses lists the compute and MPS client processes on a GPU with
// their memory and SM utilization, so that a shared GPU can be split per
// pod downstream. With MIG enabled, processes are handed to their MIG
// instance by GPU-instance id (returned map); the others stay on the GPU.
func (s *Source) readProcesses(r *reading, g *gpu, smp *model.Sample, migMode bool) map[uint32][]model.Process {
	h := g.handle
	type proc struct {
		mem uint64
		gi  uint32
	}
	byPID := map[uint32]proc{}
	add := func(list []nvml.ProcessInfo) {
		for _, p := range list {
			// A process can be both a compute process and an MPS client;
			// it holds its memory once.
			if cur, ok := byPID[p.Pid]; !ok || p.UsedGpuMemory > cur.mem {
				byPID[p.Pid] = proc{mem: p.UsedGpuMemory, gi: p.GpuInstanceId}
			}
		}
	}
	if list, ret := h.GetComputeRunningProcesses(); r.ok("GetComputeRunningProcesses", ret) {
		add(list)
	}
	if list, ret := h.GetMPSComputeRunningProcesses(); r.ok("GetMPSComputeRunningProcesses", ret) {
		add(list)
	}
	util := map[uint32][2]float64{} // pid → sum, count
	if !migMode {
		samples, ret := h.GetProcessUtilization(g.lastProcessSample)
		if r.ok("GetProcessUtilization", ret) {
			for _, ps := range samples {
				if ps.TimeStamp > g.lastProcessSample {
					g.lastProcessSample = ps.TimeStamp
				}
				u := util[ps.Pid]
				util[ps.Pid] = [2]float64{u[0] + float64(ps.SmUtil), u[1] + 1}
			}
		}
	}
	pids := make([]uint32, 0, len(byPID))
	for pid := range byPID {
		pids = append(pids, pid)
	}
	slices.Sort(pids)
	var perGI map[uint32][]model.Process
	for _, pid := range pids {
		p := byPID[pid]
		mp := model.Process{PID: int64(pid)}
		// NVML reports an unknown amount (e.g. without permission to see
		// other containers' processes) as the "not available" sentinel.
		if p.mem != notAvailable {
			mp.MemBytes = model.Of(float64(p.mem))
		}
		if u, ok := util[pid]; ok && u[1] > 0 {
			mp.SMUtil = model.Of(u[0] / u[1] / 100)
		}
		if migMode && p.gi != noInstance {
			if perGI == nil {
				perGI = map[uint32][]model.Process{}
			}
			perGI[p.gi] = append(perGI[p.gi], mp)
			continue
		}
		smp.Processes = append(smp.Processes, mp)
	}
	return perGI
}
