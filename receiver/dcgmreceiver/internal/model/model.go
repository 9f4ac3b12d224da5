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
	// (dcgm-exporter MIG instance; its DRA MIG UUID when the exporter's rows
	// have no GPU_I_ID).
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
	// GPUInstanceID and ComputeInstanceID are -1 when unknown (PartitionID
	// is then empty).
	GPUInstanceID     int
	ComputeInstanceID int

	// Kubernetes hints from dcgm-exporter labels, set only when exactly
	// one holder is named for the resource.
	Pod, Namespace, Container string
	// DRA hints from dcgm-exporter's dra_* labels, set only when exactly
	// one claim is named for the resource.
	DRA DRAHint
}

// DRAHint is the ResourceClaim allocation dcgm-exporter names for a device.
type DRAHint struct {
	ClaimName, ClaimNamespace, Driver, Pool, Device string
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
	// XIDWindow is dcgm-exporter's DCGM_EXP_XID_ERRORS_COUNT: how many
	// times each XID was seen in the exporter's window, by code; nil when
	// the exporter does not report it.
	XIDWindow []XIDWindowCount

	// Profiling activity (ratios).
	GREngineActive, SMActive, SMOccupancy, TensorActive, DRAMActive Value

	RetiredPages [NumRetirementCauses]Value
	// RetirementPending is 1 while retired pages wait for the next reset
	// (NVML only tells whether, dcgm-exporter also how many).
	RetirementPending Value

	RemappedCorrectable, RemappedUncorrectable Value
	RemapPending, RemapFailed                  Value

	Processes []Process

	// PodGPUUtil and PodMemUsed are per-pod measurements of a shared GPU
	// (dcgm-exporter's per-pod split), ordered by pod; when a source
	// reports them, GPUUtil and MemUsed stay absent (no total beside them).
	PodGPUUtil, PodMemUsed []PodReading

	// Partitioned is set on a GPU in MIG mode: what its MIG instances
	// measure (memory use, engine activity, processes) is theirs, not the
	// GPU's (see KeepOwn).
	Partitioned bool
}

// PodReading is one pod's share of a reading, in schema units.
type PodReading struct {
	// Pod is "<namespace>/<pod>".
	Pod string
	V   float64
}

// XIDWindowCount is how many times one XID was seen in a window.
type XIDWindowCount struct {
	Code  int
	Count int64
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
	// Source is who saw it: "nvml" when empty, "kernel_log".
	Source string
	// PID, Process and Detail are what the kernel log says of an XID: the
	// process the driver named (PID 0 when unknown) and its lines.
	PID     int
	Process string
	Detail  string
}

// Readings returns pointers to every per-device reading of the sample
// (processes and per-pod readings excluded), for checks that apply to all
// of them.
func (s *Sample) Readings() []*Value { return s.appendReadings(nil) }

func (s *Sample) appendReadings(out []*Value) []*Value {
	return append(s.appendPartitionReadings(s.appendDeviceReadings(out)), &s.MemTotal)
}

// DropNonFinite marks readings that overflowed in unit conversion (or were
// computed from such) as absent, and returns how many it dropped.
func (s *Sample) DropNonFinite() int {
	n := 0
	var buf [readingsRoom]*Value
	for _, v := range s.appendReadings(buf[:0]) {
		if v.OK && (math.IsNaN(v.V) || math.IsInf(v.V, 0)) {
			*v = Value{}
			n++
		}
	}
	return n
}
