package neuronreceiver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receiverhelper"
	"go.uber.org/zap"

	"github.com/otelcol-accel/otelcol-accel/internal/componenthealth"
	"github.com/otelcol-accel/otelcol-accel/internal/promscrape"
	"github.com/otelcol-accel/otelcol-accel/receiver/neuronreceiver/internal/follow"
	"github.com/otelcol-accel/otelcol-accel/receiver/neuronreceiver/internal/framing"
	"github.com/otelcol-accel/otelcol-accel/receiver/neuronreceiver/internal/mapping"
	"github.com/otelcol-accel/otelcol-accel/receiver/neuronreceiver/internal/metadata"
	"github.com/otelcol-accel/otelcol-accel/receiver/neuronreceiver/internal/promreport"
	"github.com/otelcol-accel/otelcol-accel/receiver/neuronreceiver/internal/report"
	"github.com/otelcol-accel/otelcol-accel/receiver/neuronreceiver/internal/supervisor"
)

const (
	// logEvery is how often one kind of complaint may be logged.
	logEvery = time.Minute
	// filePoll is how often a followed file is checked for new data,
	// rotation or reappearance.
	filePoll = 250 * time.Millisecond
)

// installHint completes the message for a missing neuron-monitor.
const installHint = "install aws-neuronx-tools or set command: to its full path in the neuron receiver's config"

// neuronReceiver is one neuron-monitor stream, shared by the metrics and the
// logs pipeline of one component ID.
type neuronReceiver struct {
	cfg *Config
	set receiver.Settings
	log *componenthealth.Logger
	// status has one source, the input; its errors say which it is.
	status *componenthealth.Problems
	source string
	tel    *metadata.TelemetryBuilder
	clock  func() time.Time
	mapper *mapping.Mapper
	// mapMu serialises the mapper between the report input and the kernel
	// log reader.
	mapMu  sync.Mutex
	kernel *kernelLog
	// format names the input in the receiver's own telemetry.
	format string

	obsMetrics *receiverhelper.ObsReport
	obsLogs    *receiverhelper.ObsReport

	mu      sync.Mutex
	metrics consumer.Metrics
	logs    consumer.Logs

	// ctx lives from Start to Shutdown; a pipeline that blocks is released
	// by Shutdown through it.
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	tmpDir string
}

func newReceiver(cfg *Config, set receiver.Settings) (*neuronReceiver, error) {
	transport, format, source := "pipe", "neuron_monitor_json", "neuron-monitor"
	switch cfg.Input {
	case InputFile:
		transport, source = "file", "neuron-monitor output file"
	case InputPrometheus:
		transport, format, source = "http", "prometheus", "neuron-monitor-prometheus"
	}
	tel, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	obsMetrics, err := receiverhelper.NewObsReport(receiverhelper.ObsReportSettings{ReceiverID: set.ID, Transport: transport, LongLivedCtx: true, ReceiverCreateSettings: set})
	if err != nil {
		return nil, err
	}
	obsLogs, err := receiverhelper.NewObsReport(receiverhelper.ObsReportSettings{ReceiverID: set.ID, Transport: transport, LongLivedCtx: true, ReceiverCreateSettings: set})
	if err != nil {
		return nil, err
	}
	return &neuronReceiver{
		cfg:    cfg,
		set:    set,
		log:    componenthealth.NewLogger(set.Logger, logEvery),
		status: componenthealth.NewProblems(componenthealth.SourcesNamedInErrors()),
		source: source,
		tel:    tel,
		clock:  time.Now,
		format: format,
		mapper: mapping.New(mapping.Settings{
			Metrics:      cfg.MetricsBuilderConfig,
			Period:       cfg.Period,
			CoreCounters: cfg.wants(groupNeuronCoreCounters),
			AllRuntimes:  cfg.allRuntimes(),
		}, set),
		obsMetrics: obsMetrics,
		obsLogs:    obsLogs,
	}, nil
}

func (r *neuronReceiver) setMetricsConsumer(next consumer.Metrics) {
	r.mu.Lock()
	r.metrics = next
	r.mu.Unlock()
}

func (r *neuronReceiver) setLogsConsumer(next consumer.Logs) {
	r.mu.Lock()
	r.logs = next
	r.mu.Unlock()
}

