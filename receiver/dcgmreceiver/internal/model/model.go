// Package model is what both sources (NVML and dcgm-exporter) produce and
// what the receiver turns into metrics and health events: readings already
// in schema units (bytes, joules, hertz, seconds, ratios 0..1), keyed by the
// identity docs/architecture.md prescribes. Keeping the sources on one model
// is what makes their output identical whatever the source.
package model

import (
	"math"
	"time"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

// Value is a reading a source may not have: OK is false when the device does
// not support it or the source does not export it, so nothing is emitted
// (rather than a misleading zero).
type Value struct {
	V  float64
	OK bool
}

// Of returns a present reading.
func Of(v float64) Value { return Value{V: v, OK: true} }

// Bool returns 1 or 0 as a present reading.
func Bool(b bool) Value {
	if b {
		return Of(1)
	}
	return Of(0)
}

// Identity is who a resource stands for (docs/architecture.md, "One resource
// per device or partition").
type Identity struct {
	// HWID is the GPU UUID, the MIG UUID (NVML) or "<parent UUID>/gi<N>"
	// (dcgm-exporter MIG instance).
	HWID string
	// Parent is the UUID of the physical GPU, set on MIG instances only.
	Parent string
	// Index is the nvidia-smi index of the physical GPU; -1 when unknown.
	Index         int
	Model         string
	DriverVersion string
	PCIBusID      string
	HostName      string

	// PartitionType is accelschema.PartitionNone or accelschema.PartitionMIG.
	PartitionType string
	// PartitionID is the MIG GPU-instance id as a string.
	PartitionID string
	// Profile is the MIG profile, e.g. "1g.10gb".
	Profile string
	// Share is the fraction of the physical GPU; 0 when it cannot be known.
	Share float64
	// GPUInstanceID and ComputeInstanceID are -1 when unknown.
	GPUInstanceID     int
	ComputeInstanceID int

	// Kubernetes hints from dcgm-exporter labels.
	Pod, Namespace, Container string
}

// IsMIG reports whether the identity is a MIG instance.
func (id Identity) IsMIG() bool { return id.PartitionType == accelschema.PartitionMIG }

// Throttle reasons, in the order of accelschema.EnumThrottleReason.
const (
	ThrottlePower = iota
	ThrottleThermal
	ThrottleSyncBoost
	ThrottleBoardLimit
	ThrottleLowUtil
	ThrottleReliability
	ThrottleAppClocks
	ThrottleSWPowerCap
	ThrottleHWSlowdown
	NumThrottleReasons
)

// ThrottleReasonNames maps the indexes above to schema values.
var ThrottleReasonNames = [NumThrottleReasons]string{
	accelschema.ThrottlePower, accelschema.ThrottleThermal, accelschema.ThrottleSyncBoost,
	accelschema.ThrottleBoardLimit, accelschema.ThrottleLowUtil, accelschema.ThrottleReliability,
	accelschema.ThrottleAppClocks, accelschema.ThrottleSWPowerCap, accelschema.ThrottleHWSlowdown,
}

// Error classes counted by hw.errors (XIDs are counted by the health tracker).
const (
	ErrECCCorrected = iota
	ErrECCUncorrected
	ErrPCIeReplay
	ErrNVLinkCRC
	ErrNVLinkReplay
	ErrNVLinkRecovery
	NumErrorTypes
)

// ErrorTypeNames maps the indexes above to schema values.
var ErrorTypeNames = [NumErrorTypes]string{
	accelschema.ErrorECCCorrected, accelschema.ErrorECCUncorrected, accelschema.ErrorPCIeReplay,
	accelschema.ErrorNVLinkCRC, accelschema.ErrorNVLinkReplay, accelschema.ErrorNVLinkRecovery,
}

// Links and directions of hw.gpu.io and accelerator.link.throughput.
const (
	LinkPCIe = iota
	LinkNVLink
	NumLinks
)

const (
	DirReceive = iota
	DirTransmit
	NumDirections
)

// LinkNames and DirectionNames map the indexes above to schema values.
var (
	LinkNames      = [NumLinks]string{accelschema.LinkPCIe, accelschema.LinkNVLink}
	DirectionNames = [NumDirections]string{accelschema.DirectionReceive, accelschema.DirectionTransmit}
)

// Retired-page causes, in the order of accelschema.EnumRetirementCause.
const (
	RetiredSingleBit = iota
	RetiredDoubleBit
	RetiredPending
	NumRetirementCauses
)

// RetirementCauseNames maps the indexes above to schema values.
var RetirementCauseNames = [NumRetirementCauses]string{
	accelschema.RetirementSingleBit, accelschema.RetirementDoubleBit, accelschema.RetirementPending,
}

// Process is one process on a GPU or MIG instance.
type Process struct {
	PID      int64
	MemBytes Value
	// SMUtil is the process's SM utilization (ratio) over the interval.
	SMUtil Value
}

// Sample is one device's or partition's readings at one scrape.
type Sample struct {
	Identity

	// Lost is set when the driver reports the GPU as lost (fallen off the
	// bus); nothing else is read then.
	Lost bool

	// Utilization by engine (ratios).
	GPUUtil, EncoderUtil, DecoderUtil Value

	// Memory in bytes, and used/total.
	MemUsed, MemTotal, MemUtil Value

	Power  Value // W
	Energy Value // J since the driver loaded

	TempGPU, TempMemory Value // Cel

	ClockSM, ClockMemory Value // Hz

	ThrottleActive [NumThrottleReasons]Value // 1 or 0
	ThrottleTime   [NumThrottleReasons]Value // seconds, cumulative

	LinkBytes [NumLinks][NumDirections]Value // cumulative bytes
	LinkRate  [NumLinks][NumDirections]Value // bytes per second

	Errors [NumErrorTypes]Value // cumulative counts

	// LastXID is dcgm-exporter's DCGM_FI_DEV_XID_ERRORS: the value of the
	// last XID, not a count. NVML delivers XIDs as events instead.
	LastXID Value

	// Profiling activity (ratios).
	GREngineActive, SMActive, SMOccupancy, TensorActive, DRAMActive Value

	RetiredPages [NumRetirementCauses]Value
	// RetirementPending is 1 while retired pages wait for the next reset
	// (NVML only tells whether, dcgm-exporter also how many).
	RetirementPending Value

	RemappedCorrectable, RemappedUncorrectable Value
	RemapPending, RemapFailed                  Value

	Processes []Process
}

// Snapshot is one scrape of one source.
type Snapshot struct {
	Time    time.Time
	Samples []Sample
}

// EventKind is an asynchronous signal from the driver.
type EventKind int

const (
	// EventXID carries the XID in Code.
	EventXID EventKind = iota + 1
	// EventRecoveryAction carries NVML's GPU recovery action in Code.
	EventRecoveryAction
	// EventDeviceLost says the GPU is no longer reachable.
	EventDeviceLost
)

// Event is an asynchronous health signal for one device or MIG instance.
type Event struct {
	Device Identity
	Time   time.Time
	Kind   EventKind
	Code   int
}

// Readings returns pointers to every per-device reading of the sample
// (processes excluded), for checks that apply to all of them.
func (s *Sample) Readings() []*Value {
	out := []*Value{&s.GPUUtil, &s.EncoderUtil, &s.DecoderUtil, &s.MemUsed, &s.MemTotal, &s.MemUtil, &s.Power, &s.Energy,
		&s.TempGPU, &s.TempMemory, &s.ClockSM, &s.ClockMemory, &s.LastXID, &s.GREngineActive, &s.SMActive, &s.SMOccupancy,
		&s.TensorActive, &s.DRAMActive, &s.RemappedCorrectable, &s.RemappedUncorrectable, &s.RemapPending, &s.RemapFailed,
		&s.RetirementPending}
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

// DropNonFinite marks readings that overflowed in unit conversion (or were
// computed from such) as absent, and returns how many it dropped.
func (s *Sample) DropNonFinite() int {
	n := 0
	for _, v := range s.Readings() {
		if v.OK && (math.IsNaN(v.V) || math.IsInf(v.V, 0)) {
			*v = Value{}
			n++
		}
	}
	return n
}
