package dcgmreceiver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.uber.org/zap"

	"github.com/otelcol-accel/otelcol-accel/internal/kernellog"
	"github.com/otelcol-accel/otelcol-accel/internal/xid"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/health"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/model"
)

// sourceKernelLog names the kernel log in the component's status.
const sourceKernelLog = "kernel log"

// kernelLog is the receiver's reader of the NVIDIA driver's kernel log
// lines: it maps each line's bus id to the GPU NVML or dcgm-exporter knows
// at that bus (or that the driver's own "GPU at" line named), and hands the
// events to the health tracker, which merges them with the other source's.
type kernelLog struct {
	r      *dcgmReceiver
	cfg    kernellog.Config
	window time.Duration

	mu sync.Mutex
	// byBus are the physical GPUs of the last scrape by canonical bus id;
	// uuids are the "GPU at" lines' UUIDs by bus id.
	byBus map[string]model.Identity
	uuids map[string]string

	cancel     context.CancelFunc
	done       chan struct{}
	closeStore func(context.Context) error
	// run starts the reader; it waits for the first scrape (learn), so
	// that the lines already in the log find the GPUs at their bus ids.
	run     func()
	runOnce sync.Once
}

func newKernelLog(r *dcgmReceiver) *kernelLog {
	cfg := r.cfg.Health.KernelLog
	window := cfg.DedupWindow
	if r.cfg.Source == SourceDCGMExporter {
		// dcgm-exporter's XID is seen at the next scrape, up to an
		// interval after the kernel wrote it.
		window += r.cfg.CollectionInterval
	}
	return &kernelLog{r: r, cfg: cfg, window: window, byBus: map[string]model.Identity{}, uuids: map[string]string{}}
}

func (k *kernelLog) start(ctx context.Context, host component.Host) error {
	cp, closeStore, err := k.cfg.OpenCheckpoint(ctx, host, k.r.set.ID)
	if err != nil {
		return err
	}
	k.closeStore = closeStore
	runCtx, cancel := context.WithCancel(context.Background())
	k.cancel, k.done = cancel, make(chan struct{})
	clock := kernellog.Clock{Boot: kernellog.BootTime(time.Now())}
	settings := kernellog.Settings{
		Source:     k.cfg.NewSource(clock),
		Checkpoint: cp,
		Backlog:    k.cfg.MaxBacklog,
		Handle:     k.handle,
		Problem:    k.problem,
		Recovered:  func() { k.r.status.Clear(sourceKernelLog) },
	}
	k.run = func() {
		go func() {
			defer close(k.done)
			if err := kernellog.Run(runCtx, settings); err != nil {
				k.r.logger.Error("kernel log reader stopped", zap.Error(err))
			}
		}()
		go k.flushLoop(runCtx)
	}
	return nil
}

func (k *kernelLog) shutdown(ctx context.Context) error {
	k.runOnce.Do(func() { close(k.done) }) // never started: nothing to wait for
	k.cancel()
	var err error
	select {
	case <-k.done:
	case <-ctx.Done():
		err = fmt.Errorf("kernel log reader still stopping: %w", ctx.Err())
	}
	return errors.Join(err, k.closeStore(ctx))
}

// flushLoop sends the XID events held for de-duplication once their window
// has passed, between scrapes too.
func (k *kernelLog) flushLoop(ctx context.Context) {
	tick := time.NewTicker(max(k.window/4, 100*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			k.r.publish(ctx, k.r.health.Due(k.r.world.now()))
		}
	}
}

func (k *kernelLog) problem(p kernellog.Problem) {
	if p.Missing {
		if k.r.status.Fail(sourceKernelLog, fmt.Errorf("kernel log: %w", p.Err)) {
			k.r.logger.Error("kernel log: " + p.Err.Error())
		}
		return
	}
	k.r.warn.Warn("kernellog/"+p.Key, "kernel log: "+p.Err.Error())
}

// learn keeps the bus ids of the GPUs a scrape saw, and starts the reader
// after the first.
func (k *kernelLog) learn(snap *model.Snapshot) {
	defer k.runOnce.Do(func() {
		if k.run != nil {
			k.run()
		}
	})
	k.mu.Lock()
	defer k.mu.Unlock()
	for i := range snap.Samples {
		id := snap.Samples[i].Identity
		if id.IsMIG() || id.PCIBusID == "" {
			continue
		}
		if bus, ok := kernellog.CanonicalBus(id.PCIBusID); ok {
			k.byBus[bus] = id
		}
	}
}

// identity is the GPU at bus: the one the sources know, else one named by
// the driver's UUID, else a resource naming only the bus id (and the node).
func (k *kernelLog) identity(bus string) (model.Identity, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if id, ok := k.byBus[bus]; ok {
		return id, true
	}
	id := model.Identity{PCIBusID: bus, HostName: k.r.hostName, Index: -1, GPUInstanceID: -1, ComputeInstanceID: -1, PartitionType: "none", Share: 1}
	if uuid, ok := k.uuids[bus]; ok {
		id.HWID = uuid
		return id, true
	}
	return id, false
}

func (k *kernelLog) handle(ev kernellog.Event) {
	detail := strings.Join(ev.Lines, "\n")
	at := ev.Time
	if at.IsZero() {
		at = k.r.world.now()
	}
	switch ev.Kind {
	case kernellog.KindGPUAt:
		k.mu.Lock()
		if len(k.uuids) < 1024 {
			k.uuids[ev.Bus] = ev.UUID
		}
		k.mu.Unlock()
		return
	case kernellog.KindXID:
		id, _ := k.identity(ev.Bus)
		e := model.Event{Device: id, Time: at, Kind: model.EventXID, Code: ev.Code, Source: health.SourceKernelLog, PID: ev.PID, Process: ev.Process, Detail: detail}
		if ev.Code == 154 {
			if action, ok := kernellog.RecoveryAction(ev.Text); ok {
				e.Kind, e.Code = model.EventRecoveryAction, action
			}
		}
		k.r.publish(context.Background(), k.r.health.ObserveEvent(e))
	case kernellog.KindFallenOffBus:
		id, _ := k.identity(ev.Bus)
		k.r.publish(context.Background(), k.r.health.ObserveEvent(model.Event{Device: id, Time: at, Kind: model.EventDeviceLost, Source: health.SourceKernelLog, Detail: detail}))
	case kernellog.KindSXID:
		// An NVSwitch is no GPU: its event names the switch's bus.
		c := xid.NVSwitchNonFatal
		if ev.Fatal {
			c = xid.NVSwitchFatal
		}
		id := model.Identity{PCIBusID: ev.Bus, HostName: k.r.hostName, Index: -1}
		rec := k.r.health.ObserveCondition(id, c, at, detail)
		rec.XID = 0
		rec.Message = fmt.Sprintf("NVSwitch SXid %d at PCI %s: %s. Recommended action: %s.", ev.Code, ev.Bus, ev.Text, rec.Class.Action)
		k.r.publish(context.Background(), []health.Record{rec})
	case kernellog.KindAER:
		id, known := k.identity(ev.Bus)
		if !known && !strings.HasPrefix(ev.Lines[0], "nvidia ") {
			return // a PCIe error on a device that is not a GPU
		}
		c := xid.PCIeAERCorrected
		switch ev.Severity {
		case kernellog.AERFatal:
			c = xid.PCIeAERFatal
		case kernellog.AERNonFatal:
			c = xid.PCIeAERNonFatal
		}
		k.r.publish(context.Background(), []health.Record{k.r.health.ObserveCondition(id, c, at, detail)})
	}
}
