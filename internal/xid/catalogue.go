package xid

import s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"

// catalogue: XID → classification. Each row's action is the NVIDIA Xid
// catalogue's immediate-action bucket translated to our vocabulary (doc.go);
// State is failed for the XIDs AWS's node monitoring agent treats as fatal,
// ok for application faults (the device itself is fine) and degraded in
// between.
var catalogue = map[int]Classification{
	8:   {Mnemonic: "GPU stopped processing", Description: "the GPU stopped processing (watchdog timeout), usually an application hang", FailureMode: s.FailureModeApplication, State: s.HWStateOK, Action: s.ActionRestartApp},
	13:  {Mnemonic: "Graphics Engine Exception", Description: "graphics/compute engine exception, usually an out-of-range access in the application", FailureMode: s.FailureModeApplication, State: s.HWStateOK, Action: s.ActionRestartApp},
	31:  {Mnemonic: "GPU memory page fault", Description: "MMU fault: the application touched an invalid address", FailureMode: s.FailureModeApplication, State: s.HWStateOK, Action: s.ActionRestartApp},
	32:  {Mnemonic: "Invalid or corrupted push buffer stream", Description: "the driver received a corrupted command stream (application or CUDA bug, or PCIe corruption)", FailureMode: s.FailureModeApplication, State: s.HWStateOK, Action: s.ActionRestartApp},
	43:  {Mnemonic: "GPU stopped processing", Description: "a channel was reset after a fault; follows another XID", FailureMode: s.FailureModeApplication, State: s.HWStateOK, Action: s.ActionMonitor},
	45:  {Mnemonic: "Preemptive cleanup", Description: "the driver cleaned up channels after earlier errors or a killed process", FailureMode: s.FailureModeApplication, State: s.HWStateOK, Action: s.ActionMonitor},
	46:  {Mnemonic: "GPU stopped processing", Description: "the GPU stopped processing and must be reset", FailureMode: s.FailureModeHardware, State: s.HWStateFailed, Action: s.ActionResetGPU},
	48:  {Mnemonic: "Double-bit ECC error", Description: "uncorrectable (double-bit) ECC error in device memory; contexts on the GPU are lost and the row is remapped at the next reset", FailureMode: s.FailureModeMemory, State: s.HWStateFailed, Action: s.ActionDrainAndReset},
	54:  {Mnemonic: "Auxiliary power not connected", Description: "auxiliary power is not connected to the GPU", FailureMode: s.FailureModePower, State: s.HWStateFailed, Action: s.ActionCheckHardware},
	61:  {Mnemonic: "Internal micro-controller breakpoint/warning", Description: "the GPU's internal micro-controller hit a breakpoint or warning", FailureMode: s.FailureModeHardware, State: s.HWStateDegraded, Action: s.ActionResetGPU},
	62:  {Mnemonic: "Internal micro-controller halt", Description: "the GPU's internal micro-controller halted", FailureMode: s.FailureModeHardware, State: s.HWStateFailed, Action: s.ActionResetGPU},
	63:  {Mnemonic: "Row remap / page retirement recorded", Description: "a row remap or page retirement was recorded after an ECC error; takes effect at the next reset (replace if it keeps recurring)", FailureMode: s.FailureModeMemory, State: s.HWStateDegraded, Action: s.ActionMonitor},
	64:  {Mnemonic: "Row remap / page retirement failure", Description: "the GPU could not record a row remap or page retirement; reset, and replace the GPU if it recurs", FailureMode: s.FailureModeMemory, State: s.HWStatePredictedFailure, Action: s.ActionResetGPU},
	68:  {Mnemonic: "NVDEC0 exception", Description: "video decoder exception, usually the application's stream", FailureMode: s.FailureModeApplication, State: s.HWStateOK, Action: s.ActionRestartApp},
	69:  {Mnemonic: "Graphics engine class error", Description: "graphics engine class error raised by the application's work", FailureMode: s.FailureModeApplication, State: s.HWStateOK, Action: s.ActionRestartApp},
	74:  {Mnemonic: "NVLink error", Description: "NVLink error; traffic over the failing link is lost", FailureMode: s.FailureModeInterconnect, State: s.HWStateFailed, Action: s.ActionDrainAndReset},
	79:  {Mnemonic: "GPU has fallen off the bus", Description: "the GPU is no longer reachable over PCIe", FailureMode: s.FailureModeDeviceLost, State: s.HWStateFailed, Action: s.ActionRebootNode},
	92:  {Mnemonic: "High single-bit ECC error rate", Description: "corrected ECC errors at a high rate; a predictor of uncorrected errors", FailureMode: s.FailureModeMemory, State: s.HWStateDegraded, Action: s.ActionMonitor},
	94:  {Mnemonic: "Contained ECC error", Description: "an uncorrectable ECC error was contained to the applications that used the memory; other work continues", FailureMode: s.FailureModeMemory, State: s.HWStateDegraded, Action: s.ActionRestartApp},
	95:  {Mnemonic: "Uncontained ECC error", Description: "an uncorrectable ECC error could not be contained; all work on the GPU is affected", FailureMode: s.FailureModeMemory, State: s.HWStateFailed, Action: s.ActionResetGPU},
	109: {Mnemonic: "Context switch timeout", Description: "a context switch timed out", FailureMode: s.FailureModeDriver, State: s.HWStateFailed, Action: s.ActionResetGPU},
	110: {Mnemonic: "Security fault", Description: "the GPU reported a security fault", FailureMode: s.FailureModeHardware, State: s.HWStateFailed, Action: s.ActionResetGPU},
	119: {Mnemonic: "GSP RPC timeout", Description: "the GPU System Processor did not answer the driver in time", FailureMode: s.FailureModeDriver, State: s.HWStateFailed, Action: s.ActionResetGPU},
	120: {Mnemonic: "GSP error", Description: "the GPU System Processor reported an error", FailureMode: s.FailureModeDriver, State: s.HWStateFailed, Action: s.ActionResetGPU},
	136: {Mnemonic: "Link training failed", Description: "PCIe or NVLink link training failed", FailureMode: s.FailureModeInterconnect, State: s.HWStateFailed, Action: s.ActionResetGPU},
	137: {Mnemonic: "NVLink privilege error", Description: "an application made a privileged NVLink access", FailureMode: s.FailureModeApplication, State: s.HWStateOK, Action: s.ActionMonitor},
	140: {Mnemonic: "ECC unrecovered error", Description: "an ECC error could not be recovered", FailureMode: s.FailureModeMemory, State: s.HWStateFailed, Action: s.ActionResetGPU},
	142: {Mnemonic: "NVENC3 error", Description: "video encoder 3 error", FailureMode: s.FailureModeHardware, State: s.HWStateFailed, Action: s.ActionContactSupport},
	143: {Mnemonic: "GPU initialization error", Description: "the GPU failed to initialize", FailureMode: s.FailureModeHardware, State: s.HWStateFailed, Action: s.ActionResetGPU},
	151: {Mnemonic: "Key rotation error", Description: "confidential-computing key rotation failed; the VM must be restarted", FailureMode: s.FailureModeDriver, State: s.HWStateFailed, Action: s.ActionRebootNode},
	154: {Mnemonic: "GPU recovery action changed", Description: "the driver changed the GPU's recovery action; the action it names is authoritative", FailureMode: s.FailureModeNone, State: s.HWStateDegraded, Action: s.ActionMonitor},
	155: {Mnemonic: "NVLink software-defined error", Description: "NVLink reported a software-defined error", FailureMode: s.FailureModeInterconnect, State: s.HWStateFailed, Action: s.ActionResetGPU},
	156: {Mnemonic: "Resource retirement event", Description: "a hardware resource was retired", FailureMode: s.FailureModeHardware, State: s.HWStateFailed, Action: s.ActionResetGPU},
	157: {Mnemonic: "Resource retirement failure", Description: "a resource could not be retired: the repair capacity is exhausted", FailureMode: s.FailureModeHardware, State: s.HWStatePredictedFailure, Action: s.ActionReplaceDevice},
	158: {Mnemonic: "GPU fatal timeout", Description: "the GPU hit a fatal timeout", FailureMode: s.FailureModeHardware, State: s.HWStateFailed, Action: s.ActionResetGPU},
}

