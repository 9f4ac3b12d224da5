// Package mapping turns neuron-monitor reports into the unified schema.
//
// Resources (docs/architecture.md): one per Neuron device
// (hw.id=neuron_device_<d>, partition none, share 1) and one per NeuronCore
// and runtime holding it (hw.id=neuron_device_<d>/neuroncore_<c>, partition
// neuroncore, share 1/cores per device, aws.neuron.runtime.tag).
//
// Attribution: every runtime lists every core, with zeros for the cores it
// does not use. A runtime holds a core when it reports non-zero utilization,
// flops or memory on it; the core's data then goes on a resource tagged with
// that runtime, with process.pid on the data points. A core nobody holds gets
// one untagged resource with utilization 0, and only when the receiver can
// tell it is idle (every runtime was reported and none failed).
// Runtime-scoped metrics (latency, executions, errors, vCPU, runtime memory)
// go on the runtime's lowest held core, so they are counted once and join
// the pod that holds that core.
package mapping

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver"

	"github.com/otelcol-accel/otelcol-accel/receiver/neuronreceiver/internal/metadata"
	"github.com/otelcol-accel/otelcol-accel/receiver/neuronreceiver/internal/report"
)

// Settings says what the receiver asked neuron-monitor for; the mapper uses
// it to tell "nothing runs on this core" from "this was not collected".
type Settings struct {
	Metrics metadata.MetricsBuilderConfig
	// Period is neuron-monitor's collection period, used as the window of
	// data points whose group does not state its own (the Prometheus
	// exporter states none).
	Period time.Duration
	// CoreCounters: whether the neuroncore_counters group is collected.
	CoreCounters bool
	// AllRuntimes is false when a tag filter hides some runtimes: then an
	// unlisted core may be busy.
	AllRuntimes bool
}

// Result is what one report maps to.
type Result struct {
	Metrics pmetric.Metrics
	// Logs holds health events (ECC counters that grew); empty most of the
	// time.
	Logs plog.Logs
	// Problems lists what in the report could not be used: neuron-monitor's
	// own per-group errors and values that make no sense.
	Problems []report.Problem
}

// Mapper holds the state that outlives one report (running totals, the last
// good hardware description). It is not safe for concurrent use.
type Mapper struct {
	set settings
	mb  *metadata.MetricsBuilder

	host     host
	hw       hardware
	devices  map[int]*deviceState
	runtimes map[runtimeKey]*runtimeState
	seq      uint64

	// per report
	ts       pcommon.Timestamp
	problems []report.Problem
	logs     plog.Logs
	health   map[int][]healthEvent
}

type settings = Settings

// New returns a Mapper.
func New(s Settings, rs receiver.Settings) *Mapper {
	if s.Period <= 0 {
		s.Period = 5 * time.Second
	}
	return &Mapper{
		set:      s,
		mb:       metadata.NewMetricsBuilder(s.Metrics, rs),
		devices:  map[int]*deviceState{},
		runtimes: map[runtimeKey]*runtimeState{},
	}
}

// coreUse is one runtime's data for one core it holds.
type coreUse struct {
	rt          *runtimeData
	util        float64 // ratio
	flops       float64
	hasUtil     bool
	hasFlops    bool
	memory      map[string]float64
	utilStart   pcommon.Timestamp
	memoryValid bool
}

type coreData struct {
	uses []coreUse
	// listedZero: some runtime listed the core with zeros; zeroFlops: and
	// that listing had a flops field.
	listedZero bool
	zeroFlops  bool
	// primaryOf are the runtimes whose runtime-scoped metrics land here.
	primaryOf []*runtimeData
}

type runtimeData struct {
	key   runtimeKey
	state *runtimeState
	held  []int
	// primary is the lowest held core, -1 when the runtime holds none.
	primary int

	latency      []latencyPoint
	latencyStart pcommon.Timestamp

	cpuUser, cpuSystem *float64
	cpuStart           pcommon.Timestamp

	memHost, memDevice *float64
}

type latencyPoint struct {
	kind       metadata.AttributeLatencyKind
	percentile string
	seconds    float64
}

// reportView is everything about one report that is needed to emit it.
type reportView struct {
	cores    map[int]*coreData
	runtimes []*runtimeData
	// coresKnown: every runtime's core counters arrived intact, so a core
	// nobody lists as busy is idle.
	coresKnown bool
	ecc        map[int][eccKinds]int64
}

