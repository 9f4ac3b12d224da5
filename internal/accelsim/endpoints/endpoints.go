// Package endpoints is the schema of the endpoints.json file `accelsim
// serve` writes into its state directory: where every simulated source
// listens, so the demo script, end-to-end tests and the load harness can
// configure the collector against it. cmd/accelsim/README.md documents it.
package endpoints

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// SchemaVersion changes when a field changes meaning or disappears.
const SchemaVersion = 1

// FileName is the file's name in the state directory.
const FileName = "endpoints.json"

// File is the whole document.
type File struct {
	SchemaVersion int    `json:"schema_version"`
	Scenario      string `json:"scenario"`
	Seed          uint64 `json:"seed"`
	// Speed is how many simulated seconds pass per wall second.
	Speed float64 `json:"speed"`
	// StartedAt is the wall time simulated time 0 corresponds to.
	StartedAt     time.Time `json:"started_at"`
	Cluster       string    `json:"cluster"`
	Region        string    `json:"region"`
	Kubeconfig    string    `json:"kubeconfig"`
	KubernetesAPI string    `json:"kubernetes_api"`
	Nodes         []Node    `json:"nodes"`
}

// Node is one simulated host.
type Node struct {
	Name         string `json:"name"`
	Kind         string `json:"kind"` // "nvidia" or "neuron"
	InstanceType string `json:"instance_type"`
	InstanceID   string `json:"instance_id"`
	Region       string `json:"region"`
	Zone         string `json:"zone"`
	// DCGMExporterURL is the node's dcgm-exporter /metrics (NVIDIA nodes).
	DCGMExporterURL string `json:"dcgm_exporter_url,omitempty"`
	// DCGMPerPodUsage: the dcgm-exporter measures GPU utilization and
	// memory per pod on time-sliced GPUs (dcgm-exporter 4.5+ with
	// KUBERNETES_VIRTUAL_GPUS); the agent reads them with per_pod_usage.
	DCGMPerPodUsage bool `json:"dcgm_per_pod_usage,omitempty"`
	// PodResourcesSocket is the kubelet PodResources v1 unix socket.
	PodResourcesSocket string `json:"pod_resources_socket"`
	// NeuronMonitor runs the node's neuron-monitor (Neuron nodes).
	NeuronMonitor *Command `json:"neuron_monitor,omitempty"`
	// KernelLog is the node's kernel log (/var/log/kern.log's format): the
	// drivers' lines for the scenario's failures, written as they happen.
	KernelLog string            `json:"kernel_log,omitempty"`
	Inference []InferenceTarget `json:"inference"`
	Devices   []Device          `json:"devices"`
	Pods      []Pod             `json:"pods"`
}

// Command is how to start the simulated neuron-monitor. Path is an
// executable wrapper that takes exactly the real binary's flags (-c FILE);
// Argv and Env are the same command spelled out.
type Command struct {
	Path        string   `json:"path"`
	Argv        []string `json:"argv"`
	Env         []string `json:"env"`
	CommandLine string   `json:"command_line"`
}

// InferenceTarget is one inference server's /metrics.
type InferenceTarget struct {
	URL       string `json:"url"`
	Server    string `json:"server"` // "vllm" or "sglang"
	Model     string `json:"model"`
	Pod       string `json:"pod"`
	Namespace string `json:"namespace"`
	PodUID    string `json:"pod_uid"`
	Container string `json:"container"`
}

// Device is one physical accelerator.
type Device struct {
	Index int `json:"index"`
	// ID is the GPU UUID, or neuron_device_<index> on Neuron nodes.
	ID        string      `json:"id"`
	Model     string      `json:"model"`
	PCIBusID  string      `json:"pci_bus_id,omitempty"`
	DRADevice string      `json:"dra_device,omitempty"`
	MIG       []MIGDevice `json:"mig,omitempty"`
	Holders   []Holder    `json:"holders,omitempty"`
	Failures  []Failure   `json:"failures,omitempty"`
}

// MIGDevice is one GPU instance.
type MIGDevice struct {
	GIID      int      `json:"gpu_instance_id"`
	Profile   string   `json:"profile"`
	UUID      string   `json:"uuid"`
	Share     float64  `json:"share"`
	DRADevice string   `json:"dra_device,omitempty"`
	Holders   []Holder `json:"holders,omitempty"`
}

// Holder is a pod container holding a device or a share of it.
type Holder struct {
	Pod       string `json:"pod"`
	Namespace string `json:"namespace"`
	Container string `json:"container"`
	// DeviceID is what PodResources reports (GPU-…::N for replicas, core
	// indexes for Neuron).
	DeviceID string `json:"device_id,omitempty"`
	Claim    string `json:"claim,omitempty"`
}

// Failure is a scheduled fault, at simulated time At after the start.
type Failure struct {
	At       string `json:"at"`
	XID      int    `json:"xid,omitempty"`
	RowRemap string `json:"row_remap,omitempty"`
	ECC      string `json:"ecc,omitempty"`
	Count    int    `json:"count,omitempty"`
}

// Pod is a pod on the node and the attributes the collector should find.
type Pod struct {
	Name         string `json:"name"`
	Namespace    string `json:"namespace"`
	UID          string `json:"uid"`
	Team         string `json:"team,omitempty"`
	Workload     string `json:"workload"`
	WorkloadType string `json:"workload_type,omitempty"`
	Profile      string `json:"profile,omitempty"`
}

// Write stores the file atomically, so readers never see half of it.
func Write(dir string, f *File) (string, error) {
	path := filepath.Join(dir, FileName)
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return "", err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return "", fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	return path, nil
}

// Read loads an endpoints file.
func Read(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f File
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if f.SchemaVersion != SchemaVersion {
		return nil, fmt.Errorf("%s: schema_version %d, this reader understands %d", path, f.SchemaVersion, SchemaVersion)
	}
	return &f, nil
}

// Node returns a node by name.
func (f *File) Node(name string) (*Node, bool) {
	for i := range f.Nodes {
		if f.Nodes[i].Name == name {
			return &f.Nodes[i], true
		}
	}
	return nil, false
}
