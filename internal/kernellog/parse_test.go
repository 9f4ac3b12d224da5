package kernellog

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseForms(t *testing.T) {
	tests := []struct {
		name string
		line string
		want Message
	}{
		{"xid with pid and name", "NVRM: Xid (PCI:0000:3b:00): 79, pid=3341, name=python3, GPU has fallen off the bus.",
			Message{Kind: KindXID, Bus: "0000:3b:00.0", Code: 79, PID: 3341, Process: "python3", Text: "GPU has fallen off the bus."}},
		{"xid with unknown pid", "NVRM: Xid (PCI:0000:cb:00): 13, pid='<unknown>', name=<unknown>, Graphics Exception: ESR 0x53e730=0x102000e",
			Message{Kind: KindXID, Bus: "0000:cb:00.0", Code: 13, Text: "Graphics Exception: ESR 0x53e730=0x102000e"}},
		{"xid without pid (pre-r470)", "NVRM: Xid (PCI:0000:01:00): 32, Channel ID 00000005 intr 00008000",
			Message{Kind: KindXID, Bus: "0000:01:00.0", Code: 32, Text: "Channel ID 00000005 intr 00008000"}},
		{"xid without PCI: prefix", "NVRM: Xid (0000:01:00): 13, 0005 00000000 0000502d",
			Message{Kind: KindXID, Bus: "0000:01:00.0", Code: 13, Text: "0005 00000000 0000502d"}},
		{"xid with bus and device only", "NVRM: Xid (0009:00): 53, CMDre 00000000 00000080",
			Message{Kind: KindXID, Bus: "0000:09:00.0", Code: 53, Text: "CMDre 00000000 00000080"}},
		{"xid with channel suffix", "NVRM: Xid (PCI:0000:1b:00): 31, pid=2201, name=pt_main_thread, Ch 00000008, intr 10000000. MMU Fault",
			Message{Kind: KindXID, Bus: "0000:1b:00.0", Code: 31, PID: 2201, Process: "pt_main_thread", Text: "Ch 00000008, intr 10000000. MMU Fault"}},
		{"xid code only", "NVRM: Xid (PCI:0000:c1:00): 154, GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)",
			Message{Kind: KindXID, Bus: "0000:c1:00.0", Code: 154, Text: "GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)"}},
		{"gpu at", "NVRM: GPU at PCI:0000:3b:00: GPU-8f3c2a1e-4b5d-6e7f-8091-a2b3c4d5e6f7",
			Message{Kind: KindGPUAt, Bus: "0000:3b:00.0", UUID: "GPU-8f3c2a1e-4b5d-6e7f-8091-a2b3c4d5e6f7"}},
		{"fallen off (old form)", "NVRM: GPU at 0000:01:00.0 has fallen off the bus.",
			Message{Kind: KindFallenOffBus, Bus: "0000:01:00.0", Text: "GPU at 0000:01:00.0 has fallen off the bus."}},
		{"fallen off (current form)", "NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.",
			Message{Kind: KindFallenOffBus, Bus: "0000:3b:00.0", Text: "GPU 0000:3b:00.0: GPU has fallen off the bus."}},
		{"sxid non-fatal", "nvidia-nvswitch2: SXid (PCI:0000:86:00.0): 12028, Non-fatal, Link 38 egress non-posted PRIV error (First)",
			Message{Kind: KindSXID, Bus: "0000:86:00.0", Code: 12028, Text: "Non-fatal, Link 38 egress non-posted PRIV error (First)"}},
		{"sxid fatal", "nvidia-nvswitch0: SXid (PCI:0000:84:00.0): 24007, Fatal, Link 12 sourcetrack TCEN0 crumbstore ECC DBE Error",
			Message{Kind: KindSXID, Bus: "0000:84:00.0", Code: 24007, Fatal: true, Text: "Fatal, Link 12 sourcetrack TCEN0 crumbstore ECC DBE Error"}},
		{"aer fatal", "nvidia 0000:3b:00.0: AER: PCIe Bus Error: severity=Uncorrected (Fatal), type=Inaccessible, (Unregistered Agent ID)",
			Message{Kind: KindAER, Bus: "0000:3b:00.0", Severity: AERFatal, Fatal: true, Text: "severity=Uncorrected (Fatal), type=Inaccessible, (Unregistered Agent ID)", aer: aerBusError}},
		{"aer non-fatal", "nvidia 0000:3b:00.0: AER: PCIe Bus Error: severity=Uncorrected (Non-Fatal), type=Transaction Layer, (Requester ID)",
			Message{Kind: KindAER, Bus: "0000:3b:00.0", Severity: AERNonFatal, Text: "severity=Uncorrected (Non-Fatal), type=Transaction Layer, (Requester ID)", aer: aerBusError}},
		{"aer corrected", "nvidia 0000:cb:00.0: AER: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)",
			Message{Kind: KindAER, Bus: "0000:cb:00.0", Severity: AERCorrected, Text: "severity=Corrected, type=Physical Layer, (Receiver ID)", aer: aerBusError}},
		{"neuron documented form", "NEURON_HW_ERR=SRAM_UNCORRECTABLE_ERROR instance-id=i-0592464924bd45322 hostname=ip-172-31-61-252 nd-id=0 nc-id=0 serial-num=19fcda00f5ff6eb9 action=TERMINATE_INSTANCE",
			Message{Kind: KindNeuronHWError, NeuronError: "SRAM_UNCORRECTABLE_ERROR", Device: 0, Core: 0, Action: "TERMINATE_INSTANCE",
				Text: "NEURON_HW_ERR=SRAM_UNCORRECTABLE_ERROR instance-id=i-0592464924bd45322 hostname=ip-172-31-61-252 nd-id=0 nc-id=0 serial-num=19fcda00f5ff6eb9 action=TERMINATE_INSTANCE"}},
		{"neuron short form", "neuron0: NEURON_HW_ERR=DMA_ERROR device=0",
			Message{Kind: KindNeuronHWError, NeuronError: "DMA_ERROR", Device: 0, Core: -1, Text: "NEURON_HW_ERR=DMA_ERROR device=0"}},
		{"neuron without device", "kernel: NEURON_HW_ERR=HBM_UNCORRECTABLE_ERROR affecting neuron devices",
			Message{Kind: KindNeuronHWError, NeuronError: "HBM_UNCORRECTABLE_ERROR", Device: -1, Core: -1, Text: "NEURON_HW_ERR=HBM_UNCORRECTABLE_ERROR affecting neuron devices"}},
		{"unrelated", "usb 1-1: new high-speed USB device number 2 using xhci_hcd", Message{Kind: KindNone}},
		{"aer on a port without an error", "pcieport 0000:3a:00.0: AER: enabled with IRQ 120", Message{Kind: kindAERDetail, Bus: "0000:3a:00.0", Text: "enabled with IRQ 120"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.line)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestParseMalformed(t *testing.T) {
	for _, line := range []string{
		"NVRM: Xid (PCI:0000:3b:00",         // truncated inside the device
		"NVRM: Xid (PCI:0000:3b:00): ",      // truncated before the code
		"NVRM: Xid (PCI:zz:3b:00): 79, x",   // not a bus id
		"NVRM: Xid (PCI:0000:3b:00) 79, x",  // no colon
		"nvidia-nvswitch0: SXid (PCI:0000:", // truncated
		"NEURON_HW_ERR= nd-id=0",            // no type
		"nvidia 0000:3b:00.0: AER: PCIe Bus Error: severity=Sideways, type=x",
	} {
		_, err := Parse(line)
		assert.True(t, errors.Is(err, ErrMalformed), "%q: %v", line, err)
	}
}

func TestCanonicalBus(t *testing.T) {
	for in, want := range map[string]string{
		"00000000:3B:00.0": "0000:3b:00.0", // NVML, dcgm-exporter
		"0000:3b:00":       "0000:3b:00.0", // NVRM
		"0000:3b:00.0":     "0000:3b:00.0", // the kernel
		"0009:00":          "0000:09:00.0", // pre-2013 NVRM
		"0001:c1:1f.7":     "0001:c1:1f.7",
	} {
		got, ok := CanonicalBus(in)
		assert.True(t, ok, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "3b", "0000:3b:00.8", "0000:3b:20.0", "0000:3b:00:00", "x:y:z"} {
		_, ok := CanonicalBus(bad)
		assert.False(t, ok, bad)
	}
}

func TestRecoveryAction(t *testing.T) {
	v, ok := RecoveryAction("GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)")
	assert.True(t, ok)
	assert.Equal(t, 1, v)
	v, ok = RecoveryAction("GPU recovery action changed from 0x1 (GPU Reset Required) to 0x2 (Node Reboot Required)")
	assert.True(t, ok)
	assert.Equal(t, 2, v)
	_, ok = RecoveryAction("GPU recovery action changed")
	assert.False(t, ok)
}
