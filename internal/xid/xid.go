package xid

import (
	"fmt"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

// Classification is what a health signal means and what to do about it.
type Classification struct {
	// Code is the XID, or 0 for signals that are not XIDs.
	Code        int
	Mnemonic    string
	Description string
	// FailureMode is one of accelschema.EnumFailureMode.
	FailureMode string
	// State is the hw.state the signal puts the device in.
	State string
	// Action is one of accelschema.EnumAction.
	Action string
	// Known is false for XIDs that are not in the catalogue.
	Known bool
}

// Lookup classifies an XID. Codes missing from the catalogue are reported as
// degraded with contact_support: an unknown XID on a production GPU deserves a
// look, not silence.
func Lookup(code int) Classification {
	if c, ok := catalogue[code]; ok {
		c.Code = code
		c.Known = true
		return c
	}
	return Classification{
		Code:        code,
		Mnemonic:    fmt.Sprintf("XID %d", code),
		Description: "XID not in the catalogue; see NVIDIA's Xid documentation for this driver release",
		FailureMode: accelschema.FailureModeHardware,
		State:       accelschema.HWStateDegraded,
		Action:      accelschema.ActionContactSupport,
	}
}

// Condition is a health signal that is not an XID.
type Condition int

const (
	ECCUncorrected Condition = iota + 1
	RowRemapPending
	RowRemapFailed
	RetiredPagesPending
	DeviceLost
	MPSDaemonDown
	NeuronMemECCCorrected
	NeuronMemECCUncorrected
	NeuronSRAMECCCorrected
	NeuronSRAMECCUncorrected
	// Kernel-log signals (internal/kernellog).
	NVSwitchFatal
	NVSwitchNonFatal
	PCIeAERFatal
	PCIeAERNonFatal
	PCIeAERCorrected
	NeuronCoreUncorrected
	NeuronDMAError
	NeuronHWErrorOther
	// KernelLogUnknown is a kernel line with an accelerator driver's or the
	// PCIe error reporting's marker in a form not known yet: never lost, it
	// asks a person to look.
	KernelLogUnknown
)

// LastCondition is the highest Condition, for tables that cover them all.
const LastCondition = KernelLogUnknown

// ForNeuronKernelError classifies the error type of a Neuron driver's
// NEURON_HW_ERR= line (SRAM_UNCORRECTABLE_ERROR, …). A type this table does
// not name is NeuronHWErrorOther: the driver prints the line only for
// hardware errors, so it is still a failed device.
func ForNeuronKernelError(errorType string) (Condition, Classification) {
	c := NeuronHWErrorOther
	switch errorType {
	case "SRAM_UNCORRECTABLE_ERROR":
		c = NeuronSRAMECCUncorrected
	case "HBM_UNCORRECTABLE_ERROR":
		c = NeuronMemECCUncorrected
	case "NC_UNCORRECTABLE_ERROR":
		c = NeuronCoreUncorrected
	case "DMA_ERROR":
		c = NeuronDMAError
	}
	return c, ForCondition(c)
}

// ForCondition classifies a non-XID signal.
func ForCondition(c Condition) Classification {
	if cl, ok := conditions[c]; ok {
		cl.Known = true
		return cl
	}
	return Classification{FailureMode: accelschema.FailureModeNone, State: accelschema.HWStateOK, Action: accelschema.ActionNone}
}

// RecoveryAction maps NVML's nvmlDeviceGetGpuRecoveryAction values (also the
// payload of XID 154), which the driver itself computes and which therefore
// override the catalogue's default for the XIDs that preceded it.
func RecoveryAction(nvmlAction int) Classification {
	c := Lookup(154)
	switch nvmlAction {
	case 0: // NVML_GPU_RECOVERY_ACTION_NONE
		c.State, c.Action = accelschema.HWStateOK, accelschema.ActionNone
	case 1: // NVML_GPU_RECOVERY_ACTION_GPU_RESET
		c.State, c.Action = accelschema.HWStateFailed, accelschema.ActionResetGPU
	case 2: // NVML_GPU_RECOVERY_ACTION_NODE_REBOOT
		c.State, c.Action = accelschema.HWStateFailed, accelschema.ActionRebootNode
	case 3: // NVML_GPU_RECOVERY_ACTION_DRAIN_P2P
		c.State, c.Action = accelschema.HWStateDegraded, accelschema.ActionDrainAndReset
	case 4: // NVML_GPU_RECOVERY_ACTION_DRAIN_AND_RESET
		c.State, c.Action = accelschema.HWStateFailed, accelschema.ActionDrainAndReset
	default:
		c.State, c.Action = accelschema.HWStateDegraded, accelschema.ActionContactSupport
	}
	return c
}

var stateRank = map[string]int{
	accelschema.HWStateOK:               0,
	accelschema.HWStateDegraded:         1,
	accelschema.HWStatePredictedFailure: 2,
	accelschema.HWStateFailed:           3,
}

// Worse returns the more severe of two hw.state values.
func Worse(a, b string) string {
	if stateRank[b] > stateRank[a] {
		return b
	}
	return a
}

// Unavailable reports whether a device in this state cannot do useful work,
// which the cost processor books as waste reason "unavailable".
func Unavailable(state string) bool { return state == accelschema.HWStateFailed }
