// Package promreport reads the /metrics page of neuron-monitor-prometheus.py
// (the Prometheus exporter that ships with neuron-monitor, which AWS's
// neuron-monitor DaemonSet runs on EKS) back into the report neuron-monitor
// wrote, so that the JSON stream and the page go through one mapping and
// give the same resources and metrics.
//
// The page carries less than the JSON: no pid (runtimes are named by tag
// only), no flops, no device latency, no device memory size or device type,
// no per-group periods and no per-group errors (the script leaves a failed
// group out, or keeps its last values). The report says what the page has;
// the mapping already copes with what is absent.
package promreport

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/otelcol-accel/otelcol-accel/internal/promscrape"
	"github.com/otelcol-accel/otelcol-accel/receiver/neuronreceiver/internal/report"
)

// ErrNotNeuronMonitor is returned for a page without any of the script's
// families.
var ErrNotNeuronMonitor = errors.New("the page has none of neuron-monitor-prometheus.py's families (neuroncore_utilization_ratio, execution_status_total, hardware_ecc_events_total, neuron_hardware_info, …): is endpoint that exporter's /metrics?")

// Reader converts successive scrapes of one exporter; it keeps the last
// value of every counter. It is not safe for concurrent use.
type Reader struct {
	counters *counters
	last     time.Time // the previous scrape
}

// NewReader returns a Reader.
func NewReader() *Reader { return &Reader{counters: newCounters()} }

// Report converts one scrape, taken at now. Samples that cannot be used are
// described in the problems and left out; the rest is kept.
func (r *Reader) Report(page promscrape.Page, now time.Time) (*report.Report, []report.Problem, error) {
	s := &scrape{reader: r, families: byName(page), runtimes: map[runtimeKey]*report.Runtime{}, devices: map[int]*report.DeviceCounters{}}
	if !r.last.IsZero() && now.After(r.last) {
		// The counts since the previous scrape are the counts of this
		// window (neuron-monitor's own period is not on the page).
		s.window = now.Sub(r.last).Seconds()
	}
	r.last = now
	names := make([]string, 0, len(s.families))
	for name := range s.families {
		names = append(names, name)
	}
	sort.Strings(names) // runtimes and problems in a stable order
	for _, name := range names {
		s.family(name, s.families[name])
	}
	r.counters.endScrape()
	if !s.found {
		return nil, s.problems, ErrNotNeuronMonitor
	}
	return s.report(), s.problems, nil
}

type runtimeKey struct {
	tag string
	pid int64
}

// scrape is the state of one Report call.
type scrape struct {
	reader   *Reader
	families map[string][]*sample
	found    bool
	problems []report.Problem

	instance     *report.InstanceInfo
	instanceInfo bool // instance came from instance_info itself
	hardware     *report.HardwareInfo

	runtimes map[runtimeKey]*report.Runtime
	order    []*report.Runtime
	devices  map[int]*report.DeviceCounters
	created  map[string]map[string]float64 // by counter family: _created times by labels
	window   float64                       // seconds since the previous scrape; 0 on the first
}

func (s *scrape) problem(key, format string, args ...any) {
	s.problems = append(s.problems, report.Problem{Key: "prometheus/" + key, Err: fmt.Errorf(format, args...)})
}

func (s *scrape) family(name string, samples []*sample) {
	canon, ok := canonical(name)
	if !ok {
		return // *_created, system_*, process_*, python_*, and others
	}
	s.found = true
	for _, m := range samples {
		switch canon {
		case famInstance:
			s.instanceFrom(m, true)
		case famHardware:
			s.hardwareFrom(m)
			s.instanceFrom(m, false)
		case famECC:
			s.instanceFrom(m, false)
			s.ecc(name, m)
		default:
			s.instanceFrom(m, false)
			s.runtimeSample(name, canon, m)
		}
	}
}

// instanceFrom reads the instance labels, which every family carries;
// instance_info's own are preferred.
func (s *scrape) instanceFrom(m *sample, fromInstanceInfo bool) {
	if s.instance != nil && (s.instanceInfo || !fromInstanceInfo) {
		return
	}
	get := func(name string) string { v, _ := label(m, name); return v }
	ii := &report.InstanceInfo{
		Name: get(labelInstanceName), ID: get(labelInstanceID), Type: get(labelInstanceType),
		AvailabilityZone: get(labelZone), Region: get(labelRegion), SubnetID: get(labelSubnetID),
	}
	if *ii == (report.InstanceInfo{}) {
		return
	}
	s.instance, s.instanceInfo = ii, fromInstanceInfo
}

