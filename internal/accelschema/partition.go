package accelschema

// IsSharedCopy reports whether a partition type is a replica of a whole GPU
// (time slicing, MPS): the attributes processor writes one copy of the
// device's resource per consumer, with hw.parent naming the device, and the
// cost processor prices the copies as partitions of it. Both sides of that
// contract use this one rule.
func IsSharedCopy(partitionType string) bool {
	return partitionType == PartitionTimeSlicing || partitionType == PartitionMPS
}
