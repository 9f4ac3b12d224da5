package xid

import (
	"strconv"
	"testing"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

// The XIDs issue #4 requires the catalogue to cover.
var required = []int{13, 31, 32, 43, 45, 48, 61, 62, 63, 64, 68, 69, 74, 79, 92, 94, 95, 109, 119, 120, 140, 143, 154}

func TestCatalogueCoversRequiredXIDs(t *testing.T) {
	for _, code := range required {
		if c := Lookup(code); !c.Known {
			t.Errorf("XID %d is not in the catalogue", code)
		}
	}
}

func TestEveryEntryUsesSchemaVocabulary(t *testing.T) {
	check := func(what string, c Classification) {
		if !accelschema.EnumFailureMode.Has(c.FailureMode) {
			t.Errorf("%s: failure mode %q not in accelschema", what, c.FailureMode)
		}
		if !accelschema.EnumAction.Has(c.Action) {
			t.Errorf("%s: action %q not in accelschema", what, c.Action)
		}
		if !accelschema.EnumHWState.Has(c.State) {
			t.Errorf("%s: state %q not in accelschema", what, c.State)
		}
		if c.Mnemonic == "" || c.Description == "" {
			t.Errorf("%s: needs a mnemonic and a description", what)
		}
	}
	for code := range catalogue {
		check("XID "+strconv.Itoa(code), Lookup(code))
	}
	for cond := ECCUncorrected; cond <= LastCondition; cond++ {
		check("condition "+strconv.Itoa(int(cond)), ForCondition(cond))
	}
}

func TestClassifications(t *testing.T) {
	tests := []struct {
		name   string
		got    Classification
		mode   string
		state  string
		action string
	}{
		{"fallen off the bus", Lookup(79), accelschema.FailureModeDeviceLost, accelschema.HWStateFailed, accelschema.ActionRebootNode},
		{"double-bit ECC", Lookup(48), accelschema.FailureModeMemory, accelschema.HWStateFailed, accelschema.ActionDrainAndReset},
		{"application page fault", Lookup(31), accelschema.FailureModeApplication, accelschema.HWStateOK, accelschema.ActionRestartApp},
		{"contained ECC", Lookup(94), accelschema.FailureModeMemory, accelschema.HWStateDegraded, accelschema.ActionRestartApp},
		{"unknown XID", Lookup(9999), accelschema.FailureModeHardware, accelschema.HWStateDegraded, accelschema.ActionContactSupport},
		{"row remap pending", ForCondition(RowRemapPending), accelschema.FailureModeMemory, accelschema.HWStateDegraded, accelschema.ActionDrainAndReset},
		{"row remap failed", ForCondition(RowRemapFailed), accelschema.FailureModeMemory, accelschema.HWStatePredictedFailure, accelschema.ActionReplaceDevice},
		{"recovery action: reboot", RecoveryAction(2), accelschema.FailureModeNone, accelschema.HWStateFailed, accelschema.ActionRebootNode},
		{"recovery action: none", RecoveryAction(0), accelschema.FailureModeNone, accelschema.HWStateOK, accelschema.ActionNone},
	}
	for _, tt := range tests {
		if tt.got.FailureMode != tt.mode || tt.got.State != tt.state || tt.got.Action != tt.action {
			t.Errorf("%s: got (%s, %s, %s), want (%s, %s, %s)", tt.name,
				tt.got.FailureMode, tt.got.State, tt.got.Action, tt.mode, tt.state, tt.action)
		}
	}
	if Lookup(9999).Known {
		t.Error("an unknown XID must not be reported as known")
	}
}

func TestWorseAndUnavailable(t *testing.T) {
	if got := Worse(accelschema.HWStateDegraded, accelschema.HWStateFailed); got != accelschema.HWStateFailed {
		t.Errorf("Worse(degraded, failed) = %s", got)
	}
	if got := Worse(accelschema.HWStatePredictedFailure, accelschema.HWStateOK); got != accelschema.HWStatePredictedFailure {
		t.Errorf("Worse(predicted_failure, ok) = %s", got)
	}
	if !Unavailable(accelschema.HWStateFailed) || Unavailable(accelschema.HWStateDegraded) {
		t.Error("only failed devices are unavailable")
	}
}

func TestNeuronKernelErrors(t *testing.T) {
	for typ, want := range map[string]Condition{
		"SRAM_UNCORRECTABLE_ERROR": NeuronSRAMECCUncorrected,
		"HBM_UNCORRECTABLE_ERROR":  NeuronMemECCUncorrected,
		"NC_UNCORRECTABLE_ERROR":   NeuronCoreUncorrected,
		"DMA_ERROR":                NeuronDMAError,
		"SOMETHING_NEW":            NeuronHWErrorOther,
	} {
		c, cl := ForNeuronKernelError(typ)
		if c != want || cl.State != accelschema.HWStateFailed || cl.Action != accelschema.ActionReplaceDevice {
			t.Errorf("%s: got %v %+v", typ, c, cl)
		}
	}
}