func (s *scrape) hardwareFrom(m *sample) {
	hi := &report.HardwareInfo{}
	for _, f := range []struct {
		label string
		dst   **float64
	}{{labelDeviceCount, &hi.DeviceCount}, {labelCoresPerDevice, &hi.NeuronCorePerDevice}} {
		n, err := intLabel(m, f.label)
		if err != nil {
			s.problem(famHardware, "%s: %v", describe(famHardware, m), err)
			continue
		}
		v := float64(n)
		*f.dst = &v
	}
	s.hardware = hi
}

// eccFields maps event_type onto neuron_hw_counters' fields.
var eccFields = map[string]func(*report.DeviceCounters) **float64{
	"mem_ecc_corrected":    func(d *report.DeviceCounters) **float64 { return &d.MemECCCorrected },
	"mem_ecc_uncorrected":  func(d *report.DeviceCounters) **float64 { return &d.MemECCUncorrected },
	"sram_ecc_corrected":   func(d *report.DeviceCounters) **float64 { return &d.SRAMECCCorrected },
	"sram_ecc_uncorrected": func(d *report.DeviceCounters) **float64 { return &d.SRAMECCUncorrected },
}

func (s *scrape) ecc(name string, m *sample) {
	idx, err := intLabel(m, labelDeviceIndex)
	if err != nil || idx > 1023 {
		s.problem(famECC, "%s: %v; skipped", describe(name, m), errOr(err, "not a device index"))
		return
	}
	kind, _ := label(m, labelEventType)
	field, ok := eccFields[kind]
	if !ok {
		s.problem(famECC, "%s: unknown event_type %q; skipped", describe(name, m), kind)
		return
	}
	n, ok := s.counterDelta(name, famECC, m)
	if !ok {
		return
	}
	d := s.devices[int(idx)]
	if d == nil {
		i := float64(idx)
		d = &report.DeviceCounters{Index: &i}
		s.devices[int(idx)] = d
	}
	*field(d) = &n
}

// counterDelta is the count of a counter sample since the last scrape.
func (s *scrape) counterDelta(name, canon string, m *sample) (float64, bool) {
	v, ok := value(m)
	if !ok {
		return 0, false
	}
	created := s.createdTimes(name)[seriesKey("", m)]
	return s.reader.counters.delta(seriesKey(canon, m), counterSample{value: v, created: created}), true
}

// createdTimes indexes the `_created` family of a counter family by the
// labels of its series.
func (s *scrape) createdTimes(counter string) map[string]float64 {
	if t, ok := s.created[counter]; ok {
		return t
	}
	t := map[string]float64{}
	for _, m := range s.families[createdFamily(counter)] {
		if v, ok := value(m); ok {
			t[seriesKey("", m)] = v
		}
	}
	if s.created == nil {
		s.created = map[string]map[string]float64{}
	}
	s.created[counter] = t
	return t
}

func (s *scrape) runtime(name string, m *sample) *report.Runtime {
	tag, ok := label(m, labelRuntimeTag)
	if !ok {
		s.problem(name, "%s: no runtime_tag; skipped", describe(name, m))
		return nil
	}
	key := runtimeKey{tag: tag}
	if _, has := label(m, labelPID); has {
		if pid, err := intLabel(m, labelPID); err == nil {
			key.pid = pid
		}
	}
	rt := s.runtimes[key]
	if rt == nil {
		rt = &report.Runtime{Index: len(s.order), PID: key.pid, Tag: tag}
		s.runtimes[key] = rt
		s.order = append(s.order, rt)
	}
	return rt
}

func (s *scrape) core(name string, m *sample) (int, bool) {
	c, err := intLabel(m, labelCore)
	if err != nil || c > report.MaxCoreIndex {
		s.problem(name, "%s: %v; skipped", describe(name, m), errOr(err, "NeuronCore index out of range"))
		return 0, false
	}
	return int(c), true
}