// Start begins reading reports; it does not wait for neuron-monitor, nor
// for its exporter.
func (r *neuronReceiver) Start(startCtx context.Context, host component.Host) error {
	r.status.Start(host)
	ctx, cancel := context.WithCancel(context.Background())
	var run func(context.Context)
	switch r.cfg.Input {
	case InputFile:
		run = follow.New(r.cfg.Path, filePoll, follow.Hooks{Consume: r.consumeFile, Event: r.fileEvent}).Run
	case InputPrometheus:
		// Fails only on configuration (a TLS file that cannot be read),
		// never because the exporter is not up yet.
		client, err := promscrape.NewClient(startCtx, &r.cfg.ClientConfig, host, r.set.TelemetrySettings,
			promscrape.ClientOptions{Accept: promscrape.AcceptText}) // prometheus_client answers OpenMetrics when asked; this reads 0.0.4
		if err != nil {
			cancel()
			return fmt.Errorf("neuron-monitor-prometheus client for %s: %w", r.cfg.Endpoint, err)
		}
		run = (&pageScraper{r: r, url: r.cfg.Endpoint, client: client, reader: promreport.NewReader()}).run
	default:
		dir, file, err := r.cfg.writeMonitorConfig()
		if err != nil {
			cancel()
			return fmt.Errorf("writing neuron-monitor's config file: %w", err)
		}
		r.tmpDir = dir
		sup := supervisor.New(supervisor.Config{
			Command:        r.cfg.Command,
			Args:           append([]string{"-c", file}, r.cfg.Args...),
			InitialBackoff: r.cfg.RestartBackoff.InitialInterval,
			MaxBackoff:     r.cfg.RestartBackoff.MaxInterval,
			GracePeriod:    r.cfg.ShutdownGracePeriod,
		}, supervisor.Hooks{Stdout: r.consumeChild, Stderr: r.childStderr, Event: r.childEvent})
		run = sup.Run
	}
	r.ctx, r.cancel = ctx, cancel
	if r.cfg.Health.KernelLog.Enabled() {
		r.kernel = &kernelLog{r: r}
		if err := r.kernel.start(startCtx, host); err != nil {
			cancel()
			return err
		}
	}
	r.done = make(chan struct{})
	go func() {
		defer close(r.done)
		run(ctx)
	}()
	return nil
}

// Shutdown stops neuron-monitor (SIGTERM, then SIGKILL after the grace
// period) and removes its config file.
func (r *neuronReceiver) Shutdown(ctx context.Context) error {
	var err error
	if r.cancel != nil {
		r.cancel()
		select {
		case <-r.done:
		case <-ctx.Done():
			err = fmt.Errorf("neuron receiver: neuron-monitor still stopping: %w", ctx.Err())
		}
	}
	if r.kernel != nil {
		err = errors.Join(err, r.kernel.shutdown(ctx))
	}
	if r.tmpDir != "" {
		err = errors.Join(err, os.RemoveAll(r.tmpDir))
	}
	r.status.Shutdown()
	r.tel.Shutdown()
	return err
}

func (r *neuronReceiver) consumeChild(run supervisor.Run, rd io.Reader) {
	r.consume(fmt.Sprintf("neuron-monitor (%s) stdout", run), rd)
}

func (r *neuronReceiver) consumeFile(s follow.Stream, rd io.Reader) {
	var opts []framing.Option
	if s.MidLine {
		opts = append(opts, framing.StartMidLine())
	}
	r.consume(s.Path, rd, opts...)
}

// consume decodes one stream until it ends. Nothing in it stops the
// stream: a bad report is logged, rate-limited, and skipped.
func (r *neuronReceiver) consume(name string, rd io.Reader, opts ...framing.Option) {
	fr := framing.New(rd, opts...)
	for {
		frame, err := fr.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrClosed) && !errors.Is(err, context.Canceled) {
				r.log.Warn("read", fmt.Sprintf("%s: read failed: %v", name, err))
			}
			return
		}
		if frame.Problem != nil {
			r.tel.ReceiverNeuronScrapesFailed.Add(context.Background(), 1)
			r.log.Warn(fmt.Sprintf("framing/%d", frame.Problem.Kind), fmt.Sprintf("%s: %s", name, frame.Problem.Error()))
			continue
		}
		rep, problems, err := report.Decode(frame.Doc)
		if err != nil {
			r.tel.ReceiverNeuronScrapesFailed.Add(context.Background(), 1)
			r.log.Warn("decode", fmt.Sprintf("%s: %s: %v; skipped", name, frame.Position, err))
			continue
		}
		for _, p := range problems {
			r.log.Warn("decode/"+p.Key, fmt.Sprintf("%s: %s: %v; that group is skipped", name, frame.Position, p.Err))
		}
		r.process(rep, r.clock())
	}
}

