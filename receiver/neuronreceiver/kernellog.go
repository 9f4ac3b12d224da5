package neuronreceiver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/otelcol-accel/otelcol-accel/internal/kernellog"
	"github.com/otelcol-accel/otelcol-accel/internal/xid"
	"github.com/otelcol-accel/otelcol-accel/receiver/neuronreceiver/internal/mapping"
)

// sourceKernelLog names the kernel log in the component's status.
const sourceKernelLog = "kernel log"

// kernelLog reads the Neuron driver's NEURON_HW_ERR lines and sends each as
// a health event on its device's resource.
type kernelLog struct {
	r          *neuronReceiver
	topology   *kernellog.PCITopology
	cancel     context.CancelFunc
	done       chan struct{}
	closeStore func(context.Context) error
}

func (k *kernelLog) start(ctx context.Context, host component.Host) error {
	cfg := k.r.cfg.Health.KernelLog
	cp, closeStore, err := cfg.OpenCheckpoint(ctx, host, k.r.set.ID)
	if err != nil {
		return err
	}
	k.closeStore = closeStore
	k.topology = cfg.Topology()
	runCtx, cancel := context.WithCancel(context.Background())
	k.cancel, k.done = cancel, make(chan struct{})
	settings := kernellog.Settings{
		Source:     cfg.NewSource(kernellog.Clock{Boot: kernellog.BootTime(time.Now())}),
		Checkpoint: cp,
		Backlog:    cfg.MaxBacklog,
		Handle:     k.handle,
		Problem:    k.problem,
		Skipped:    k.skipper().Line,
		Recovered:  func() { k.r.status.Clear(sourceKernelLog) },
	}
	go func() {
		defer close(k.done)
		if err := kernellog.Run(runCtx, settings); err != nil {
			k.r.set.Logger.Error("kernel log reader stopped", zap.Error(err))
		}
	}()
	return nil
}

func (k *kernelLog) shutdown(ctx context.Context) error {
	k.cancel()
	var err error
	select {
	case <-k.done:
	case <-ctx.Done():
		err = fmt.Errorf("kernel log reader still stopping: %w", ctx.Err())
	}
	return errors.Join(err, k.closeStore(ctx))
}

func (k *kernelLog) problem(p kernellog.Problem) {
	if p.Missing {
		if k.r.status.Fail(sourceKernelLog, fmt.Errorf("kernel log: %w", p.Err)) {
			k.r.set.Logger.Error("kernel log: " + p.Err.Error())
		}
		return
	}
	k.r.log.Warn("kernellog/"+p.Key, "kernel log: "+p.Err.Error())
}

// skipper counts a line that made no health event in the receiver's
// telemetry and says where it was and why (rate-limited per reason).
func (k *kernelLog) skipper() kernellog.Skipper {
	return kernellog.Skipper{
		Count: func(reason string) {
			k.r.tel.ReceiverNeuronKernelLogLinesSkipped.Add(context.Background(), 1, metric.WithAttributes(attribute.String("reason", reason)))
		},
		Log: func(key, msg string) { k.r.log.Info(key, msg) },
	}
}

func (k *kernelLog) handle(ev kernellog.Event) {
	at := ev.Time
	if at.IsZero() {
		at = k.r.clock()
	}
	e := mapping.KernelHWError{Time: at, ErrorType: ev.NeuronError, Device: ev.Device, Core: ev.Core, Action: ev.Action, Line: strings.Join(ev.Lines, "\n")}
	switch ev.Kind {
	case kernellog.KindNeuronHWError:
	case kernellog.KindAER:
		if !k.neuronLink(ev) {
			k.skipper().Event(ev, kernellog.SkipNotAccelerator)
			return
		}
		c := xid.PCIeAERCorrected
		switch ev.Severity {
		case kernellog.AERFatal:
			c = xid.PCIeAERFatal
		case kernellog.AERNonFatal:
			c = xid.PCIeAERNonFatal
		}
		where := "PCI " + ev.Bus
		if ev.Port != "" {
			where += " (reported by the port at " + ev.Port + ")"
		}
		// The Neuron device's index is not in the kernel's PCIe lines: the
		// event is the host's Neuron devices'.
		e.Device, e.Core = -1, -1
		e.PCIe = &mapping.PCIeError{Condition: c, Where: where, Text: ev.Text}
	default:
		k.skipper().Event(ev, kernellog.SkipOtherReceiver) // NVIDIA's lines are the dcgm receiver's
		return
	}
	k.r.mapMu.Lock()
	logs := k.r.mapper.KernelEvent(e)
	k.r.mapMu.Unlock()
	k.r.mu.Lock()
	next := k.r.logs
	k.r.mu.Unlock()
	if next == nil {
		return
	}
	ctx := k.r.obsLogs.StartLogsOp(context.Background())
	err := next.ConsumeLogs(ctx, logs)
	k.r.obsLogs.EndLogsOp(ctx, "kernel_log", logs.LogRecordCount(), err)
	if err != nil {
		k.r.log.Error("consume/kernel-logs", "neuron receiver: the logs pipeline refused a kernel-log health event", zap.Error(err))
	}
}

// neuronLink reports whether a PCIe error concerns a Neuron device: one the
// neuron driver printed or has bound, or a port a bound one sits behind.
func (k *kernelLog) neuronLink(ev kernellog.Event) bool {
	if strings.HasPrefix(ev.Lines[0], "neuron ") {
		return true
	}
	for _, bus := range k.topology.Bound("neuron") {
		if bus == ev.Bus || kernellog.SameSlot(bus, ev.Bus) || k.topology.Behind(bus, ev.Bus) {
			return true
		}
	}
	return false
}