// Map maps one report observed at now.
func (m *Mapper) Map(r *report.Report, now time.Time) Result {
	m.seq++
	m.ts = pcommon.NewTimestampFromTime(now)
	m.problems = nil
	m.logs = plog.NewLogs()
	m.health = nil

	m.host = hostFrom(r.Instance)
	if r.Instance != nil && r.Instance.Error != "" {
		m.problem("instance_info", "instance_info: %s", r.Instance.Error)
	}
	if r.Hardware != nil && r.Hardware.Error != "" {
		m.problem("neuron_hardware_info", "neuron_hardware_info: %s (is the Neuron driver loaded?)", r.Hardware.Error)
	}
	m.hw.update(r.Hardware, m.host.instanceType)

	v := m.collectRuntimes(r)
	m.collectECC(r, v)
	m.emit(v)

	for k, st := range m.runtimes {
		if st.lastSeen != m.seq {
			delete(m.runtimes, k)
		}
	}
	return Result{Metrics: m.mb.Emit(), Logs: m.logs, Problems: m.problems}
}

func (m *Mapper) problem(key, format string, args ...any) {
	m.problems = append(m.problems, report.Problem{Key: key, Err: fmt.Errorf(format, args...)})
}

// window returns the start of a group's captured period.
func (m *Mapper) window(period float64) pcommon.Timestamp {
	d := m.set.Period
	if period > 0 && period < 3600 && !math.IsNaN(period) {
		d = time.Duration(period * float64(time.Second))
	}
	return m.ts - pcommon.Timestamp(d.Nanoseconds())
}

func (m *Mapper) validCore(c int) bool {
	if total := m.hw.totalCores(); total > 0 {
		return c < total
	}
	return c <= report.MaxCoreIndex
}

