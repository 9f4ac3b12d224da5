// Package fleet turns a validated scenario into the concrete fleet every
// simulated server reads: nodes with GPUs (UUIDs, PCI addresses, MIG
// instances with GPU-instance ids and MIG UUIDs), Neuron devices, pods with
// their containers and the exact device ids the kubelet would report, and
// DRA resource claims. Identifiers are derived from the seed, so the same
// scenario and seed always give the same fleet.
package fleet

import (
	"fmt"
	"strings"
	"time"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/catalog"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/scenario"
)

// Resource names the device plugins and kubelet use.
const (
	ResourceGPU          = "nvidia.com/gpu"
	ResourceGPUShared    = "nvidia.com/gpu.shared"
	ResourceMIGPrefix    = "nvidia.com/mig-"
	ResourceNeuronCore   = "aws.amazon.com/neuroncore"
	ResourceNeuronDevice = "aws.amazon.com/neuron"
	DRADriverGPU         = "gpu.nvidia.com"
)

// Fleet is the whole simulated world.
type Fleet struct {
	Cluster string
	Region  string
	Seed    uint64
	Nodes   []*Node
	Pods    []*Pod
	Claims  []*Claim
	byName  map[string]*Node
}

// Node returns a node by name.
func (f *Fleet) Node(name string) (*Node, bool) {
	n, ok := f.byName[name]
	return n, ok
}

// Node is one simulated host.
type Node struct {
	Name         string
	Kind         catalog.Kind
	InstanceType string
	Region       string
	Zone         string
	ZoneID       string
	InstanceID   string
	InternalIP   string
	AMIID        string
	SubnetID     string
	VCPUs        int
	MemoryGiB    int
	Labels       map[string]string
	Pods         []*Pod

	// NVIDIA.
	Model           *catalog.GPUModel
	DriverVersion   string
	CUDAVersion     string
	GPUs            []*GPU
	Sharing         string
	Replicas        int
	RenameByDefault bool
	MIGStrategy     string // "" when no GPU is in MIG mode
	DRA             bool
	DCGM            scenario.DCGMExporter

	// Neuron.
	Shape            *catalog.NeuronShape
	NeuronDevices    []*NeuronDevice
	NeuronSchema     string
	RuntimeVCPUError bool
}

// CoreCount is the number of logical NeuronCores on a Neuron node.
func (n *Node) CoreCount() int {
	if n.Shape == nil {
		return 0
	}
	return len(n.NeuronDevices) * n.Shape.CoresPerDevice
}

// SharedResourceName is the resource replicas are offered under.
func (n *Node) SharedResourceName() string {
	if n.RenameByDefault {
		return ResourceGPUShared
	}
	return ResourceGPU
}

// MIGResourceName is the resource a MIG device of the profile is offered under.
func (n *Node) MIGResourceName(profile string) string {
	if n.MIGStrategy == scenario.MIGSingle {
		return ResourceGPU
	}
	return ResourceMIGPrefix + profile
}

// GPU is one physical NVIDIA GPU.
type GPU struct {
	Node     *Node
	Index    int
	Minor    int
	UUID     string
	PCIBusID string
	NUMA     int
	// MIG is non-nil when the GPU is in MIG mode.
	MIG []*MIGInstance
	// Holders of the whole GPU or of its replicas (not of MIG instances).
	Holders  []Holder
	Failures []Failure
}

// MIGEnabled reports whether the GPU is in MIG mode.
func (g *GPU) MIGEnabled() bool { return g.MIG != nil }

// DRAName is the device name the NVIDIA DRA driver publishes.
func (g *GPU) DRAName() string { return fmt.Sprintf("gpu-%d", g.Minor) }

// MIGInstance is one GPU instance (with one compute instance spanning it).
type MIGInstance struct {
	GPU     *GPU
	Slot    int
	Profile catalog.MIGProfile
	Start   int
	GIID    int
	CIID    int
	UUID    string
	// Share of the parent GPU, the cost weight (internal/mig).
	Share   float64
	Holders []Holder
}

// DRAName is the canonical MIG device name of the NVIDIA DRA driver.
func (m *MIGInstance) DRAName() string {
	profile := strings.NewReplacer(".", "", "+", "").Replace(m.Profile.Name)
	return fmt.Sprintf("gpu-%d-mig-%s-%d-%d", m.GPU.Minor, profile, m.Profile.ID, m.Start)
}

// Holder is a pod container that holds a device, directly or via a claim.
type Holder struct {
	Pod       *Pod
	Container *Container
	// Replica is the time-slicing/MPS replica index, -1 for none.
	Replica int
	Claim   *Claim
}

// NeuronDevice is one Inferentia or Trainium device.
type NeuronDevice struct {
	Node     *Node
	Index    int
	Failures []Failure
}

// Failure is a fault at a simulated time after the start.
type Failure struct {
	At       time.Duration
	XID      int
	RowRemap string
	ECC      string
	Count    int
	Throttle string
}

// Pod is a Kubernetes pod.
type Pod struct {
	Name        string
	Namespace   string
	UID         string
	Node        *Node
	Team        string
	Labels      map[string]string
	Annotations map[string]string
	// Owners is the controller chain from the pod's direct owner upwards.
	Owners     []OwnerRef
	Workload   scenario.Workload
	Containers []*Container
	Inference  *Inference
	// PID of the pod's main process (the Neuron runtime's pid).
	PID       int
	NeuronTag string
	IP        string
	Created   time.Time
}

// HasDevices reports whether any container holds an accelerator.
func (p *Pod) HasDevices() bool {
	for _, c := range p.Containers {
		if len(c.Devices) > 0 || len(c.Claims) > 0 {
			return true
		}
	}
	return false
}

// OwnerRef is one link of a pod's controller chain.
type OwnerRef struct {
	APIVersion string
	Kind       string
	Name       string
	UID        string
	// Extra labels the controller puts on the pod (pod-template-hash, …).
	PodLabels map[string]string
}

// Container is one container and the devices the kubelet assigned it.
type Container struct {
	Name    string
	Pod     *Pod
	Devices []DeviceGroup
	Claims  []*Claim
	// Units it holds, for the workload model.
	GPUs        []*GPU
	MIG         []*MIGInstance
	Replicas    []ReplicaRef
	NeuronCores []int // global logical core indexes, cores of whole devices included
	NeuronDevs  []int // devices held whole
}

// DeviceGroup is one ContainerDevices entry of PodResources.
type DeviceGroup struct {
	Resource string
	IDs      []string
	NUMA     []int
}

// ReplicaRef is one time-slicing or MPS replica.
type ReplicaRef struct {
	GPU     *GPU
	Replica int
}

// ID is the device id the plugin reports: GPU-<uuid>::<replica>.
func (r ReplicaRef) ID() string { return fmt.Sprintf("%s::%d", r.GPU.UUID, r.Replica) }

// Claim is an allocated DRA ResourceClaim.
type Claim struct {
	Name      string
	Namespace string
	UID       string
	Node      *Node
	GPUs      []*GPU
	MIG       []*MIGInstance
	Sharing   string
	Consumers []*Pod
}

// Inference is an inference server running in a pod.
type Inference struct {
	Server    string
	Model     string
	Container string
	Pod       *Pod
}
