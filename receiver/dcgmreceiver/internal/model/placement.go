package model

// The counted-once rule (accelschema.Counting) as it applies to a GPU and
// its MIG instances: what the physical GPU measures lives on the GPU's own
// resource, what a MIG instance measures lives on that instance, and a GPU
// in MIG mode does not repeat what its instances report. Both sources end
// each sample with KeepOwn, so nothing downstream (health, emission) can
// place a reading on the wrong resource.

// appendDeviceReadings appends the readings counted once per physical
// device (accelschema.CountedPerDevice) to out: power, energy,
// temperatures, clocks and throttling, link traffic, error and remap
// counters, the last XID. Checks run on every sample of every scrape pass
// a buffer on their stack rather than allocate a list.
func (s *Sample) appendDeviceReadings(out []*Value) []*Value {
	out = append(out, &s.Power, &s.Energy, &s.TempGPU, &s.TempMemory, &s.ClockSM, &s.ClockMemory, &s.LastXID,
		&s.RemappedCorrectable, &s.RemappedUncorrectable, &s.RemapPending, &s.RemapFailed, &s.RetirementPending)
	for i := range s.ThrottleActive {
		out = append(out, &s.ThrottleActive[i], &s.ThrottleTime[i])
	}
	for i := range s.Errors {
		out = append(out, &s.Errors[i])
	}
	for i := range s.RetiredPages {
		out = append(out, &s.RetiredPages[i])
	}
	for l := range s.LinkBytes {
		for d := range s.LinkBytes[l] {
			out = append(out, &s.LinkBytes[l][d], &s.LinkRate[l][d])
		}
	}
	return out
}

// appendPartitionReadings appends the readings counted where they were
// measured (accelschema.CountedPerPartition): the whole GPU, or each MIG
// instance.
func (s *Sample) appendPartitionReadings(out []*Value) []*Value {
	return append(out, &s.GPUUtil, &s.EncoderUtil, &s.DecoderUtil, &s.MemUsed, &s.MemUtil,
		&s.GREngineActive, &s.SMActive, &s.SMOccupancy, &s.TensorActive, &s.DRAMActive)
}

// readingsRoom holds every reading of a sample (Readings), for the
// stack buffers of appendDeviceReadings' callers.
const readingsRoom = 128

// KeepOwn clears what this resource must not carry: a MIG instance keeps
// only what it measures (and its own memory size, MemTotal); a GPU in MIG
// mode keeps only what the physical GPU measures (and its memory size). A
// whole GPU keeps everything.
func (s *Sample) KeepOwn() {
	switch {
	case s.IsMIG():
		var buf [readingsRoom]*Value
		for _, v := range s.appendDeviceReadings(buf[:0]) {
			*v = Value{}
		}
		// Losing the bus, XIDs and conditions are the GPU's.
		s.Lost = false
		s.XIDWindow = nil
		s.Partitioned = false
	case s.Partitioned:
		var buf [readingsRoom]*Value
		for _, v := range s.appendPartitionReadings(buf[:0]) {
			*v = Value{}
		}
		s.Processes = nil
		s.PodGPUUtil, s.PodMemUsed = nil, nil
	}
}
