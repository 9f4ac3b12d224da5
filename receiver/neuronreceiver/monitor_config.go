package neuronreceiver

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
)

// monitorConfig is neuron-monitor's JSON configuration file (`-c`), written
// from the receiver's config so that the two cannot disagree.
type monitorConfig struct {
	Period         string            `json:"period"`
	NeuronRuntimes []runtimeSelector `json:"neuron_runtimes,omitempty"`
	SystemMetrics  []metricGroup     `json:"system_metrics,omitempty"`
}

type runtimeSelector struct {
	TagFilter string        `json:"tag_filter"`
	Metrics   []metricGroup `json:"metrics"`
}

type metricGroup struct {
	Type string `json:"type"`
}

func (cfg *Config) monitorConfig() monitorConfig {
	mc := monitorConfig{Period: strconv.FormatInt(int64(cfg.Period.Seconds()), 10) + "s"}
	var rt []metricGroup
	for _, g := range runtimeGroups {
		if cfg.wants(g) {
			rt = append(rt, metricGroup{Type: g})
		}
	}
	if len(rt) > 0 {
		filter := cfg.TagFilter
		if filter == "" {
			filter = ".*"
		}
		mc.NeuronRuntimes = []runtimeSelector{{TagFilter: filter, Metrics: rt}}
	}
	for _, g := range systemGroups {
		if cfg.wants(g) {
			mc.SystemMetrics = append(mc.SystemMetrics, metricGroup{Type: g})
		}
	}
	return mc
}

// writeMonitorConfig writes neuron-monitor's config into a new private
// directory and returns the directory (to remove on shutdown) and the file.
func (cfg *Config) writeMonitorConfig() (dir, file string, err error) {
	dir, err = os.MkdirTemp("", "otelcol-neuron-")
	if err != nil {
		return "", "", err
	}
	raw, err := json.MarshalIndent(cfg.monitorConfig(), "", "  ")
	if err != nil {
		os.RemoveAll(dir)
		return "", "", err
	}
	file = filepath.Join(dir, "neuron-monitor.json")
	if err := os.WriteFile(file, append(raw, '\n'), 0o600); err != nil {
		os.RemoveAll(dir)
		return "", "", err
	}
	return dir, file, nil
}