var conditions = map[Condition]Classification{
	ECCUncorrected:           {Mnemonic: "Uncorrected ECC errors", Description: "the volatile uncorrected (double-bit) ECC count increased", FailureMode: s.FailureModeMemory, State: s.HWStateDegraded, Action: s.ActionDrainAndReset},
	RowRemapPending:          {Mnemonic: "Row remap pending", Description: "a memory row remap waits for the next GPU reset; running work continues", FailureMode: s.FailureModeMemory, State: s.HWStateDegraded, Action: s.ActionDrainAndReset},
	RowRemapFailed:           {Mnemonic: "Row remap failed", Description: "a row remap failed: the GPU has reached its repair limit", FailureMode: s.FailureModeMemory, State: s.HWStatePredictedFailure, Action: s.ActionReplaceDevice},
	RetiredPagesPending:      {Mnemonic: "Page retirement pending", Description: "retired pages take effect at the next reset", FailureMode: s.FailureModeMemory, State: s.HWStateDegraded, Action: s.ActionDrainAndReset},
	DeviceLost:               {Mnemonic: "GPU lost", Description: "the driver reports the GPU as lost (fallen off the bus or unresponsive)", FailureMode: s.FailureModeDeviceLost, State: s.HWStateFailed, Action: s.ActionRebootNode},
	MPSDaemonDown:            {Mnemonic: "MPS control daemon down", Description: "the MPS control daemon does not answer; new MPS clients cannot start", FailureMode: s.FailureModeService, State: s.HWStateDegraded, Action: s.ActionRestartService},
	NeuronMemECCCorrected:    {Mnemonic: "Neuron memory ECC corrected", Description: "corrected ECC errors in Neuron device memory", FailureMode: s.FailureModeMemory, State: s.HWStateOK, Action: s.ActionMonitor},
	NeuronMemECCUncorrected:  {Mnemonic: "Neuron memory ECC uncorrected", Description: "uncorrected ECC errors in Neuron device memory; replace the instance", FailureMode: s.FailureModeMemory, State: s.HWStateFailed, Action: s.ActionReplaceDevice},
	NeuronSRAMECCCorrected:   {Mnemonic: "Neuron SRAM ECC corrected", Description: "corrected ECC errors in Neuron on-chip SRAM", FailureMode: s.FailureModeHardware, State: s.HWStateOK, Action: s.ActionMonitor},
	NeuronSRAMECCUncorrected: {Mnemonic: "Neuron SRAM ECC uncorrected", Description: "uncorrected ECC errors in Neuron on-chip SRAM; replace the instance", FailureMode: s.FailureModeHardware, State: s.HWStateFailed, Action: s.ActionReplaceDevice},

	// From the kernel log. NVSwitch SXids: NVIDIA's fabric manager guide
	// says a fatal SXid leaves the fabric unusable until the baseboard (the
	// node) is reset; a non-fatal one is corrected or retried by the switch.
	NVSwitchFatal:    {Mnemonic: "NVSwitch fatal error", Description: "an NVSwitch reported a fatal SXid: NVLink traffic through it is lost until the node is reset", FailureMode: s.FailureModeInterconnect, State: s.HWStateFailed, Action: s.ActionRebootNode},
	NVSwitchNonFatal: {Mnemonic: "NVSwitch non-fatal error", Description: "an NVSwitch reported a non-fatal SXid; traffic continues", FailureMode: s.FailureModeInterconnect, State: s.HWStateDegraded, Action: s.ActionMonitor},
	// PCIe AER on a GPU's bus: a fatal uncorrected error resets the link
	// and the GPU usually falls off the bus (XID 79 follows); a non-fatal
	// one lost a transaction; a corrected one was retried by the link.
	PCIeAERFatal:     {Mnemonic: "PCIe fatal error", Description: "a fatal uncorrected PCIe error on the device's link, or on the port above it, or a device that could not recover from one; the link is reset and the device may be lost", FailureMode: s.FailureModeInterconnect, State: s.HWStateFailed, Action: s.ActionRebootNode},
	PCIeAERNonFatal:  {Mnemonic: "PCIe uncorrected error", Description: "a non-fatal uncorrected PCIe error on the device's link: a transaction was lost and the link kept working", FailureMode: s.FailureModeInterconnect, State: s.HWStateDegraded, Action: s.ActionMonitor},
	PCIeAERCorrected: {Mnemonic: "PCIe corrected error", Description: "a corrected PCIe error on the GPU's link; frequent ones predict a failing link or riser", FailureMode: s.FailureModeInterconnect, State: s.HWStateOK, Action: s.ActionMonitor},
	// Neuron driver NEURON_HW_ERR lines: the Neuron troubleshooting guide
	// pairs each with action=TERMINATE_INSTANCE.
	NeuronCoreUncorrected: {Mnemonic: "NeuronCore uncorrected error", Description: "an uncorrectable error in a NeuronCore; replace the instance", FailureMode: s.FailureModeHardware, State: s.HWStateFailed, Action: s.ActionReplaceDevice},
	NeuronDMAError:        {Mnemonic: "Neuron DMA error", Description: "a Neuron DMA engine reported a hardware error; replace the instance", FailureMode: s.FailureModeHardware, State: s.HWStateFailed, Action: s.ActionReplaceDevice},
	// A line of a form not known yet: degraded until a person has looked,
	// never acted on automatically.
	KernelLogUnknown:   {Mnemonic: "unrecognised driver message", Description: "the kernel log has a driver or PCIe message of a form not known yet; its raw lines are in the event", FailureMode: s.FailureModeUnknown, State: s.HWStateDegraded, Action: s.ActionInvestigate},
	NeuronHWErrorOther: {Mnemonic: "Neuron hardware error", Description: "the Neuron driver reported a hardware error of a type not in the catalogue; see its action", FailureMode: s.FailureModeHardware, State: s.HWStateFailed, Action: s.ActionReplaceDevice},
}
