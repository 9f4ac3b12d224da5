package mapping

import (
	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/xid"
	"github.com/otelcol-accel/otelcol-accel/receiver/neuronreceiver/internal/metadata"
)

// neuron-monitor's names (left) mapped onto the unified schema (right). The
// schema side always comes from accelschema; the generated metadata enums
// are looked up by those values so that a mismatch between metadata.yaml and
// accelschema fails the tests instead of emitting a wrong name.

var executionStatuses = map[string]metadata.AttributeExecutionStatus{
	"completed":              metadata.MapAttributeExecutionStatus[accelschema.ExecCompleted],
	"completed_with_err":     metadata.MapAttributeExecutionStatus[accelschema.ExecCompletedWithErr],
	"completed_with_num_err": metadata.MapAttributeExecutionStatus[accelschema.ExecCompletedWithNumErr],
	"timed_out":              metadata.MapAttributeExecutionStatus[accelschema.ExecTimedOut],
	"incorrect_input":        metadata.MapAttributeExecutionStatus[accelschema.ExecIncorrectInput],
	"failed_to_queue":        metadata.MapAttributeExecutionStatus[accelschema.ExecFailedToQueue],
}

var executionErrors = map[string]metadata.AttributeExecutionErrorType{
	"generic":   metadata.MapAttributeExecutionErrorType[accelschema.ErrorExecGeneric],
	"numerical": metadata.MapAttributeExecutionErrorType[accelschema.ErrorExecNumerical],
	// The user guide lists "numeric"; neuron-monitor prints "numerical".
	"numeric":   metadata.MapAttributeExecutionErrorType[accelschema.ErrorExecNumerical],
	"transient": metadata.MapAttributeExecutionErrorType[accelschema.ErrorExecTransient],
	"model":     metadata.MapAttributeExecutionErrorType[accelschema.ErrorExecModel],
	"runtime":   metadata.MapAttributeExecutionErrorType[accelschema.ErrorExecRuntime],
	"hardware":  metadata.MapAttributeExecutionErrorType[accelschema.ErrorExecHardware],
}

// eccKind is one of the four hardware ECC counters of neuron_hw_counters.
type eccKind int

const (
	eccMemCorrected eccKind = iota
	eccMemUncorrected
	eccSRAMCorrected
	eccSRAMUncorrected
	eccKinds
)

type eccInfo struct {
	source    string // neuron-monitor field
	errorType string // accelschema error.type
	attr      metadata.AttributeHwErrorType
	condition xid.Condition
	what      string // for the log body
}

var eccTable = [eccKinds]eccInfo{
	eccMemCorrected:    {"mem_ecc_corrected", accelschema.ErrorECCCorrected, metadata.MapAttributeHwErrorType[accelschema.ErrorECCCorrected], xid.NeuronMemECCCorrected, "corrected device-memory ECC"},
	eccMemUncorrected:  {"mem_ecc_uncorrected", accelschema.ErrorECCUncorrected, metadata.MapAttributeHwErrorType[accelschema.ErrorECCUncorrected], xid.NeuronMemECCUncorrected, "uncorrected device-memory ECC"},
	eccSRAMCorrected:   {"sram_ecc_corrected", accelschema.ErrorSRAMECCCorrected, metadata.MapAttributeHwErrorType[accelschema.ErrorSRAMECCCorrected], xid.NeuronSRAMECCCorrected, "corrected SRAM ECC"},
	eccSRAMUncorrected: {"sram_ecc_uncorrected", accelschema.ErrorSRAMECCUncorrected, metadata.MapAttributeHwErrorType[accelschema.ErrorSRAMECCUncorrected], xid.NeuronSRAMECCUncorrected, "uncorrected SRAM ECC"},
}

// statusOrder and errorOrder are the emission orders of the enums.
var (
	statusOrder = []metadata.AttributeExecutionStatus{
		metadata.AttributeExecutionStatusCompleted,
		metadata.AttributeExecutionStatusCompletedWithErr,
		metadata.AttributeExecutionStatusCompletedWithNumErr,
		metadata.AttributeExecutionStatusTimedOut,
		metadata.AttributeExecutionStatusIncorrectInput,
		metadata.AttributeExecutionStatusFailedToQueue,
	}
	errorOrder = []metadata.AttributeExecutionErrorType{
		metadata.AttributeExecutionErrorTypeGeneric,
		metadata.AttributeExecutionErrorTypeNumerical,
		metadata.AttributeExecutionErrorTypeTransient,
		metadata.AttributeExecutionErrorTypeModel,
		metadata.AttributeExecutionErrorTypeRuntime,
		metadata.AttributeExecutionErrorTypeHardware,
	}
)

// hwStates lists every hw.state so hw.status can emit 1 for the current one
// and 0 for the others.
var hwStates = []string{accelschema.HWStateOK, accelschema.HWStateDegraded, accelschema.HWStateFailed, accelschema.HWStatePredictedFailure}

// memoryCategories are the categories of neuroncore_memory_usage in the
// order neuron-monitor documents them; others that a newer release adds pass
// through.
var memoryCategories = []string{"constants", "model_code", "model_shared_scratchpad", "runtime_memory", "tensors"}

// latencyPercentiles in the order neuron-monitor documents them.
var latencyPercentiles = []string{"p0", "p1", "p25", "p50", "p75", "p99", "p100"}
