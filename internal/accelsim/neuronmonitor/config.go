// Package neuronmonitor behaves like AWS neuron-monitor for one simulated
// Neuron node: it reads neuron-monitor's JSON configuration (period, metric
// groups per runtime tag filter, system groups), and whenever a metric group
// is due it writes one complete JSON report on a line of stdout, in the
// schema of the Neuron release the node's scenario names. Exporter and
// ExporterHandler are neuron-monitor-prometheus.py fed by those reports: the
// /metrics page AWS's neuron-monitor DaemonSet serves, with the same values.
package neuronmonitor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"time"
)

// Metric groups neuron-monitor knows.
const (
	GroupNeuronCoreCounters = "neuroncore_counters"
	GroupMemoryUsed         = "memory_used"
	GroupRuntimeVCPU        = "neuron_runtime_vcpu_usage"
	GroupExecutionStats     = "execution_stats"
	GroupVCPUUsage          = "vcpu_usage"
	GroupMemoryInfo         = "memory_info"
	GroupHWCounters         = "neuron_hw_counters"
	GroupK8sInfo            = "neuron_k8s_info"
)

var (
	runtimeGroups = []string{GroupNeuronCoreCounters, GroupMemoryUsed, GroupRuntimeVCPU, GroupExecutionStats}
	systemGroups  = []string{GroupVCPUUsage, GroupMemoryInfo, GroupHWCounters, GroupK8sInfo}
)

// DefaultPeriod applies when no period is configured.
const DefaultPeriod = 5 * time.Second

// Config is neuron-monitor's configuration file.
type Config struct {
	Period         string          `json:"period,omitempty"`
	NeuronRuntimes []RuntimeConfig `json:"neuron_runtimes"`
	SystemMetrics  []GroupConfig   `json:"system_metrics"`
}

// RuntimeConfig selects runtimes by tag and the groups collected for them.
type RuntimeConfig struct {
	TagFilter string        `json:"tag_filter,omitempty"`
	Period    string        `json:"period,omitempty"`
	Metrics   []GroupConfig `json:"metrics"`
}

// GroupConfig enables one metric group.
type GroupConfig struct {
	Type   string `json:"type"`
	Period string `json:"period,omitempty"`
}

// plan is a validated configuration with effective periods.
type plan struct {
	runtimes []runtimePlan
	system   []groupPlan
}

type runtimePlan struct {
	filter *regexp.Regexp
	groups []groupPlan
}

type groupPlan struct {
	typ    string
	period time.Duration
}

// DefaultConfig is what neuron-monitor does without -c: every group, every 5 s.
func DefaultConfig() *Config {
	c := &Config{Period: "5s", NeuronRuntimes: []RuntimeConfig{{TagFilter: ".*"}}}
	for _, g := range runtimeGroups {
		c.NeuronRuntimes[0].Metrics = append(c.NeuronRuntimes[0].Metrics, GroupConfig{Type: g})
	}
	for _, g := range systemGroups[:3] {
		c.SystemMetrics = append(c.SystemMetrics, GroupConfig{Type: g})
	}
	return c
}

// ParseConfig reads a configuration file's content. Errors name the field.
func ParseConfig(data []byte) (*Config, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var c Config
	if err := dec.Decode(&c); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("invalid JSON at byte %d: %v", se.Offset, err)
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, fmt.Errorf("field %q: want %s, got JSON %s", te.Field, te.Type, te.Value)
		}
		if errors.Is(err, io.EOF) {
			return nil, errors.New("empty configuration")
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, errors.New("invalid JSON: the document ends early (truncated file?)")
		}
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("trailing data after the configuration object")
	}
	if _, err := c.plan(); err != nil {
		return nil, err
	}
	return &c, nil
}

func parsePeriod(s, where string, inherited time.Duration) (time.Duration, error) {
	if s == "" {
		return inherited, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s: invalid period %q (want a duration such as \"1s\" or \"500ms\")", where, s)
	}
	return d, nil
}

func (c *Config) plan() (*plan, error) {
	root, err := parsePeriod(c.Period, "period", DefaultPeriod)
	if err != nil {
		return nil, err
	}
	p := &plan{}
	for i, rc := range c.NeuronRuntimes {
		where := fmt.Sprintf("neuron_runtimes[%d]", i)
		rp := runtimePlan{}
		filter := rc.TagFilter
		if filter == "" {
			filter = ".*"
		}
		if rp.filter, err = regexp.Compile(filter); err != nil {
			return nil, fmt.Errorf("%s.tag_filter: invalid regular expression: %v", where, err)
		}
		rperiod, err := parsePeriod(rc.Period, where+".period", root)
		if err != nil {
			return nil, err
		}
		for j, g := range rc.Metrics {
			gw := fmt.Sprintf("%s.metrics[%d]", where, j)
			if !oneOf(g.Type, runtimeGroups) {
				return nil, fmt.Errorf("%s.type: unknown runtime metric group %q (want one of %v)", gw, g.Type, runtimeGroups)
			}
			d, err := parsePeriod(g.Period, gw+".period", rperiod)
			if err != nil {
				return nil, err
			}
			rp.groups = append(rp.groups, groupPlan{typ: g.Type, period: d})
		}
		p.runtimes = append(p.runtimes, rp)
	}
	for j, g := range c.SystemMetrics {
		gw := fmt.Sprintf("system_metrics[%d]", j)
		if !oneOf(g.Type, systemGroups) {
			return nil, fmt.Errorf("%s.type: unknown system metric group %q (want one of %v)", gw, g.Type, systemGroups)
		}
		d, err := parsePeriod(g.Period, gw+".period", root)
		if err != nil {
			return nil, err
		}
		p.system = append(p.system, groupPlan{typ: g.Type, period: d})
	}
	return p, nil
}

func oneOf(s string, list []string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
