package mapping

import (
	"slices"
	"sort"

	"github.com/otelcol-accel/otelcol-accel/receiver/neuronreceiver/internal/metadata"
)

// emit records one report's data points, device by device, each device
// followed by its NeuronCores, so the output order is stable.
func (m *Mapper) emit(v *reportView) {
	if m.hw.coresPerDevice > 0 {
		for c := range v.cores {
			m.deviceState(c / m.hw.coresPerDevice)
		}
	}
	for d := 0; d < m.hw.deviceCount; d++ {
		m.deviceState(d)
	}
	devices := make([]int, 0, len(m.devices))
	for d := range m.devices {
		devices = append(devices, d)
	}
	sort.Ints(devices)

	coresByDevice := map[int][]int{}
	if m.hw.coresPerDevice > 0 {
		for d := range m.devices {
			if d < m.hw.deviceCount {
				for c := d * m.hw.coresPerDevice; c < (d+1)*m.hw.coresPerDevice; c++ {
					coresByDevice[d] = append(coresByDevice[d], c)
				}
			}
		}
		for c := range v.cores {
			d := c / m.hw.coresPerDevice
			if d >= m.hw.deviceCount {
				coresByDevice[d] = append(coresByDevice[d], c)
			}
		}
	}

	for _, d := range devices {
		m.emitDevice(d)
		cores := coresByDevice[d]
		sort.Ints(cores)
		for _, c := range cores {
			m.emitCore(c, v)
		}
	}
	for _, rd := range v.runtimes {
		if rd.primary < 0 || m.hw.coresPerDevice == 0 {
			m.emitRuntime(rd)
			m.mb.EmitForResource(metadata.WithResource(m.runtimeResource(rd.key.tag)))
		}
	}
}

func (m *Mapper) deviceState(d int) *deviceState {
	ds := m.devices[d]
	if ds == nil {
		ds = newDeviceState(m.window(0))
		m.devices[d] = ds
	}
	return ds
}

// emitDevice records what only the physical device has: its memory size,
// ECC counters and state. Everything its NeuronCores report (utilization,
// memory use, runtime series) stays on the cores, so that a sum over all
// resources counts each quantity once (accelschema.CountedPerDevice).
func (m *Mapper) emitDevice(d int) {
	ds := m.devices[d]
	mb := m.mb
	mb.Reset(metadata.WithStartTime(ds.start))
	if m.hw.memorySize > 0 {
		mb.RecordHwGpuMemoryLimitDataPoint(m.ts, m.hw.memorySize)
	}
	if ds.anyReported() {
		for k := range eccKinds {
			if ds.reported[k] {
				mb.RecordHwErrorsDataPoint(m.ts, ds.ecc[k], eccTable[k].attr)
			}
		}
		for _, s := range hwStates {
			var on int64
			if s == ds.state {
				on = 1
			}
			mb.RecordHwStatusDataPoint(m.ts, on, metadata.MapAttributeHwState[s])
		}
	}
	res := m.deviceResource(d)
	m.attachHealthResource(d, res)
	mb.EmitForResource(metadata.WithResource(res))
}

func (m *Mapper) emitCore(c int, v *reportView) {
	cd := v.cores[c]
	mb := m.mb
	if cd == nil || (len(cd.uses) == 0 && len(cd.primaryOf) == 0) {
		if !v.coresKnown {
			return
		}
		// Nobody holds this core: it is idle.
		mb.Reset(metadata.WithStartTime(m.window(0)))
		mb.RecordHwGpuUtilizationDataPoint(m.ts, 0)
		if cd != nil && cd.zeroFlops {
			mb.RecordAcceleratorFlopsDataPoint(m.ts, 0)
		}
		mb.EmitForResource(metadata.WithResource(m.coreResource(c, "")))
		return
	}

	tags := make([]string, 0, 1)
	for i := range cd.uses {
		if !slices.Contains(tags, cd.uses[i].rt.key.tag) {
			tags = append(tags, cd.uses[i].rt.key.tag)
		}
	}
	for _, rd := range cd.primaryOf {
		if !slices.Contains(tags, rd.key.tag) {
			tags = append(tags, rd.key.tag)
		}
	}
	sort.Strings(tags)
	slices.SortFunc(cd.uses, func(a, b coreUse) int { return compareKeys(a.rt.key, b.rt.key) })
	slices.SortFunc(cd.primaryOf, func(a, b *runtimeData) int { return compareKeys(a.key, b.key) })

	for _, tag := range tags {
		for i := range cd.uses {
			u := &cd.uses[i]
			if u.rt.key.tag != tag {
				continue
			}
			pid := pidAttribute(u.rt.key.pid)
			if u.hasUtil || u.hasFlops {
				mb.Reset(metadata.WithStartTime(u.utilStart))
				mb.RecordHwGpuUtilizationDataPoint(m.ts, u.util, pid...)
				if u.hasFlops {
					mb.RecordAcceleratorFlopsDataPoint(m.ts, u.flops, pid...)
				}
			} else if v.coresKnown {
				// Held for its memory but not busy: that is worth seeing.
				mb.Reset(metadata.WithStartTime(m.window(0)))
				mb.RecordHwGpuUtilizationDataPoint(m.ts, 0, pid...)
			}
			if u.memoryValid {
				mb.Reset(metadata.WithStartTime(u.rt.state.start))
				for _, cat := range categories(u.memory) {
					if b := u.memory[cat]; finite(b) && b >= 0 {
						mb.RecordHwGpuMemoryUsageDataPoint(m.ts, int64(b), cat, pid...)
					}
				}
			}
		}
		for _, rd := range cd.primaryOf {
			if rd.key.tag == tag {
				m.emitRuntime(rd)
			}
		}
		mb.EmitForResource(metadata.WithResource(m.coreResource(c, tag)))
	}
}

