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
