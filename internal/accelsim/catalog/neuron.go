package catalog

// NeuronShape describes the Neuron devices of an instance family as
// neuron-monitor's neuron_hardware_info reports them.
type NeuronShape struct {
	DeviceType    string // "inferentia2", "trainium", "trainium2"
	DeviceVersion string // "v3"
	CoreVersion   string // "v2", "v3d"
	// CoresPerDevice counts logical NeuronCores (what neuron-monitor and the
	// device plugin index), PhysicalPerLogical how many physical cores make
	// one logical core (Trn2 with LNC=2).
	CoresPerDevice     int
	PhysicalPerLogical int
	LogicalCoreConfig  int
	DeviceMemoryBytes  int64
	// PeakFlopsPerCore is the bf16 peak of one logical core, for "flops".
	PeakFlopsPerCore float64
	// GenTokensPerSecPerCore is the decode throughput reference for serving.
	GenTokensPerSecPerCore float64
}

var (
	shapeInf2 = &NeuronShape{
		DeviceType: "inferentia2", DeviceVersion: "v3", CoreVersion: "v2",
		CoresPerDevice: 2, PhysicalPerLogical: 1, LogicalCoreConfig: 1,
		DeviceMemoryBytes: 32 << 30, PeakFlopsPerCore: 95e12, GenTokensPerSecPerCore: 180,
	}
	shapeTrn1 = &NeuronShape{
		DeviceType: "trainium", DeviceVersion: "v2", CoreVersion: "v2",
		CoresPerDevice: 2, PhysicalPerLogical: 1, LogicalCoreConfig: 1,
		DeviceMemoryBytes: 32 << 30, PeakFlopsPerCore: 95e12, GenTokensPerSecPerCore: 180,
	}
	shapeTrn2 = &NeuronShape{
		DeviceType: "trainium2", DeviceVersion: "v4", CoreVersion: "v3d",
		CoresPerDevice: 4, PhysicalPerLogical: 2, LogicalCoreConfig: 2,
		DeviceMemoryBytes: 96 << 30, PeakFlopsPerCore: 2 * 83e12, GenTokensPerSecPerCore: 520,
	}
)
