package acceleratorattributesprocessor

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/otelcol-accel/otelcol-accel/internal/k8sclient"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/static"
)

// Config of the accelerator_attributes processor.
type Config struct {
	// NodeName is this node's Kubernetes name; the API watches are limited to
	// it. Defaults to $K8S_NODE_NAME (set it from the downward API).
	NodeName string `mapstructure:"node_name"`
	// ClusterName, when set, is added as k8s.cluster.name.
	ClusterName string `mapstructure:"cluster_name"`
	// RefreshInterval is how often the kubelet, dockerd and the mapping file
	// are read again. A device id the processor has not seen triggers an
	// early refresh.
	RefreshInterval time.Duration `mapstructure:"refresh_interval"`
	// PodResourcesSocket is the kubelet's PodResources socket; empty turns
	// the kubelet source off.
	PodResourcesSocket string `mapstructure:"pod_resources_socket"`
	// KubernetesAPI adds pod labels, owners, node labels and DRA claims.
	KubernetesAPI KubernetesAPIConfig `mapstructure:"kubernetes_api"`
	// ProcRoot is where /proc/<pid>/cgroup is read to give per-process data
	// on shared GPUs to their pods: /proc with hostPID, or a mount of the
	// host's /proc such as /host/proc.
	ProcRoot string `mapstructure:"proc_root"`
	// MIGLookup: "nvml" asks the NVIDIA driver how MIG UUIDs map to GPU
	// instances (needed to match dcgm-exporter's MIG series when no NVML-source
	// data is in the pipeline); "none" never loads NVML.
	MIGLookup string `mapstructure:"mig_lookup"`

	Team         KeysConfig         `mapstructure:"team"`
	WorkloadName KeysConfig         `mapstructure:"workload_name"`
	WorkloadType WorkloadTypeConfig `mapstructure:"workload_type"`
	// PodLabels are copied as k8s.pod.label.<key>. An allowlist: every label
	// copied multiplies series.
	PodLabels []string `mapstructure:"pod_labels"`
	// PlaceholderNamespaces are where schedulers run reservation pods that
	// hold a GPU for workloads they do not name (Run:ai's runai-reservation).
	// A device held only by such a pod is accelerator.allocation.state
	// reserved, without the pod's team or workload.
	PlaceholderNamespaces []string `mapstructure:"placeholder_namespaces"`

	ECS    ECSConfig    `mapstructure:"ecs"`
	Static StaticConfig `mapstructure:"static"`
}

// KubernetesAPIConfig is the API-server source.
type KubernetesAPIConfig struct {
	Enabled bool `mapstructure:"enabled"`
	// APIConfig is the agent's one way to the API (auth_type, kubeconfig,
	// ...): components with the same settings share the informers.
	k8sclient.APIConfig `mapstructure:",squash"`
	// DRA watches ResourceClaims and ResourceSlices (resource.k8s.io/v1).
	DRA bool `mapstructure:"dra"`
}

// KeysConfig lists labels and annotations to read, first found wins;
// annotations are read before labels.
type KeysConfig struct {
	Labels      []string `mapstructure:"labels"`
	Annotations []string `mapstructure:"annotations"`
}

// WorkloadTypeConfig says where the workload type comes from.
type WorkloadTypeConfig struct {
	KeysConfig `mapstructure:",squash"`
	// Infer applies the documented heuristic (owner kinds such as PyTorchJob
	// → training, pods serving gen_ai metrics → inference) when no label says.
	Infer bool `mapstructure:"infer"`
}

// ECSConfig is the Amazon ECS source.
type ECSConfig struct {
	Enabled      bool   `mapstructure:"enabled"`
	DockerSocket string `mapstructure:"docker_socket"`
}

// StaticConfig is the mapping-file source.
type StaticConfig struct {
	// File is a .yaml, .yml or .csv mapping; empty turns the source off.
	File string `mapstructure:"file"`
	// ReloadInterval is how often the file's mtime is checked; 0 never reloads.
	ReloadInterval time.Duration `mapstructure:"reload_interval"`
}

const (
	migLookupNVML = "nvml"
	migLookupNone = "none"
)

// Validate rejects configurations the processor cannot run with, with a
// message that says what to change. It checks their shape only and reads no
// file: Start reads the mapping file.
func (c *Config) Validate() error {
	var errs []error
	if c.RefreshInterval < time.Second {
		errs = append(errs, fmt.Errorf("refresh_interval %s is below 1s", c.RefreshInterval))
	}
	api := c.KubernetesAPI
	if api.Enabled {
		if err := api.Check(); err != nil {
			errs = append(errs, fmt.Errorf("kubernetes_api: %w", err))
		}
	}
	if c.ProcRoot == "" || !filepath.IsAbs(c.ProcRoot) {
		errs = append(errs, fmt.Errorf("proc_root %q must be an absolute path (/proc, or /host/proc for a mounted host /proc)", c.ProcRoot))
	}
	switch c.MIGLookup {
	case migLookupNVML, migLookupNone:
	default:
		errs = append(errs, fmt.Errorf("mig_lookup %q is not nvml or none", c.MIGLookup))
	}
	for _, k := range c.PodLabels {
		if strings.TrimSpace(k) == "" {
			errs = append(errs, errors.New("pod_labels has an empty key"))
		}
	}
	for _, ns := range c.PlaceholderNamespaces {
		if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("placeholder_namespaces: %q is not a namespace name: %s", ns, strings.Join(msgs, "; ")))
		}
	}
	if c.ECS.Enabled && c.ECS.DockerSocket == "" {
		errs = append(errs, errors.New("ecs.docker_socket is empty"))
	}
	if c.Static.ReloadInterval < 0 {
		errs = append(errs, fmt.Errorf("static.reload_interval %s is negative", c.Static.ReloadInterval))
	}
	if c.Static.File != "" {
		// Only the name: the file is read at Start, which fails on a
		// malformed mapping with file:line.
		if err := static.CheckName(c.Static.File); err != nil {
			errs = append(errs, fmt.Errorf("static.file: %w", err))
		}
	}
	if c.PodResourcesSocket == "" && !api.Enabled && !c.ECS.Enabled && c.Static.File == "" {
		errs = append(errs, errors.New("no source is enabled: set pod_resources_socket, kubernetes_api.enabled, ecs.enabled or static.file"))
	}
	return errors.Join(errs...)
}