// process maps one report, observed at now, and hands the result to the
// pipelines: the one path of both inputs.
func (r *neuronReceiver) process(rep *report.Report, now time.Time) {
	r.mapMu.Lock()
	res := r.mapper.Map(rep, now)
	r.mapMu.Unlock()
	for _, p := range res.Problems {
		r.log.Warn("map/"+p.Key, "neuron-monitor: "+p.Error())
	}
	r.mu.Lock()
	metrics, logs := r.metrics, r.logs
	r.mu.Unlock()

	ctx := r.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	if n := res.Metrics.DataPointCount(); metrics != nil && n > 0 {
		opCtx := r.obsMetrics.StartMetricsOp(ctx)
		err := metrics.ConsumeMetrics(opCtx, res.Metrics)
		r.obsMetrics.EndMetricsOp(opCtx, r.format, n, err)
		if err != nil {
			r.log.Error("consume/metrics", "neuron receiver: the metrics pipeline refused a report", zap.Int("data_points", n), zap.Error(err))
		}
	}
	if n := res.Logs.LogRecordCount(); logs != nil && n > 0 {
		opCtx := r.obsLogs.StartLogsOp(ctx)
		err := logs.ConsumeLogs(opCtx, res.Logs)
		r.obsLogs.EndLogsOp(opCtx, r.format, n, err)
		if err != nil {
			r.log.Error("consume/logs", "neuron receiver: the logs pipeline refused health events", zap.Int("log_records", n), zap.Error(err))
		}
	}
	r.status.Clear(r.source)
}

// digits makes stderr lines that differ only in numbers (pids, counters,
// timestamps) one kind of message for rate limiting.
var digits = regexp.MustCompile(`[0-9]+`)

func (r *neuronReceiver) childStderr(run supervisor.Run, line string) {
	key := digits.ReplaceAllString(line, "#")
	if len(key) > 80 {
		key = key[:80]
	}
	r.log.Warn("stderr/"+key, "neuron-monitor stderr", zap.Int("pid", run.PID), zap.String("line", line))
}

func (r *neuronReceiver) childEvent(ev supervisor.Event) {
	switch ev.Kind {
	case supervisor.Started:
		r.set.Logger.Info("neuron-monitor started", zap.Int("pid", ev.Run.PID), zap.Int("start", ev.Run.Number), zap.String("command", r.cfg.Command))
	case supervisor.NotFound:
		err := fmt.Errorf("%w: %s", ev.Err, installHint)
		if r.status.Fail(r.source, err) {
			// One message, not one per retry; the status keeps saying it.
			r.set.Logger.Error(err.Error(), zap.Duration("retry_in", ev.RestartIn))
		}
	case supervisor.StartFailed:
		err := fmt.Errorf("cannot start %s: %w", r.cfg.Command, ev.Err)
		r.log.Error("start", err.Error(), zap.Duration("retry_in", ev.RestartIn))
		r.status.Fail(r.source, err)
	case supervisor.Exited:
		err := fmt.Errorf("neuron-monitor (%s) exited after %s: %w", ev.Run, ev.Uptime.Round(time.Millisecond), ev.Err)
		r.tel.ReceiverNeuronMonitorRestarts.Add(context.Background(), 1)
		r.log.Warn("exit", err.Error()+"; restarting", zap.Duration("restart_in", ev.RestartIn))
		r.status.Fail(r.source, err)
	}
}

func (r *neuronReceiver) fileEvent(ev follow.Event) {
	switch ev.Kind {
	case follow.Opened:
		r.log.Reset("file/missing")
		r.set.Logger.Info("reading neuron-monitor output", zap.String("path", ev.Path))
	case follow.Missing:
		err := fmt.Errorf("%s does not exist yet: waiting for neuron-monitor's output to appear there", ev.Path)
		r.log.Warn("file/missing", err.Error())
		r.status.Fail(r.source, err)
	case follow.Failed:
		err := fmt.Errorf("cannot read neuron-monitor's output: %w", ev.Err)
		r.log.Error("file/failed", err.Error())
		r.status.Fail(r.source, err)
	case follow.Rotated:
		r.set.Logger.Info("neuron-monitor output was rotated or truncated; reading the new file from its start", zap.String("path", ev.Path))
	}
}
