package catalog

// Kind is the accelerator family of a node.
type Kind string

const (
	KindNVIDIA Kind = "nvidia"
	KindNeuron Kind = "neuron"
)

// InstanceType is an EC2 instance type the simulator can host.
type InstanceType struct {
	Name string
	Kind Kind
	// NVIDIA: model key and GPU count. Neuron: shape and device count.
	GPUModel string
	Devices  int
	Neuron   *NeuronShape
	VCPUs    int
	// MemoryGiB is host memory.
	MemoryGiB int
}

// Instance types of the pricing table (reference/cost_k8s.md §6.3) whose
// accelerators the simulator models.
var instanceTypes = map[string]*InstanceType{
	"p5.48xlarge":   {Name: "p5.48xlarge", Kind: KindNVIDIA, GPUModel: "H100-80GB", Devices: 8, VCPUs: 192, MemoryGiB: 2048},
	"p5.4xlarge":    {Name: "p5.4xlarge", Kind: KindNVIDIA, GPUModel: "H100-80GB", Devices: 1, VCPUs: 16, MemoryGiB: 256},
	"p5e.48xlarge":  {Name: "p5e.48xlarge", Kind: KindNVIDIA, GPUModel: "H200-141GB", Devices: 8, VCPUs: 192, MemoryGiB: 2048},
	"p5en.48xlarge": {Name: "p5en.48xlarge", Kind: KindNVIDIA, GPUModel: "H200-141GB", Devices: 8, VCPUs: 192, MemoryGiB: 2048},
	"p4d.24xlarge":  {Name: "p4d.24xlarge", Kind: KindNVIDIA, GPUModel: "A100-40GB", Devices: 8, VCPUs: 96, MemoryGiB: 1152},
	"g6.xlarge":     {Name: "g6.xlarge", Kind: KindNVIDIA, GPUModel: "L4", Devices: 1, VCPUs: 4, MemoryGiB: 16},
	"g6.12xlarge":   {Name: "g6.12xlarge", Kind: KindNVIDIA, GPUModel: "L4", Devices: 4, VCPUs: 48, MemoryGiB: 192},
	"g6.48xlarge":   {Name: "g6.48xlarge", Kind: KindNVIDIA, GPUModel: "L4", Devices: 8, VCPUs: 192, MemoryGiB: 768},
	"inf2.xlarge":   {Name: "inf2.xlarge", Kind: KindNeuron, Neuron: shapeInf2, Devices: 1, VCPUs: 4, MemoryGiB: 16},
	"inf2.8xlarge":  {Name: "inf2.8xlarge", Kind: KindNeuron, Neuron: shapeInf2, Devices: 1, VCPUs: 32, MemoryGiB: 128},
	"inf2.24xlarge": {Name: "inf2.24xlarge", Kind: KindNeuron, Neuron: shapeInf2, Devices: 6, VCPUs: 96, MemoryGiB: 384},
	"inf2.48xlarge": {Name: "inf2.48xlarge", Kind: KindNeuron, Neuron: shapeInf2, Devices: 12, VCPUs: 192, MemoryGiB: 768},
	"trn1.2xlarge":  {Name: "trn1.2xlarge", Kind: KindNeuron, Neuron: shapeTrn1, Devices: 1, VCPUs: 8, MemoryGiB: 32},
	"trn1.32xlarge": {Name: "trn1.32xlarge", Kind: KindNeuron, Neuron: shapeTrn1, Devices: 16, VCPUs: 128, MemoryGiB: 512},
	"trn2.48xlarge": {Name: "trn2.48xlarge", Kind: KindNeuron, Neuron: shapeTrn2, Devices: 16, VCPUs: 192, MemoryGiB: 2048},
}

// InstanceTypeByName returns a known instance type.
func InstanceTypeByName(name string) (*InstanceType, bool) {
	t, ok := instanceTypes[name]
	return t, ok
}

// InstanceTypeNames lists the known instance types, sorted.
func InstanceTypeNames() []string { return sortedKeys(instanceTypes) }
