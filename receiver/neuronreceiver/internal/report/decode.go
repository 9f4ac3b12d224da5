package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// Problem is something in a report that could not be used. Key names the
// kind of problem and where (for rate-limited logging: one key, one log line
// per interval); Err says what was wrong.
type Problem struct {
	Key string
	Err error
}

func (p Problem) Error() string { return p.Err.Error() }

// ErrNotAReport is returned for a JSON document that has none of a report's
// top-level objects.
var ErrNotAReport = errors.New("not a neuron-monitor report: it has none of neuron_runtime_data, system_data, instance_info, neuron_hardware_info")

type rawReport struct {
	Runtimes json.RawMessage `json:"neuron_runtime_data"`
	System   json.RawMessage `json:"system_data"`
	Instance json.RawMessage `json:"instance_info"`
	Hardware json.RawMessage `json:"neuron_hardware_info"`
}

type rawRuntime struct {
	PID    *float64                   `json:"pid"`
	Tag    json.RawMessage            `json:"neuron_runtime_tag"`
	Error  string                     `json:"error"`
	Report map[string]json.RawMessage `json:"report"`
}

// Decode parses one report. It fails only when doc is not a JSON object
// that looks like a report; a group that cannot be decoded is left out of
// the result and described in the returned problems.
func Decode(doc []byte) (*Report, []Problem, error) {
	var raw rawReport
	if err := json.Unmarshal(doc, &raw); err != nil {
		return nil, nil, fmt.Errorf("malformed JSON: %w", err)
	}
	if raw.Runtimes == nil && raw.System == nil && raw.Instance == nil && raw.Hardware == nil {
		return nil, nil, ErrNotAReport
	}
	r := &Report{}
	var problems []Problem
	add := func(key string, err error) { problems = append(problems, Problem{Key: key, Err: err}) }

	if isNull(raw.Runtimes) {
		r.RuntimesNull = true
	} else {
		var entries []json.RawMessage
		if err := json.Unmarshal(raw.Runtimes, &entries); err != nil {
			add("neuron_runtime_data", fmt.Errorf("neuron_runtime_data: %w", err))
		}
		r.Runtimes = make([]Runtime, 0, len(entries))
		for i, e := range entries {
			rt, ps := decodeRuntime(i, e)
			problems = append(problems, ps...)
			if rt != nil {
				r.Runtimes = append(r.Runtimes, *rt)
			}
		}
	}

	if !isNull(raw.System) {
		var groups map[string]json.RawMessage
		if err := json.Unmarshal(raw.System, &groups); err != nil {
			add("system_data", fmt.Errorf("system_data: %w", err))
		}
		if g, ok := groups["neuron_hw_counters"]; ok && !isNull(g) {
			var hw HWCounters
			if err := json.Unmarshal(g, &hw); err != nil {
				add("system_data/neuron_hw_counters", fmt.Errorf("system_data.neuron_hw_counters: %w", err))
			} else {
				r.System.HWCounters = &hw
			}
		}
	}

	if !isNull(raw.Instance) {
		var ii InstanceInfo
		if err := json.Unmarshal(raw.Instance, &ii); err != nil {
			add("instance_info", fmt.Errorf("instance_info: %w", err))
		} else {
			r.Instance = &ii
		}
	}
	if !isNull(raw.Hardware) {
		var hi HardwareInfo
		if err := json.Unmarshal(raw.Hardware, &hi); err != nil {
			add("neuron_hardware_info", fmt.Errorf("neuron_hardware_info: %w", err))
		} else {
			r.Hardware = &hi
		}
	}
	return r, problems, nil
}

func decodeRuntime(i int, raw json.RawMessage) (*Runtime, []Problem) {
	var problems []Problem
	var e rawRuntime
	if err := json.Unmarshal(raw, &e); err != nil {
		return nil, []Problem{{Key: "neuron_runtime_data/entry", Err: fmt.Errorf("neuron_runtime_data[%d]: %w", i, err)}}
	}
	rt := &Runtime{Index: i, Error: e.Error}
	if e.PID != nil {
		if pid, ok := Integer(*e.PID); ok {
			rt.PID = pid
		}
	}
	rt.Tag = tagString(e.Tag)
	if rt.Tag == "" {
		// neuron-monitor uses the pid when NEURON_PROCESS_TAG is unset.
		rt.Tag = strconv.FormatInt(rt.PID, 10)
	}
	where := func(group string) string {
		return fmt.Sprintf("neuron_runtime_data[%d] (pid %d, tag %q) %s", i, rt.PID, rt.Tag, group)
	}
	fail := func(group string, err error) {
		problems = append(problems, Problem{Key: "neuron_runtime_data/" + group, Err: fmt.Errorf("%s: %w", where(group), err)})
	}

	if g, ok := e.Report["neuroncore_counters"]; ok && !isNull(g) {
		nc, err := decodeNeuronCoreCounters(g)
		if err != nil {
			fail("neuroncore_counters", err)
		} else {
			rt.NeuronCoreCounters = nc
		}
	}
	stats, name := e.Report["execution_stats"], "execution_stats"
	if stats == nil {
		stats, name = e.Report["inference_stats"], "inference_stats"
	}
	if stats != nil && !isNull(stats) {
		var es ExecutionStats
		if err := json.Unmarshal(stats, &es); err != nil {
			fail(name, err)
		} else {
			rt.ExecutionStats = &es
		}
	}
	if g, ok := e.Report["memory_used"]; ok && !isNull(g) {
		mu, err := decodeMemoryUsed(g)
		if err != nil {
			fail("memory_used", err)
		} else {
			rt.MemoryUsed = mu
		}
	}
	if g, ok := e.Report["neuron_runtime_vcpu_usage"]; ok && !isNull(g) {
		vu, err := decodeRuntimeVCPUUsage(g)
		if err != nil {
			fail("neuron_runtime_vcpu_usage", err)
		} else {
			rt.VCPUUsage = vu
		}
	}
	return rt, problems
}