func (m *Mapper) collectRuntimes(r *report.Report) *reportView {
	v := &reportView{
		cores:      map[int]*coreData{},
		coresKnown: m.set.CoreCounters && m.set.AllRuntimes && m.hw.coresPerDevice > 0,
	}
	if m.hw.coresPerDevice == 0 && len(r.Runtimes) > 0 {
		m.problem("neuron_hardware_info/cores", "neuron_hardware_info has no neuroncore_per_device_count: NeuronCores cannot be placed on devices; their data is skipped until it does")
	}
	core := func(c int) *coreData {
		cd := v.cores[c]
		if cd == nil {
			cd = &coreData{}
			v.cores[c] = cd
		}
		return cd
	}
	seen := make(map[runtimeKey]bool, len(r.Runtimes))
	for i := range r.Runtimes {
		rt := &r.Runtimes[i]
		key := runtimeKey{tag: rt.Tag, pid: rt.PID}
		if seen[key] {
			m.problem("neuron_runtime_data/duplicate", "neuron_runtime_data[%d]: runtime pid %d tag %q is listed twice; the second entry is skipped", rt.Index, rt.PID, rt.Tag)
			continue
		}
		seen[key] = true
		st := m.runtimes[key]
		if st == nil {
			period := 0.0
			if rt.ExecutionStats != nil {
				period = rt.ExecutionStats.Period
			}
			st = &runtimeState{start: m.window(period)}
			m.runtimes[key] = st
		}
		st.lastSeen = m.seq
		if rt.Error != "" {
			m.problem("neuron_runtime_data/error", "neuron_runtime_data[%d] (pid %d, tag %q): %s", rt.Index, rt.PID, rt.Tag, rt.Error)
			v.coresKnown = false
			continue
		}
		rd := &runtimeData{key: key, state: st, primary: -1}
		v.runtimes = append(v.runtimes, rd)
		held := map[int]*coreUse{}
		use := func(c int) *coreUse {
			if u := held[c]; u != nil {
				return u
			}
			u := &coreUse{rt: rd}
			held[c] = u
			return u
		}

		if nc := rt.NeuronCoreCounters; nc != nil && nc.Error == "" && m.hw.coresPerDevice > 0 {
			start := m.window(nc.Period)
			for c, cc := range nc.Cores {
				if !m.validCore(c) {
					m.problem("neuroncore_counters/index", "neuron_runtime_data[%d] (pid %d) neuroncore_counters: NeuronCore %d is beyond the %d cores neuron_hardware_info reports; skipped", rt.Index, rt.PID, c, m.hw.totalCores())
					continue
				}
				util, hasUtil := ratio(cc.Utilization)
				flops, hasFlops := 0.0, cc.Flops != nil
				if hasFlops {
					flops = *cc.Flops
				}
				if !finite(flops) || flops < 0 {
					flops, hasFlops = 0, false
				}
				if util > 0 || flops > 0 {
					u := use(c)
					u.util, u.hasUtil, u.flops, u.hasFlops, u.utilStart = util, hasUtil, flops, hasFlops, start
					continue
				}
				if hasUtil || hasFlops {
					cd := core(c)
					cd.listedZero = true
					cd.zeroFlops = cd.zeroFlops || hasFlops
				}
			}
		} else if rt.NeuronCoreCounters != nil && rt.NeuronCoreCounters.Error != "" {
			m.problem("neuroncore_counters/error", "neuron_runtime_data[%d] (pid %d, tag %q) neuroncore_counters: %s", rt.Index, rt.PID, rt.Tag, rt.NeuronCoreCounters.Error)
			v.coresKnown = false
		} else if m.set.CoreCounters {
			v.coresKnown = false
		}

		if mu := rt.MemoryUsed; mu != nil && mu.Error == "" {
			rd.memHost, rd.memDevice = nonNegative(mu.HostBytes), nonNegative(mu.DeviceBytes)
			if m.hw.coresPerDevice > 0 {
				for c, cats := range mu.CoreMemory {
					if !m.validCore(c) || !anyPositive(cats) {
						continue
					}
					u := use(c)
					u.memory, u.memoryValid = cats, true
				}
			}
			for _, c := range mu.ModelCores {
				if rd.primary < 0 || c < rd.primary {
					if m.validCore(c) {
						rd.primary = c
					}
				}
			}
		} else if mu != nil && mu.Error != "" {
			m.problem("memory_used/error", "neuron_runtime_data[%d] (pid %d, tag %q) memory_used: %s", rt.Index, rt.PID, rt.Tag, mu.Error)
		}

		for c, u := range held {
			cd := core(c)
			cd.uses = append(cd.uses, *u)
			rd.held = append(rd.held, c)
		}
		if len(rd.held) > 0 {
			rd.primary = slices.Min(rd.held)
		}
		if rd.primary >= 0 {
			cd := core(rd.primary)
			cd.primaryOf = append(cd.primaryOf, rd)
		}

		if es := rt.ExecutionStats; es != nil {
			if es.Error != "" {
				m.problem("execution_stats/error", "neuron_runtime_data[%d] (pid %d, tag %q) execution_stats: %s", rt.Index, rt.PID, rt.Tag, es.Error)
			} else {
				m.accumulateExecutions(rt, es, st)
				rd.latencyStart = m.window(es.Period)
				rd.latency = latencies(es)
			}
		}
		if vu := rt.VCPUUsage; vu != nil {
			if vu.Error != "" {
				m.problem("neuron_runtime_vcpu_usage/error", "neuron_runtime_data[%d] (pid %d, tag %q) neuron_runtime_vcpu_usage: %s", rt.Index, rt.PID, rt.Tag, vu.Error)
			} else if vu.User != nil || vu.System != nil {
				rd.cpuUser, rd.cpuSystem = nonNegative(vu.User), nonNegative(vu.System)
				rd.cpuStart = m.window(vu.Period)
			}
		}
	}
	return v
}

func (m *Mapper) accumulateExecutions(rt *report.Runtime, es *report.ExecutionStats, st *runtimeState) {
	count := func(group, name string, v float64) (int64, bool) {
		n, ok := report.Integer(v)
		if !ok || n < 0 {
			m.problem("execution_stats/value", "neuron_runtime_data[%d] (pid %d) %s.%s = %v is not a count; skipped", rt.Index, rt.PID, group, name, v)
			return 0, false
		}
		return n, true
	}
	outcomes := es.Outcomes()
	for name, val := range outcomes {
		s, ok := executionStatuses[name]
		if !ok {
			m.problem("execution_stats/unknown", "neuron_runtime_data[%d] (pid %d) execution_summary has an unknown outcome %q; skipped", rt.Index, rt.PID, name)
			continue
		}
		if n, ok := count("execution_summary", name, val); ok {
			st.outcomes[s] += n
		}
	}
	for name, val := range es.ErrorSummary {
		e, ok := executionErrors[name]
		if !ok {
			m.problem("execution_stats/unknown", "neuron_runtime_data[%d] (pid %d) error_summary has an unknown error class %q; skipped", rt.Index, rt.PID, name)
			continue
		}
		if n, ok := count("error_summary", name, val); ok {
			st.errors[e] += n
		}
	}
	if outcomes != nil || es.ErrorSummary != nil {
		st.hasCounts = true
	}
}

