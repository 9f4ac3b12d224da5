package mapping

import (
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/xid"
	"github.com/otelcol-accel/otelcol-accel/receiver/neuronreceiver/internal/metadata"
)

// KernelHWError is a Neuron driver NEURON_HW_ERR line from the kernel log.
type KernelHWError struct {
	Time time.Time
	// ErrorType is what follows NEURON_HW_ERR= (SRAM_UNCORRECTABLE_ERROR).
	ErrorType string
	// Device is nd-id, -1 when the line names none; Core is nc-id or -1.
	Device, Core int
	// Action is the driver's action= (TERMINATE_INSTANCE), as printed.
	Action string
	Line   string
	// PCIe, when set, makes this a PCIe AER error on a Neuron device's
	// link (or the port above it) instead of a NEURON_HW_ERR line: its
	// condition and what the kernel said of it.
	PCIe *PCIeError
}

// PCIeError is a PCIe AER error the kernel reported for a Neuron device.
type PCIeError struct {
	Condition xid.Condition
	// Where names the bus and, when a port reported it, the port.
	Where, Text string
}

// KernelEvent turns a kernel-log hardware error into one health event on
// the device's resource (the host's, when the line names no device), and
// makes the device's hw.state at least what the error implies. Not safe
// for use concurrently with Map.
func (m *Mapper) KernelEvent(e KernelHWError) plog.Logs {
	_, cl := xid.ForNeuronKernelError(e.ErrorType)
	event := accelschema.EventNeuronHWError
	if e.PCIe != nil {
		cl, event = xid.ForCondition(e.PCIe.Condition), accelschema.EventPCIeAER
	}
	ts := pcommon.NewTimestampFromTime(e.Time)
	logs := plog.NewLogs()
	rl := logs.ResourceLogs().AppendEmpty()
	subject := "this host's Neuron devices"
	if e.Device >= 0 && e.Device < 1<<10 {
		m.deviceResource(e.Device).MoveTo(rl.Resource())
		d, ok := m.devices[e.Device]
		if !ok {
			d = newDeviceState(ts)
			m.devices[e.Device] = d
		}
		d.state = xid.Worse(d.state, cl.State)
		subject = deviceID(e.Device)
	} else {
		rb := m.mb.NewResourceBuilder()
		m.common(rb)
		rb.Emit().MoveTo(rl.Resource())
	}
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName(metadata.ScopeName)
	lr := sl.LogRecords().AppendEmpty()
	lr.SetTimestamp(ts)
	lr.SetObservedTimestamp(ts)
	lr.SetEventName(event)
	lr.SetSeverityNumber(plog.SeverityNumberError)
	lr.SetSeverityText("ERROR")
	core := ""
	if e.Core >= 0 {
		core = fmt.Sprintf(" (NeuronCore %d)", e.Core)
	}
	driverAction := ""
	if e.Action != "" {
		driverAction = fmt.Sprintf(" (the driver says %s)", strings.ToLower(e.Action))
	}
	if e.PCIe != nil {
		lr.Body().SetStr(fmt.Sprintf("%s: %s at %s: %s: %s; recommended action: %s",
			subject, cl.Mnemonic, e.PCIe.Where, e.PCIe.Text, cl.Description, cl.Action))
	} else {
		lr.Body().SetStr(fmt.Sprintf("%s%s: the Neuron driver reported %s: %s; recommended action: %s%s",
			subject, core, e.ErrorType, cl.Description, cl.Action, driverAction))
	}
	attrs := lr.Attributes()
	attrs.PutStr(accelschema.AttrEventName, event)
	attrs.PutStr(accelschema.AttrHealthFailureMode, cl.FailureMode)
	attrs.PutStr(accelschema.AttrHealthAction, cl.Action)
	attrs.PutStr(accelschema.AttrHWState, cl.State)
	attrs.PutStr(accelschema.AttrHealthDescription, cl.Description)
	attrs.PutStr(accelschema.AttrHealthSources, "kernel_log")
	attrs.PutStr(accelschema.AttrHealthDetail, e.Line)
	return logs
}
