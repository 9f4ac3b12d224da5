package accelschema

// IsSharedCopy reports whether a partition type is a replica of a whole GPU
// (time slicing, MPS): the attributes processor writes one copy of the
// device's resource per consumer, with hw.parent naming the device, and the
// cost processor prices the copies as partitions of it. Both sides of that
// contract use this one rule.
func IsSharedCopy(partitionType string) bool {
	return partitionType == PartitionTimeSlicing || partitionType == PartitionMPS
}

// IsConsumerCopy reports whether a resource is one consumer's copy of a
// shared device, as the attributes processor makes them: a time-sliced, MPS
// or DRA partition under a parent device, or a resource whose parent is its
// own hw.id. Copies carry identity, share and what was measured for their
// consumer; the device's own resource keeps the device-wide readings.
func IsConsumerCopy(hwID, parent, partitionType string) bool {
	if parent == "" {
		return false
	}
	return parent == hwID || IsSharedCopy(partitionType) || partitionType == PartitionDRA
}
