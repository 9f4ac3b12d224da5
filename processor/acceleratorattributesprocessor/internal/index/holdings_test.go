package index

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/podresources"
)

func TestHoldingsNameDevicesAsTheirMetricsDo(t *testing.T) {
	topo := NewTopology()
	for dev := 0; dev < 2; dev++ {
		for c := 0; c < 4; c++ {
			topo.Learn(Observation{Identity: Identity{Kind: accelschema.KindAWSNeuron, DeviceIndex: dev, CoreIndex: dev*4 + c, GI: -1}})
		}
	}
	pods := []podresources.Pod{
		pod("a", "whole", ctr("c", "aws.amazon.com/neuron", "1")),
		pod("a", "cores", ctr("c", "aws.amazon.com/neuroncore", "2", "0")),
		pod("a", "legacy-mig", ctr("c", "nvidia.com/mig-1g.10gb", "MIG-"+gpu0+"/3/0")),
		pod("a", "by-index", ctr("c", "nvidia.com/gpu", "5")),
		pod("a", "placeholder", ctr("c", "nvidia.com/gpu", gpu1)),
	}
	pods[4].Namespace = "runai-reservation"
	ix := Build(Input{PodResources: pods, PodResourcesOK: true, Authoritative: true, Topology: topo,
		PlaceholderNamespaces: []string{"runai-reservation"}})

	assert.Equal(t, []Holding{{HWID: "neuron_device_1", Parent: "neuron_device_1"}}, ix.Holdings("a", "whole"))
	assert.Equal(t, []Holding{
		{HWID: "neuron_device_0/neuroncore_0", Parent: "neuron_device_0", PartitionType: accelschema.PartitionNeuronCore, PartitionID: "0"},
		{HWID: "neuron_device_0/neuroncore_2", Parent: "neuron_device_0", PartitionType: accelschema.PartitionNeuronCore, PartitionID: "2"},
	}, ix.Holdings("a", "cores"))
	assert.Equal(t, []Holding{{HWID: gpu0 + "/gi3", Parent: gpu0, PartitionType: accelschema.PartitionMIG, PartitionID: "3"}},
		ix.Holdings("a", "legacy-mig"), "dcgm-exporter's <parent>/gi<N> id")
	assert.Empty(t, ix.Holdings("a", "by-index"), "a device-plugin index names no UUID: no guessed hw.id")
	assert.Empty(t, ix.Holdings("runai-reservation", "placeholder"), "a reservation serves nothing")
}
