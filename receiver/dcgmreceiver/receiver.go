package dcgmreceiver

import (
	"context"
	"errors"
	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receiverhelper"
	"go.opentelemetry.io/collector/scraper"
	"go.opentelemetry.io/collector/scraper/scraperhelper"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/otelcol-accel/otelcol-accel/internal/componenthealth"
	"github.com/otelcol-accel/otelcol-accel/internal/xid"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/exportersource"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/health"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/metadata"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/model"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/mps"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/nvmlsource"
)

// warningPeriod spaces out repeated warnings about the same thing.
const warningPeriod = 10 * time.Minute

// source is what NVML and dcgm-exporter have in common for the receiver.
type source interface {
	Start(ctx context.Context, host component.Host) error
	Scrape(ctx context.Context) *model.Snapshot
	Shutdown(ctx context.Context) error
}

// dcgmReceiver is the one instance behind both the metrics and the logs
// pipeline of a component ID.
type dcgmReceiver struct {
	cfg    *Config
	set    receiver.Settings
	world  outside
	logger *zap.Logger

	src        source
	health     *health.Tracker
	mps        *mps.Monitor
	hostName   string
	emitter    *emitter
	controller receiver.Metrics
	obsLogs    *receiverhelper.ObsReport
	warn       *componenthealth.Logger
	// status has one source, NVML or dcgm-exporter; their errors name it.
	status *componenthealth.Problems
	tel    *metadata.TelemetryBuilder
	kernel *kernelLog

	mu      sync.Mutex
	metrics consumer.Metrics
	logs    consumer.Logs
	started bool
}

func newReceiver(set receiver.Settings, cfg *Config, w outside) (*dcgmReceiver, error) {
	filter, err := model.ParseDeviceFilter(cfg.Devices)
	if err != nil {
		return nil, err
	}
	r := &dcgmReceiver{
		cfg: cfg, set: set, world: w, logger: set.Logger,
		health: health.New(cfg.Health.XIDHold, 10*time.Minute+10*cfg.CollectionInterval),
		warn:   componenthealth.NewLogger(set.Logger, warningPeriod),
		status: componenthealth.NewProblems(componenthealth.SourcesNamedInErrors()),
	}
	r.warn.SetClock(w.now)
	if r.tel, err = metadata.NewTelemetryBuilder(set.TelemetrySettings); err != nil {
		return nil, err
	}
	r.hostName = nodeName(w)
	switch cfg.Source {
	case SourceDCGMExporter:
		r.src = exportersource.New(exportersource.Settings{
			Client: cfg.ClientConfig,
			Decoder: exportersource.Decoder{
				Filter: filter, ViolationUnit: cfg.ViolationUnit, PerPodUsage: cfg.PerPodUsage, HostName: r.hostName,
			},
			Telemetry:     set.TelemetrySettings,
			ReportStatus:  r.status.Reporter(SourceDCGMExporter),
			ScrapeFailed:  r.scrapeFailed(metadata.AttributeSourceDcgmExporter),
			BackoffStart:  cfg.CollectionInterval,
			BackoffMax:    max(time.Minute, cfg.CollectionInterval),
			WarningPeriod: warningPeriod,
			Now:           w.now,
		})
	default:
		r.src = nvmlsource.New(nvmlsource.Settings{
			Library:       func() nvml.Interface { return w.nvml(cfg.LibraryPath) },
			Filter:        filter,
			HostName:      r.hostName,
			Want:          wanted(cfg.Metrics),
			Logger:        set.Logger,
			ReportStatus:  r.status.Reporter(SourceNVML),
			ScrapeFailed:  r.scrapeFailed(metadata.AttributeSourceNvml),
			OnEvent:       r.onEvent,
			RetryStart:    w.retryStart,
			RetryMax:      time.Minute,
			WarningPeriod: warningPeriod,
			Now:           w.now,
		})
	}
	if cfg.MPS.Enabled {
		settings := mps.Settings{
			PipeDirectory:  cfg.MPS.PipeDirectory,
			ControlCommand: cfg.MPS.ControlCommand,
			Explicit:       cfg.MPS.PipeDirectory != "",
			Timeout:        cfg.MPS.Timeout,
		}
		if settings.PipeDirectory == "" {
			settings.PipeDirectory = w.getenv("CUDA_MPS_PIPE_DIRECTORY")
		}
		if settings.PipeDirectory == "" {
			settings.PipeDirectory = mps.DefaultPipeDirectory
		}
		r.mps = mps.NewMonitor(settings, w.mpsRun)
	}
	if cfg.Health.KernelLog.Enabled() {
		r.kernel = newKernelLog(r)
		r.health.SetDedupWindow(r.kernel.window)
	}
	r.emitter = newEmitter(cfg.MetricsBuilderConfig, set, w.now())
	if r.obsLogs, err = receiverhelper.NewObsReport(receiverhelper.ObsReportSettings{ReceiverID: set.ID, ReceiverCreateSettings: set}); err != nil {
		return nil, err
	}
	sc, err := scraper.NewMetrics(r.scrape)
	if err != nil {
		return nil, err
	}
	r.controller, err = scraperhelper.NewMetricsController(&cfg.ControllerConfig, set, consumerFunc(r.forwardMetrics),
		scraperhelper.AddMetricsScraper(metadata.Type, sc))
	if err != nil {
		return nil, err
	}
	return r, nil
}

// nodeName is the name of the node the collector runs on: $K8S_NODE_NAME
// (the downward API's spec.nodeName, which the distribution's manifests
// set), else the host name. In a pod without hostNetwork the host name is
// the pod's own name, which is why the node name comes first; and it is
// preferred to dcgm-exporter's Hostname label, which is the exporter's.
func nodeName(w outside) string {
	if name := w.getenv("K8S_NODE_NAME"); name != "" {
		return name
	}
	if name, err := w.hostname(); err == nil {
		return name
	}
	return ""
}

// wanted skips the costlier NVML reads when their metrics are all disabled.
func wanted(m metadata.MetricsConfig) nvmlsource.Want {
	return nvmlsource.Want{
		Processes: m.AcceleratorProcessMemoryUsage.Enabled || m.AcceleratorProcessUtilization.Enabled,
		GPM: m.AcceleratorGrEngineActive.Enabled || m.AcceleratorSmActive.Enabled || m.AcceleratorSmOccupancy.Enabled ||
			m.AcceleratorTensorActive.Enabled || m.AcceleratorDramActive.Enabled,
	}
}

func (r *dcgmReceiver) setMetrics(next consumer.Metrics) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.metrics = next
}

func (r *dcgmReceiver) setLogs(next consumer.Logs) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.logs = next
}

// Start never fails because the GPU library or the exporter is missing:
// those are reported as a recoverable status and retried.
func (r *dcgmReceiver) Start(ctx context.Context, host component.Host) error {
	r.status.Start(host)
	if err := r.src.Start(ctx, host); err != nil {
		return err
	}
	if err := r.controller.Start(ctx, host); err != nil {
		return errors.Join(err, r.src.Shutdown(ctx))
	}
	if r.kernel != nil {
		if err := r.kernel.start(ctx, host); err != nil {
			return errors.Join(err, r.controller.Shutdown(ctx), r.src.Shutdown(ctx))
		}
	}
	r.mu.Lock()
	r.started = true
	r.mu.Unlock()
	return nil
}

// Shutdown stops scraping, then the source.
func (r *dcgmReceiver) Shutdown(ctx context.Context) error {
	r.mu.Lock()
	started := r.started
	r.started = false
	r.mu.Unlock()
	if !started {
		return nil
	}
	err := errors.Join(r.controller.Shutdown(ctx), r.src.Shutdown(ctx))
	if r.kernel != nil {
		err = errors.Join(err, r.kernel.shutdown(ctx))
	}
	r.publish(ctx, r.health.Due(time.Now().Add(time.Hour))) // what was held for de-duplication
	r.status.Shutdown()
	r.tel.Shutdown()
	return err
}

// scrapeFailed counts a scrape that gave no data because source is
// unavailable.
func (r *dcgmReceiver) scrapeFailed(source metadata.AttributeSource) func(context.Context) {
	attrs := metric.WithAttributes(attribute.String("source", source.String()))
	return func(ctx context.Context) { r.tel.ReceiverDcgmScrapesFailed.Add(ctx, 1, attrs) }
}

// scrape reads the source once, updates device health, checks the MPS
// daemon, and returns the metrics; health events go to the logs pipeline.
// Problems are logged (rate-limited) by their owners, never returned: the
// scraper helper would log an error on every scrape.
func (r *dcgmReceiver) scrape(ctx context.Context) (pmetric.Metrics, error) {
	snap := r.src.Scrape(ctx)
	if r.kernel != nil {
		r.kernel.learn(snap)
	}
	records := r.health.Observe(snap)
	records = append(records, r.health.Due(r.world.now())...)
	var mpsStatus *mps.Status
	if r.mps != nil {
		st := r.mps.Check(ctx)
		r.logMPS(st)
		if st.Stopped {
			id := model.Identity{HostName: r.hostName, Index: -1, GPUInstanceID: -1, ComputeInstanceID: -1}
			records = append(records, health.ConditionRecord(id, xid.MPSDaemonDown, snap.Time, 0))
		}
		mpsStatus = &st
	}
	md := r.emitter.emit(snap, r.health, mpsStatus, r.hostName)
	r.publish(ctx, records)
	return md, nil
}

func (r *dcgmReceiver) logMPS(st mps.Status) {
	switch {
	case st.Err == nil:
		r.warn.Reset("mps")
	case errors.Is(st.Err, mps.ErrNoClient) && !st.Checked:
		r.warn.Warn("mps-client", "an MPS pipe directory exists but the MPS control client cannot be run, so the MPS daemon is not monitored: mount it and set mps.control_command, or set mps.enabled: false",
			zap.String("pipe_directory", r.mps.Settings().PipeDirectory), zap.Error(st.Err))
	default:
		r.warn.Warn("mps", "MPS control daemon does not answer", zap.Error(st.Err))
	}
}

// onEvent handles an asynchronous NVML event: the health event goes out at
// once, the state change shows in hw.status at the next scrape.
func (r *dcgmReceiver) onEvent(e model.Event) {
	r.publish(context.Background(), r.health.ObserveEvent(e))
}

func (r *dcgmReceiver) forwardMetrics(ctx context.Context, md pmetric.Metrics) error {
	r.mu.Lock()
	next := r.metrics
	r.mu.Unlock()
	if next == nil {
		return nil // a logs-only pipeline: the scrape ran for health
	}
	return next.ConsumeMetrics(ctx, md)
}
