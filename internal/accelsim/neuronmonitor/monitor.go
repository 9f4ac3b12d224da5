package neuronmonitor

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/detrand"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/fleet"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/scenario"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/sim"
)

// Monitor is one neuron-monitor process watching one Neuron node.
type Monitor struct {
	node     *fleet.Node
	world    *sim.World
	timeline sim.Timeline
	runtimes []*sim.NeuronRuntime
	groups   []*groupState
	rep      report
	data     map[*sim.NeuronRuntime]*runtimeReport
}

// groupState schedules one metric group, of one runtime or of the system.
type groupState struct {
	rt     *sim.NeuronRuntime // nil for system groups
	plan   groupPlan
	last   time.Time
	next   time.Time
	lastT  float64 // simulated time of the last collection
	filled bool
}

// New prepares a monitor; started is when the process started.
func New(cfg *Config, w *sim.World, n *fleet.Node, tl sim.Timeline, started time.Time) (*Monitor, error) {
	if n.Shape == nil {
		return nil, fmt.Errorf("node %s has no Neuron devices (instance type %s)", n.Name, n.InstanceType)
	}
	p, err := cfg.plan()
	if err != nil {
		return nil, err
	}
	m := &Monitor{node: n, world: w, timeline: tl, data: map[*sim.NeuronRuntime]*runtimeReport{}}
	t0 := tl.ElapsedAt(started)
	for _, rt := range w.NeuronRuntimes(n) {
		for _, rp := range p.runtimes {
			if !rp.filter.MatchString(rt.Tag) {
				continue
			}
			m.runtimes = append(m.runtimes, rt)
			m.data[rt] = &runtimeReport{}
			for _, g := range rp.groups {
				m.groups = append(m.groups, &groupState{rt: rt, plan: g, last: started, next: started.Add(g.period), lastT: t0})
			}
			break // the first matching entry applies
		}
	}
	for _, g := range p.system {
		m.groups = append(m.groups, &groupState{plan: g, last: started, next: started.Add(g.period), lastT: t0})
	}
	m.rep.InstanceInfo = instanceInfo{
		InstanceID: n.InstanceID, InstanceType: n.InstanceType, AvailabilityZone: n.Zone, ZoneID: n.ZoneID,
		Region: n.Region, AMIID: n.AMIID, SubnetID: n.SubnetID,
	}
	s := n.Shape
	if n.NeuronSchema == scenario.NeuronSchemaLegacy {
		m.rep.NeuronHardwareInfo = legacyHardwareInfo{DeviceCount: len(n.NeuronDevices), CoresPerDevice: s.CoresPerDevice}
	} else {
		m.rep.NeuronHardwareInfo = hardwareInfo{
			DeviceType: s.DeviceType, DeviceVersion: s.DeviceVersion, CoreVersion: s.CoreVersion,
			DeviceCount: len(n.NeuronDevices), DeviceMemorySize: s.DeviceMemoryBytes,
			CoresPerDevice: s.CoresPerDevice, LogicalCoreConfig: s.LogicalCoreConfig,
		}
	}
	return m, nil
}

// NextDue is when the next metric group is due.
func (m *Monitor) NextDue() (time.Time, bool) {
	var next time.Time
	for _, g := range m.groups {
		if next.IsZero() || g.next.Before(next) {
			next = g.next
		}
	}
	return next, !next.IsZero()
}

// Collect updates the groups due at now and returns the complete report,
// or nil when nothing was due.
func (m *Monitor) Collect(now time.Time) ([]byte, error) {
	due := false
	t1 := m.timeline.ElapsedAt(now)
	for _, g := range m.groups {
		if now.Before(g.next) {
			continue
		}
		due = true
		period := now.Sub(g.last).Seconds()
		m.collect(g, period, g.lastT, t1)
		g.last, g.lastT, g.filled = now, t1, true
		g.next = now.Add(g.plan.period)
	}
	if !due {
		return nil, nil
	}
	return m.encode()
}