func latencies(es *report.ExecutionStats) []latencyPoint {
	var out []latencyPoint
	add := func(kind metadata.AttributeLatencyKind, ps map[string]float64) {
		for _, p := range sortedPercentiles(ps) {
			if s := ps[p]; finite(s) && s >= 0 {
				out = append(out, latencyPoint{kind: kind, percentile: p, seconds: s})
			}
		}
	}
	add(metadata.AttributeLatencyKindTotal, es.LatencyStats.Total)
	add(metadata.AttributeLatencyKindDevice, es.LatencyStats.Device)
	return out
}

// sortedPercentiles returns the documented percentiles first, in order, then
// any others a newer release adds.
func sortedPercentiles(ps map[string]float64) []string {
	if len(ps) == 0 {
		return nil
	}
	out := make([]string, 0, len(ps))
	for _, p := range latencyPercentiles {
		if _, ok := ps[p]; ok {
			out = append(out, p)
		}
	}
	if len(out) == len(ps) {
		return out
	}
	var extra []string
	for p := range ps {
		if !slices.Contains(latencyPercentiles, p) {
			extra = append(extra, p)
		}
	}
	sort.Strings(extra)
	return append(out, extra...)
}

func (m *Mapper) collectECC(r *report.Report, v *reportView) {
	hc := r.System.HWCounters
	if hc == nil {
		return
	}
	if hc.Error != "" {
		m.problem("neuron_hw_counters/error", "system_data.neuron_hw_counters: %s", hc.Error)
		return
	}
	start := m.window(hc.Period)
	v.ecc = map[int][eccKinds]int64{}
	for i, dc := range hc.Devices {
		if dc.Index == nil {
			m.problem("neuron_hw_counters/index", "system_data.neuron_hw_counters.neuron_devices[%d] has no neuron_device_index; skipped", i)
			continue
		}
		idx, ok := report.Integer(*dc.Index)
		if !ok || idx < 0 || (m.hw.deviceCount > 0 && idx >= int64(m.hw.deviceCount)) || idx > 1023 {
			m.problem("neuron_hw_counters/index", "system_data.neuron_hw_counters.neuron_devices[%d]: neuron_device_index %v is not a device of this host; skipped", i, *dc.Index)
			continue
		}
		d := int(idx)
		ds := m.devices[d]
		if ds == nil {
			ds = newDeviceState(start)
			m.devices[d] = ds
		}
		var deltas [eccKinds]int64
		for k, val := range [eccKinds]*float64{dc.MemECCCorrected, dc.MemECCUncorrected, dc.SRAMECCCorrected, dc.SRAMECCUncorrected} {
			if val == nil {
				continue
			}
			n, ok := report.Integer(*val)
			if !ok || n < 0 {
				m.problem("neuron_hw_counters/value", "system_data.neuron_hw_counters: device %d %s = %v is not a count; skipped", d, eccTable[k].source, *val)
				continue
			}
			deltas[k] = n
			if cl, grew := ds.record(eccKind(k), n); grew {
				m.healthEvent(d, eccKind(k), n, hc.Period, cl)
			}
		}
		v.ecc[d] = deltas
	}
}

// ratio clamps a utilization fraction into [0, 1]. (vCPU fractions are not
// capped: a runtime's threads can use more than one vCPU.)
func ratio(f *float64) (float64, bool) {
	if f == nil || !finite(*f) {
		return 0, false
	}
	return math.Min(1, math.Max(0, *f)), true
}

func nonNegative(v *float64) *float64 {
	if v == nil || !finite(*v) || *v < 0 {
		return nil
	}
	return v
}

func anyPositive(cats map[string]float64) bool {
	for _, b := range cats {
		if finite(b) && b > 0 {
			return true
		}
	}
	return false
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }
