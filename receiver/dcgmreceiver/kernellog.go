package dcgmreceiver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
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
	// topology places a PCIe error on a port above the GPUs behind it;
	// reported is when each device's kernel-log condition was last
	// reported, so that one fault the kernel prints per function and per
	// port is one event.
	topology *kernellog.PCITopology
	reported map[string]time.Time

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
	return &kernelLog{r: r, cfg: cfg, window: window, byBus: map[string]model.Identity{}, uuids: map[string]string{},
		topology: cfg.Topology(), reported: map[string]time.Time{}}
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
		Skipped:    k.skipper().Line,
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

// skipper counts a line that made no health event in the receiver's
// telemetry and says where it was and why (rate-limited per reason).
func (k *kernelLog) skipper() kernellog.Skipper {
	return kernellog.Skipper{
		Count: func(reason string) {
			k.r.tel.ReceiverDcgmKernelLogLinesSkipped.Add(context.Background(), 1, metric.WithAttributes(attribute.String("reason", reason)))
		},
		Log: func(key, msg string) { k.r.warn.Info(key, msg) },
	}
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
		k.pcieError(ev, at, detail)
	case kernellog.KindUnknown:
		// A form not known yet: an event on the GPU at the bus it names, or
		// on the node, with its raw lines; never silence.
		id := model.Identity{HostName: k.r.hostName, Index: -1}
		if ev.Bus != "" {
			id, _ = k.identity(ev.Bus)
		}
		if k.repeated(id, xid.KernelLogUnknown, at) {
			k.skipper().Event(ev, kernellog.SkipDuplicate)
			return
		}
		rec := k.r.health.ObserveCondition(id, xid.KernelLogUnknown, at, detail)
		rec.Message = fmt.Sprintf("%s on %s: %q. Recommended action: %s.", rec.Class.Mnemonic, subjectOf(id, k.r.hostName), clipLine(ev.Lines[0]), rec.Class.Action)
		k.r.publish(context.Background(), []health.Record{rec})
	case kernellog.KindNeuronHWError:
		k.skipper().Event(ev, kernellog.SkipOtherReceiver) // the neuron receiver's
	}
}

// pcieError makes a PCIe AER error an event on each GPU it concerns: the
// GPU at its bus, the GPU whose other function it is (the card's audio
// function), or every GPU behind the port that reported it. An error on a
// device with no GPU on or behind it is counted as skipped.
func (k *kernelLog) pcieError(ev kernellog.Event, at time.Time, detail string) {
	c := xid.PCIeAERCorrected
	switch ev.Severity {
	case kernellog.AERFatal:
		c = xid.PCIeAERFatal
	case kernellog.AERNonFatal:
		c = xid.PCIeAERNonFatal
	}
	ids := k.pcieDevices(ev)
	if len(ids) == 0 {
		k.skipper().Event(ev, kernellog.SkipNotAccelerator)
		return
	}
	where := "PCI " + ev.Bus
	if ev.Port != "" {
		where += " (reported by the port at " + ev.Port + ")"
	}
	for _, id := range ids {
		if k.repeated(id, c, at) {
			k.skipper().Event(ev, kernellog.SkipDuplicate)
			continue
		}
		rec := k.r.health.ObserveCondition(id, c, at, detail)
		rec.Message = fmt.Sprintf("%s on %s, at %s: %s. Recommended action: %s.", rec.Class.Mnemonic, subjectOf(id, k.r.hostName), where, ev.Text, rec.Class.Action)
		k.r.publish(context.Background(), []health.Record{rec})
	}
}

// pcieDevices are the GPUs a PCIe error at ev.Bus (or its reporting port)
// concerns.
func (k *kernelLog) pcieDevices(ev kernellog.Event) []model.Identity {
	k.mu.Lock()
	defer k.mu.Unlock()
	if id, ok := k.byBus[ev.Bus]; ok {
		return []model.Identity{id}
	}
	buses := make([]string, 0, len(k.byBus))
	for bus := range k.byBus {
		buses = append(buses, bus)
	}
	slices.Sort(buses)
	for _, bus := range buses {
		if kernellog.SameSlot(ev.Bus, bus) {
			return []model.Identity{k.byBus[bus]}
		}
	}
	var behind []model.Identity
	for _, bus := range buses {
		if k.topology.Behind(bus, ev.Bus) {
			behind = append(behind, k.byBus[bus])
		}
	}
	if len(behind) > 0 {
		return behind
	}
	if strings.HasPrefix(ev.Lines[0], "nvidia ") || slices.Contains(k.topology.Bound("nvidia"), ev.Bus) {
		// An NVIDIA GPU no source knows yet (or any more): named by its bus.
		id := model.Identity{PCIBusID: ev.Bus, HostName: k.r.hostName, Index: -1, GPUInstanceID: -1, ComputeInstanceID: -1, PartitionType: "none", Share: 1}
		if uuid, ok := k.uuids[ev.Bus]; ok {
			id.HWID = uuid
		}
		return []model.Identity{id}
	}
	return nil
}

// repeated reports whether c was reported for the device within the
// window before at, and notes at as its last report otherwise.
func (k *kernelLog) repeated(id model.Identity, c xid.Condition, at time.Time) bool {
	key := fmt.Sprintf("%s|%s|%d", id.HWID, id.PCIBusID, c)
	k.mu.Lock()
	defer k.mu.Unlock()
	if last, ok := k.reported[key]; ok && at.Sub(last) < k.window && last.Sub(at) < k.window {
		return true
	}
	if len(k.reported) >= 1024 {
		for key, last := range k.reported {
			if at.Sub(last) >= k.window {
				delete(k.reported, key)
			}
		}
	}
	k.reported[key] = at
	return false
}

// subjectOf names a device in an event's message.
func subjectOf(id model.Identity, host string) string {
	switch {
	case id.HWID != "":
		return id.HWID
	case id.PCIBusID != "":
		return "the GPU at PCI " + id.PCIBusID
	}
	return "node " + host
}

// clipLine bounds the raw line a message quotes (the whole lines are the
// event's detail).
func clipLine(s string) string {
	const most = 200
	if len(s) > most {
		return s[:most] + "…"
	}
	return s
}