func (m *Monitor) encode() ([]byte, error) {
	m.rep.NeuronRuntimeData = nil
	if m.node.NeuronSchema != scenario.NeuronSchemaLegacy || len(m.runtimes) > 0 {
		m.rep.NeuronRuntimeData = []runtimeEntry{}
	}
	for _, rt := range m.runtimes {
		m.rep.NeuronRuntimeData = append(m.rep.NeuronRuntimeData, runtimeEntry{PID: rt.PID, Tag: rt.Tag, Report: *m.data[rt]})
	}
	b, err := json.Marshal(&m.rep)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

func round(v float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}

func (m *Monitor) collect(g *groupState, period, t0, t1 float64) {
	n, w := m.node, m.world
	period = round(period, 9)
	if g.rt != nil {
		rr := m.data[g.rt]
		switch g.plan.typ {
		case GroupNeuronCoreCounters:
			rr.NeuroncoreCounters = m.coreCounters(g.rt, period, t1)
		case GroupExecutionStats:
			rr.ExecutionStats = m.execStats(g.rt, period, t0, t1)
		case GroupMemoryUsed:
			rr.MemoryUsed = m.memoryUsed(g.rt, period, t1)
		case GroupRuntimeVCPU:
			v := &runtimeVCPU{Period: period}
			if n.RuntimeVCPUError {
				v.Error = fmt.Sprintf("open /proc/%d/stat: no such file or directory", g.rt.PID)
			} else {
				u, s := w.RuntimeVCPU(g.rt, t1)
				v.VCPUUsage = userSys{User: round(u, 2), System: round(s, 2)}
			}
			rr.RuntimeVCPU = v
		}
		return
	}
	sd := &m.rep.SystemData
	switch g.plan.typ {
	case GroupHWCounters:
		hc := &hwCounters{Period: period, NeuronDevices: []hwDevice{}}
		for _, d := range n.NeuronDevices {
			e := w.DeviceECC(n, d.Index, t0, t1)
			hc.NeuronDevices = append(hc.NeuronDevices, hwDevice{NeuronDeviceIndex: d.Index,
				MemECCCorrected: e.MemCorrected, MemECCUncorrected: e.MemUncorrected,
				SRAMECCUncorrected: e.SRAMUncorrected, SRAMECCCorrected: e.SRAMCorrected})
		}
		sd.NeuronHWCounters = hc
	case GroupVCPUUsage:
		sd.VCPUUsage = m.systemVCPU(period, t1)
	case GroupMemoryInfo:
		total := int64(n.MemoryGiB) << 30
		used := (0.1 + 0.35*w.HostActivity(n, t1) + 0.01*w.Noise(n, "mem", 0, t1)) * float64(total)
		sd.MemoryInfo = &memInfo{Period: period, MemoryTotalBytes: total, MemoryUsedBytes: int64(used)}
	case GroupK8sInfo:
		m.rep.NeuronK8sInfo = m.k8sInfo(period)
	}
}

func (m *Monitor) coreCounters(rt *sim.NeuronRuntime, period, t float64) *ncCounters {
	n := m.node
	uses := map[int]bool{}
	for _, c := range rt.Cores {
		uses[c] = true
	}
	out := &ncCounters{Period: period, InUse: map[string]coreCounter{}}
	v3d := n.Shape.PhysicalPerLogical > 1 && n.NeuronSchema != scenario.NeuronSchemaLegacy
	// A runtime lists every core it can see, with 0 for the ones it does not use.
	for core := 0; core < n.CoreCount(); core++ {
		util, phys := 0.0, make([]float64, n.Shape.PhysicalPerLogical)
		if uses[core] {
			util, phys = m.world.CoreUtilization(n, core, t)
		}
		cc := coreCounter{Utilization: round(util, 10)}
		flops := int64(util / 100 * n.Shape.PeakFlopsPerCore * 0.55)
		if n.NeuronSchema == scenario.NeuronSchemaInf2Capture {
			cc.EffectiveFlops = &flops
		} else {
			cc.Flops = &flops
		}
		if v3d {
			cc.V3D = map[string]v3dCore{}
			for i, u := range phys {
				cc.V3D[fmt.Sprintf("nc_v3.%d", core*n.Shape.PhysicalPerLogical+i)] = v3dCore{Utilization: round(u, 2)}
			}
		}
		out.InUse[strconv.Itoa(core)] = cc
	}
	return out
}

func (m *Monitor) execStats(rt *sim.NeuronRuntime, period, t0, t1 float64) *execStats {
	st := m.world.RuntimeExecutions(m.node, rt, t0, t1)
	es := &execStats{
		Period: period,
		ErrorSummary: errorSummary{Generic: st.Generic, Numerical: st.Numerical, Transient: st.Transient,
			Model: st.Model, Runtime: st.Runtime, Hardware: st.Hardware},
		ExecutionSummary: execSummary{Completed: st.Completed, CompletedWithErr: st.CompletedWithErr,
			CompletedWithNumErr: st.CompletedWithNumErr, TimedOut: st.TimedOut, IncorrectInput: st.IncorrectInput, FailedToQueue: st.FailedToQueue},
	}
	conv := func(p *sim.Percentiles) *percentiles {
		if p == nil {
			return nil
		}
		return &percentiles{P0: round(p.P0, 8), P1: round(p.P1, 8), P25: round(p.P25, 8), P50: round(p.P50, 8),
			P75: round(p.P75, 8), P99: round(p.P99, 8), P100: round(p.P100, 8)}
	}
	es.LatencyStats = latencyStats{TotalLatency: conv(st.Total), DeviceLatency: conv(st.Device)}
	return es
}

func (m *Monitor) memoryUsed(rt *sim.NeuronRuntime, period, t float64) *memoryUsed {
	n := m.node
	mu := &memoryUsed{Period: period, LoadedModels: []loadedModel{}}
	cores := map[string]coreMem{}
	var device int64
	model := loadedModel{
		Name:      "neff",
		UUID:      detrand.Hex(32, uint64(rt.PID), "model", rt.Tag),
		ModelID:   10001 + int64(rt.PID%1000),
		IsRunning: true,
		Subgraphs: map[string]subgraph{},
	}
	for i, c := range rt.Cores {
		cm := m.world.RuntimeCoreMemory(n, rt, c, t)
		cores[strconv.Itoa(c)] = coreMem{Constants: cm.Constants, ModelCode: cm.ModelCode,
			ModelSharedScratchpad: cm.SharedScratchpad, RuntimeMemory: cm.RuntimeMemory, Tensors: cm.Tensors}
		device += cm.Total()
		model.Subgraphs[fmt.Sprintf("sg_%02d", i)] = subgraph{
			MemoryUsedBytes: subgraphMemory{
				Host: 20480, NeuronDevice: cm.Constants + cm.ModelCode,
				UsageBreakdown: subgraphBreakdown{
					Host:         hostMemory{ApplicationMemory: 20480},
					NeuronDevice: deviceMemory{Constants: cm.Constants, ModelCode: cm.ModelCode},
				},
			},
			NeuroncoreIndex:   c,
			NeuronDeviceIndex: c / n.Shape.CoresPerDevice,
		}
	}
	if device > 0 {
		mu.LoadedModels = append(mu.LoadedModels, model)
	}
	host := hostMemory{ApplicationMemory: 2<<30 + int64(len(rt.Cores))*(256<<20), DMABuffers: 1 << 20}
	ub := usedBytes{Host: host.ApplicationMemory + host.DMABuffers, UsageBreakdown: breakdown{Host: host, NeuroncoreMemoryUsage: cores}}
	if n.NeuronSchema == scenario.NeuronSchemaInf2Capture {
		ub.Device = &device
	} else {
		ub.NeuronDevice = &device
	}
	mu.RuntimeUsedBytes = ub
	return mu
}

func (m *Monitor) systemVCPU(period, t float64) *sysVCPU {
	n, w := m.node, m.world
	act := w.HostActivity(n, t)
	sv := &sysVCPU{Period: period, UsageData: map[string]cpuUsage{}}
	var sum cpuUsage
	for cpu := 0; cpu < n.VCPUs; cpu++ {
		user := math.Max(0, 4+30*act+6*w.Noise(n, "user", cpu, t))
		sys := math.Max(0, 1.5+8*act+1.5*w.Noise(n, "sys", cpu, t))
		u := cpuUsage{User: round(user, 2), System: round(sys, 2), IOWait: round(math.Max(0, 0.3*w.Noise(n, "io", cpu, t)), 2)}
		u.Idle = round(math.Max(0, 100-u.User-u.System-u.IOWait), 2)
		sv.UsageData[strconv.Itoa(cpu)] = u
		sum.User += u.User
		sum.System += u.System
		sum.IOWait += u.IOWait
		sum.Idle += u.Idle
	}
	c := float64(n.VCPUs)
	sv.AverageUsage = cpuUsage{User: round(sum.User/c, 2), System: round(sum.System/c, 2), IOWait: round(sum.IOWait/c, 2), Idle: round(sum.Idle/c, 2)}
	sv.ContextSwitchCount = int64(period * float64(n.VCPUs) * (800 + 4000*act))
	return sv
}

func (m *Monitor) k8sInfo(period float64) *k8sInfo {
	n := m.node
	ki := &k8sInfo{Period: period, Neuroncores: map[string]k8sEntry{}, Devices: map[string]k8sEntry{}}
	for _, p := range n.Pods {
		for _, c := range p.Containers {
			e := k8sEntry{PodName: p.Name, Namespace: p.Namespace, ContainerName: []string{c.Name}}
			for _, core := range c.NeuronCores {
				ki.Neuroncores[strconv.Itoa(core)] = e
			}
			for _, d := range c.NeuronDevs {
				ki.Devices[strconv.Itoa(d)] = e
			}
		}
	}
	return ki
}

// Run writes a report whenever a group is due until ctx ends. A write error
// (the reader went away) ends it too.
func (m *Monitor) Run(ctx context.Context, clock sim.Clock, out io.Writer) error {
	bw := bufio.NewWriterSize(out, 1<<16)
	for {
		next, ok := m.NextDue()
		if !ok {
			<-ctx.Done()
			return nil
		}
		timer := time.NewTimer(time.Until(next))
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-timer.C:
		}
		b, err := m.Collect(clock.Now())
		if err != nil {
			return err
		}
		if b == nil {
			continue
		}
		if _, err := bw.Write(b); err != nil {
			return fmt.Errorf("write report: %w", err)
		}
		if err := bw.Flush(); err != nil {
			return fmt.Errorf("write report: %w", err)
		}
	}
}