// emitRuntime records the runtime-scoped metrics of one runtime onto the
// resource being built.
func (m *Mapper) emitRuntime(rd *runtimeData) {
	mb := m.mb
	pid := pidAttribute(rd.key.pid)
	if len(rd.latency) > 0 {
		mb.Reset(metadata.WithStartTime(rd.latencyStart))
		for _, l := range rd.latency {
			mb.RecordAcceleratorExecutionLatencyDataPoint(m.ts, l.seconds, l.kind, l.percentile, pid...)
		}
	}
	st := rd.state
	mb.Reset(metadata.WithStartTime(st.start))
	if st.hasCounts {
		for _, s := range statusOrder {
			mb.RecordAcceleratorExecutionCountDataPoint(m.ts, st.outcomes[s], s, pid...)
		}
		for _, e := range errorOrder {
			mb.RecordAcceleratorExecutionErrorsDataPoint(m.ts, st.errors[e], e, pid...)
		}
	}
	if rd.memHost != nil {
		mb.RecordAcceleratorRuntimeMemoryUsageDataPoint(m.ts, int64(*rd.memHost), metadata.AttributeMemoryLocationHost, pid...)
	}
	if rd.memDevice != nil {
		mb.RecordAcceleratorRuntimeMemoryUsageDataPoint(m.ts, int64(*rd.memDevice), metadata.AttributeMemoryLocationDevice, pid...)
	}
	if rd.cpuUser != nil || rd.cpuSystem != nil {
		mb.Reset(metadata.WithStartTime(rd.cpuStart))
		if rd.cpuUser != nil {
			mb.RecordAcceleratorRuntimeCPUUtilizationDataPoint(m.ts, *rd.cpuUser, metadata.AttributeCPUModeUser, pid...)
		}
		if rd.cpuSystem != nil {
			mb.RecordAcceleratorRuntimeCPUUtilizationDataPoint(m.ts, *rd.cpuSystem, metadata.AttributeCPUModeSystem, pid...)
		}
	}
}

// pidAttribute is process.pid for a runtime whose pid is known. The
// Prometheus exporter names runtimes by tag only (pid 0: unknown), and
// process.pid=0 would name the kernel's idle task.
func pidAttribute(pid int64) []metadata.MetricAttributeOption {
	if pid <= 0 {
		return nil
	}
	return []metadata.MetricAttributeOption{metadata.WithProcessPidMetricAttribute(pid)}
}

func compareKeys(a, b runtimeKey) int {
	switch {
	case a.tag < b.tag:
		return -1
	case a.tag > b.tag:
		return 1
	case a.pid < b.pid:
		return -1
	case a.pid > b.pid:
		return 1
	}
	return 0
}

// categories lists the memory categories present in mp in the documented
// order, then any others a newer release adds.
func categories(mp map[string]float64) []string {
	out := make([]string, 0, len(mp))
	for _, cat := range memoryCategories {
		if _, ok := mp[cat]; ok {
			out = append(out, cat)
		}
	}
	if len(out) < len(mp) {
		var extra []string
		for cat := range mp {
			if !slices.Contains(memoryCategories, cat) {
				extra = append(extra, cat)
			}
		}
		sort.Strings(extra)
		out = append(out, extra...)
	}
	return out
}
