package neuronreceiver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.uber.org/zap"

	"github.com/otelcol-accel/otelcol-accel/internal/kernellog"
	"github.com/otelcol-accel/otelcol-accel/receiver/neuronreceiver/internal/mapping"
)

// sourceKernelLog names the kernel log in the component's status.
const sourceKernelLog = "kernel log"

// kernelLog reads the Neuron driver's NEURON_HW_ERR lines and sends each as
// a health event on its device's resource.
type kernelLog struct {
	r          *neuronReceiver
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
	runCtx, cancel := context.WithCancel(context.Background())
	k.cancel, k.done = cancel, make(chan struct{})
	settings := kernellog.Settings{
		Source:     cfg.NewSource(kernellog.Clock{Boot: kernellog.BootTime(time.Now())}),
		Checkpoint: cp,
		Backlog:    cfg.MaxBacklog,
		Handle:     k.handle,
		Problem:    k.problem,
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

func (k *kernelLog) handle(ev kernellog.Event) {
	if ev.Kind != kernellog.KindNeuronHWError {
		return // NVIDIA lines are the dcgm receiver's
	}
	at := ev.Time
	if at.IsZero() {
		at = k.r.clock()
	}
	k.r.mapMu.Lock()
	logs := k.r.mapper.KernelEvent(mapping.KernelHWError{
		Time: at, ErrorType: ev.NeuronError, Device: ev.Device, Core: ev.Core, Action: ev.Action, Line: strings.Join(ev.Lines, "\n"),
	})
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