// rawCoreCounters is one core of neuroncores_in_use as neuron-monitor
// prints it.
type rawCoreCounters struct {
	Utilization    *float64 `json:"neuroncore_utilization"` // percent
	Flops          *float64 `json:"flops"`
	EffectiveFlops *float64 `json:"effective_flops"`
	// v3d (Trn2: the utilization of each physical core of a logical
	// NeuronCore) is accepted and not mapped.
}

func (c rawCoreCounters) counters() CoreCounters {
	cc := CoreCounters{Utilization: fraction(c.Utilization), Flops: c.Flops}
	if cc.Flops == nil {
		cc.Flops = c.EffectiveFlops
	}
	return cc
}

func decodeRuntimeVCPUUsage(raw json.RawMessage) (*RuntimeVCPUUsage, error) {
	var g struct {
		Group
		Usage *struct {
			User   *float64 `json:"user"`
			System *float64 `json:"system"`
		} `json:"vcpu_usage"`
	}
	if err := json.Unmarshal(raw, &g); err != nil {
		return nil, err
	}
	vu := &RuntimeVCPUUsage{Group: g.Group}
	if g.Usage != nil {
		vu.User, vu.System = fraction(g.Usage.User), fraction(g.Usage.System)
	}
	return vu, nil
}

// fraction turns one of neuron-monitor's percentages into a fraction.
func fraction(pct *float64) *float64 {
	if pct == nil {
		return nil
	}
	f := *pct / 100
	return &f
}

func decodeNeuronCoreCounters(raw json.RawMessage) (*NeuronCoreCounters, error) {
	var g struct {
		Group
		InUse map[string]rawCoreCounters `json:"neuroncores_in_use"`
	}
	if err := json.Unmarshal(raw, &g); err != nil {
		return nil, err
	}
	nc := &NeuronCoreCounters{Group: g.Group, Cores: make(map[int]CoreCounters, len(g.InUse))}
	for k, v := range g.InUse {
		idx, err := coreIndex(k)
		if err != nil {
			return nil, fmt.Errorf("neuroncores_in_use: %w", err)
		}
		nc.Cores[idx] = v.counters()
	}
	return nc, nil
}

func decodeMemoryUsed(raw json.RawMessage) (*MemoryUsed, error) {
	var g struct {
		Group
		Used *struct {
			Host         *float64 `json:"host"`
			NeuronDevice *float64 `json:"neuron_device"`
			Device       *float64 `json:"device"`
			Breakdown    *struct {
				Cores map[string]map[string]float64 `json:"neuroncore_memory_usage"`
			} `json:"usage_breakdown"`
		} `json:"neuron_runtime_used_bytes"`
		LoadedModels []struct {
			Subgraphs map[string]struct {
				CoreIndex *float64 `json:"neuroncore_index"`
			} `json:"subgraphs"`
		} `json:"loaded_models"`
	}
	if err := json.Unmarshal(raw, &g); err != nil {
		return nil, err
	}
	mu := &MemoryUsed{Group: g.Group}
	if u := g.Used; u != nil {
		mu.HostBytes = u.Host
		mu.DeviceBytes = u.NeuronDevice
		if mu.DeviceBytes == nil {
			mu.DeviceBytes = u.Device
		}
		if u.Breakdown != nil && len(u.Breakdown.Cores) > 0 {
			mu.CoreMemory = make(map[int]map[string]float64, len(u.Breakdown.Cores))
			for k, v := range u.Breakdown.Cores {
				idx, err := coreIndex(k)
				if err != nil {
					return nil, fmt.Errorf("neuroncore_memory_usage: %w", err)
				}
				mu.CoreMemory[idx] = v
			}
		}
	}
	for _, m := range g.LoadedModels {
		for _, sg := range m.Subgraphs {
			if sg.CoreIndex == nil {
				continue
			}
			if c, ok := Integer(*sg.CoreIndex); ok && c >= 0 && c <= MaxCoreIndex {
				mu.ModelCores = append(mu.ModelCores, int(c))
			}
		}
	}
	return mu, nil
}

// MaxCoreIndex bounds the NeuronCore indices accepted from a report, so a
// corrupt index cannot make the receiver track millions of series. The
// largest Neuron instance today has 128 physical NeuronCores.
const MaxCoreIndex = 4095

func coreIndex(k string) (int, error) {
	idx, err := strconv.Atoi(k)
	if err != nil || idx < 0 || idx > MaxCoreIndex {
		return 0, fmt.Errorf("NeuronCore index %q is not an integer in [0, %d]", k, MaxCoreIndex)
	}
	return idx, nil
}

// Integer converts a JSON number to an int64 when it is integral and in
// range.
func Integer(f float64) (int64, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) || f != math.Trunc(f) || f < math.MinInt64 || f >= math.MaxInt64 {
		return 0, false
	}
	return int64(f), true
}

func tagString(raw json.RawMessage) string {
	if len(raw) == 0 || isNull(raw) {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	// Some consumers pass the tag through as a number.
	return string(bytes.TrimSpace(raw))
}

func isNull(raw json.RawMessage) bool {
	return len(raw) == 0 || string(bytes.TrimSpace(raw)) == "null"
}