func (s *scrape) runtimeSample(name, canon string, m *sample) {
	rt := s.runtime(name, m)
	if rt == nil {
		return
	}
	if cat, ok := strings.CutPrefix(canon, famCoreMemoryPrefix); ok {
		s.coreMemory(name, cat, rt, m)
		return
	}
	switch canon {
	case famCoreUtilization:
		c, ok := s.core(name, m)
		v, finite := value(m)
		if !ok || !finite {
			return
		}
		if rt.NeuronCoreCounters == nil {
			rt.NeuronCoreCounters = &report.NeuronCoreCounters{Cores: map[int]report.CoreCounters{}}
		}
		rt.NeuronCoreCounters.Cores[c] = report.CoreCounters{Utilization: &v}
	case famRuntimeMemory:
		v, ok := value(m)
		if !ok {
			return
		}
		mu := memoryUsed(rt)
		switch loc, _ := label(m, labelMemoryLocation); loc {
		case "host":
			mu.HostBytes = &v
		case "neuron_device", "device":
			mu.DeviceBytes = &v
		default:
			s.problem(name, "%s: unknown memory_location %q; skipped", describe(name, m), loc)
		}
	case famRuntimeVCPU:
		v, ok := value(m)
		if !ok {
			return
		}
		if rt.VCPUUsage == nil {
			rt.VCPUUsage = &report.RuntimeVCPUUsage{}
		}
		switch kind, _ := label(m, labelUsageType); kind {
		case "user":
			rt.VCPUUsage.User = &v
		case "system":
			rt.VCPUUsage.System = &v
		}
	case famExecStatus, famExecErrors:
		labelName := labelStatusType
		if canon == famExecErrors {
			labelName = labelErrorType
		}
		kind, ok := label(m, labelName)
		if !ok {
			s.problem(name, "%s: no %s; skipped", describe(name, m), labelName)
			return
		}
		n, ok := s.counterDelta(name, canon, m)
		if !ok {
			return
		}
		es := executionStats(rt)
		if canon == famExecStatus {
			es.ExecutionSummary = put(es.ExecutionSummary, kind, n)
		} else {
			es.ErrorSummary = put(es.ErrorSummary, kind, n)
		}
	case famLatency:
		p, ok := label(m, labelPercentile)
		v, finite := value(m)
		if !ok || !finite {
			return
		}
		es := executionStats(rt)
		es.LatencyStats.Total = put(es.LatencyStats.Total, p, v)
	}
}

func (s *scrape) coreMemory(name, category string, rt *report.Runtime, m *sample) {
	c, ok := s.core(name, m)
	v, finite := value(m)
	if !ok || !finite {
		return
	}
	mu := memoryUsed(rt)
	if mu.CoreMemory == nil {
		mu.CoreMemory = map[int]map[string]float64{}
	}
	mu.CoreMemory[c] = put(mu.CoreMemory[c], category, v)
}

func memoryUsed(rt *report.Runtime) *report.MemoryUsed {
	if rt.MemoryUsed == nil {
		rt.MemoryUsed = &report.MemoryUsed{}
	}
	return rt.MemoryUsed
}

func executionStats(rt *report.Runtime) *report.ExecutionStats {
	if rt.ExecutionStats == nil {
		rt.ExecutionStats = &report.ExecutionStats{}
	}
	return rt.ExecutionStats
}

func put[K comparable](mp map[K]float64, k K, v float64) map[K]float64 {
	if mp == nil {
		mp = map[K]float64{}
	}
	mp[k] = v
	return mp
}

func errOr(err error, msg string) error {
	if err != nil {
		return err
	}
	return errors.New(msg)
}

func (s *scrape) report() *report.Report {
	r := &report.Report{Instance: s.instance, Hardware: s.hardware, RuntimesNull: len(s.order) == 0}
	for _, rt := range s.order {
		r.Runtimes = append(r.Runtimes, *rt)
	}
	if len(s.devices) > 0 {
		hc := &report.HWCounters{Group: report.Group{Period: s.window}}
		for _, d := range slices.Sorted(maps.Keys(s.devices)) {
			hc.Devices = append(hc.Devices, *s.devices[d])
		}
		r.System.HWCounters = hc
	}
	return r
}
