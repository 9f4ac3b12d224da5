package accelschema

import "testing"

func TestIsSharedCopy(t *testing.T) {
	for typ, want := range map[string]bool{
		PartitionTimeSlicing: true, PartitionMPS: true,
		PartitionNone: false, PartitionMIG: false, PartitionDRA: false, PartitionNeuronCore: false,
	} {
		if got := IsSharedCopy(typ); got != want {
			t.Errorf("IsSharedCopy(%q) = %v, want %v", typ, got, want)
		}
	}
}

func TestIsConsumerCopy(t *testing.T) {
	const gpu, mig = "GPU-1", "MIG-2"
	cases := []struct {
		hwID, parent, typ string
		want              bool
	}{
		{gpu, "", PartitionNone, false},        // the device's own resource
		{gpu, gpu, PartitionTimeSlicing, true}, // a time-sliced copy
		{gpu, gpu, PartitionMPS, true},         // an MPS copy
		{gpu, gpu, PartitionDRA, true},         // a shared DRA claim's copy
		{mig, gpu, PartitionMIG, false},        // a MIG instance is a partition, not a copy
		{mig, gpu, PartitionDRA, true},         // a MIG instance shared through DRA
		{"neuron_device_0/neuroncore_1", "neuron_device_0", PartitionNeuronCore, false},
	}
	for _, c := range cases {
		if got := IsConsumerCopy(c.hwID, c.parent, c.typ); got != c.want {
			t.Errorf("IsConsumerCopy(%q, %q, %q) = %v, want %v", c.hwID, c.parent, c.typ, got, c.want)
		}
	}
}
