package emfexporter // import "github.com/otelcol-accel/otelcol-accel/exporter/emfexporter"

import (
	"context"
	"os"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/otelcol-accel/otelcol-accel/exporter/emfexporter/internal/emf"
	"github.com/otelcol-accel/otelcol-accel/exporter/emfexporter/internal/logjson"
	"github.com/otelcol-accel/otelcol-accel/exporter/emfexporter/internal/logname"
	"github.com/otelcol-accel/otelcol-accel/exporter/emfexporter/internal/metadata"
	"github.com/otelcol-accel/otelcol-accel/exporter/emfexporter/internal/output"
	"github.com/otelcol-accel/otelcol-accel/internal/componenthealth"
)

// logEvery is how often one kind of problem is logged at most.
const logEvery = time.Minute

// sourceCloudWatch names the endpoint in the exporter's status.
const sourceCloudWatch = "CloudWatch Logs"

// emfExporter encodes and sends one signal. The metrics side receives deltas
// only (see deltaStage), so encoding is a pure function of the request and a
// retry re-encodes exactly what failed.
type emfExporter struct {
	cfg    *Config
	logger *zap.Logger
	rl     *componenthealth.Logger
	// status is RecoverableError while CloudWatch Logs calls keep failing;
	// its errors carry request ids, so only failing or not is a change.
	status *componenthealth.Problems
	tel    *metadata.TelemetryBuilder
	enc    *emf.Encoder
	logEnc logjson.Encoder
	group  logname.Template
	stream logname.Template
	sink   output.Sink
	now    func() time.Time
}

func newEMFExporter(cfg *Config, set exporter.Settings) (*emfExporter, error) {
	group, err := logname.Parse(cfg.LogGroupName, logname.Group)
	if err != nil {
		return nil, err
	}
	stream, err := logname.Parse(cfg.LogStreamName, logname.Stream)
	if err != nil {
		return nil, err
	}
	tel, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	e := &emfExporter{
		cfg:    cfg,
		logger: set.Logger,
		rl:     componenthealth.NewLogger(set.Logger, logEvery),
		status: componenthealth.NewProblems(componenthealth.ReportSourceChangesOnly()),
		tel:    tel,
		enc:    emf.NewEncoder(cfg.encoderOptions()),
		logEnc: logjson.Encoder{MaxEventBytes: cfg.maxEventBytes()},
		group:  group,
		stream: stream,
		now:    time.Now,
	}
	switch cfg.Output {
	case OutputStdout:
		e.sink = output.NewStdout(os.Stdout)
	case OutputFile:
		e.sink = output.NewFile(cfg.File.Path, int64(cfg.File.MaxMegabytes)<<20, cfg.File.MaxBackups)
	default:
		client := output.ClientConfig{Region: cfg.Region, Endpoint: cfg.Endpoint, RoleARN: cfg.RoleARN}
		e.sink = output.NewCloudWatchLogs(func(ctx context.Context) (output.LogsAPI, error) {
			api, region, err := output.NewLogsClient(ctx, client)
			if err == nil {
				set.Logger.Info("Sending EMF and log events to CloudWatch Logs",
					zap.String("region", region), zap.String("log_group_name", cfg.LogGroupName),
					zap.String("log_stream_name", cfg.LogStreamName), zap.String("endpoint", cfg.Endpoint))
			}
			return api, err
		}, cfg.LogRetentionDays, e)
	}
	return e, nil
}

func (e *emfExporter) start(ctx context.Context, host component.Host) error {
	e.status.Start(host)
	return e.sink.Start(ctx, host)
}

func (e *emfExporter) shutdown(ctx context.Context) error {
	err := e.sink.Shutdown(ctx)
	e.status.Shutdown()
	e.tel.Shutdown()
	return err
}

// names resolves the log group and stream of a resource.
func (e *emfExporter) names(res pcommon.Resource) (string, string) {
	if e.cfg.Output != OutputCloudWatchLogs {
		return "", ""
	}
	m := res.Attributes()
	return e.group.Render(m, e.cfg.PlaceholderFallback), e.stream.Render(m, e.cfg.PlaceholderFallback)
}

// eventsPool holds the event lists of finished requests: a request of a
// few nodes' output is thousands of events, and growing the list anew each
// time was a twentieth of what the exporter allocated.
var eventsPool = sync.Pool{New: func() any { return new([]output.Event) }}

func (e *emfExporter) pushMetrics(ctx context.Context, md pmetric.Metrics) error {
	now := e.now()
	pooled := eventsPool.Get().(*[]output.Event)
	events := (*pooled)[:0]
	arena := output.GetArena()
	defer func() {
		// The sink is done with the events and their messages when Send
		// returns (a retry re-encodes), so both go back to their pools.
		clear(events)
		*pooled = events[:0]
		eventsPool.Put(pooled)
		arena.Release()
	}()
	var stats emf.Stats
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		rm := rms.At(i)
		group, stream := e.names(rm.Resource())
		stats.Add(e.enc.EncodeResource(rm, now, func(ts int64, msg []byte) {
			events = append(events, output.Event{Group: group, Stream: stream, Timestamp: ts, Message: arena.Copy(msg), Origin: i})
		}, e.problem))
	}
	if stats.Truncated > 0 {
		e.rl.Warn("truncated", "Cut dimension values to 1,024 bytes or left attribute fields out of EMF events to keep them within CloudWatch limits",
			zap.Int("count", stats.Truncated))
	}
	if stats.Split > 0 {
		e.tel.ExporterEmfEventsSplit.Add(ctx, int64(stats.Split))
	}
	if len(events) == 0 {
		return nil
	}
	err := e.sink.Send(ctx, events, true)
	if f, ok := output.AsFailed(err); ok {
		if len(f.Origins) == rms.Len() {
			return f
		}
		retry := pmetric.NewMetrics()
		for i := 0; i < rms.Len(); i++ {
			if f.Origins[i] {
				rms.At(i).CopyTo(retry.ResourceMetrics().AppendEmpty())
			}
		}
		return consumererror.NewMetrics(f, retry)
	}
	return err
}

func (e *emfExporter) pushLogs(ctx context.Context, ld plog.Logs) error {
	now := e.now()
	var events []output.Event
	rls := ld.ResourceLogs()
	truncated := 0
	for i := 0; i < rls.Len(); i++ {
		rl := rls.At(i)
		group, stream := e.names(rl.Resource())
		sls := rl.ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			sl := sls.At(j)
			lrs := sl.LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				msg, ts, cut := e.logEnc.Encode(rl.Resource(), sl.Scope(), lrs.At(k), now)
				if cut {
					truncated++
				}
				events = append(events, output.Event{Group: group, Stream: stream, Timestamp: ts, Message: msg, Origin: i})
			}
		}
	}
	if truncated > 0 {
		e.rl.Warn("log-truncated", "Cut log records larger than max_event_bytes; their body ends in [Truncated...]",
			zap.Int("records", truncated), zap.Int("max_event_bytes", e.cfg.maxEventBytes()))
	}
	if len(events) == 0 {
		return nil
	}
	err := e.sink.Send(ctx, events, false)
	if f, ok := output.AsFailed(err); ok {
		if len(f.Origins) == rls.Len() {
			return f
		}
		retry := plog.NewLogs()
		for i := 0; i < rls.Len(); i++ {
			if f.Origins[i] {
				rls.At(i).CopyTo(retry.ResourceLogs().AppendEmpty())
			}
		}
		return consumererror.NewLogs(f, retry)
	}
	return err
}

// problem logs a data point the encoder could not send, at most once a
// minute per metric.
func (e *emfExporter) problem(p emf.Problem) {
	e.rl.Warn("point:"+p.Metric, "Skipping a data point that cannot be sent to CloudWatch",
		zap.String("metric", p.Metric), zap.String("reason", p.Reason))
}

// Rejected implements output.Reporter.
func (e *emfExporter) Rejected(group, stream string, tooNew, tooOld, expired int) {
	for _, r := range []struct {
		reason string
		n      int
	}{{"too_new", tooNew}, {"too_old", tooOld}, {"expired", expired}} {
		if r.n > 0 {
			e.tel.ExporterEmfEventsRejected.Add(context.Background(), int64(r.n), metric.WithAttributes(attribute.String("reason", r.reason)))
		}
	}
	e.rl.Warn("rejected:"+group, "CloudWatch Logs rejected events outside its time window (more than 2 h ahead, or older than 14 days or the group's retention)",
		zap.String("log_group_name", group), zap.String("log_stream_name", stream),
		zap.Int("too_new", tooNew), zap.Int("too_old", tooOld), zap.Int("expired", expired))
}

// Failed implements output.Reporter: one line a minute per log group, and a
// recoverable-error status while the endpoint keeps failing.
func (e *emfExporter) Failed(group, stream string, err error, permanent bool) {
	if permanent {
		e.rl.Error("permanent:"+group, "CloudWatch Logs refused a batch for good; it is dropped",
			zap.String("log_group_name", group), zap.String("log_stream_name", stream), zap.Error(err))
		return
	}
	e.rl.Warn("failed:"+group, "CloudWatch Logs call failed; the data stays queued and is retried with backoff",
		zap.String("log_group_name", group), zap.String("log_stream_name", stream), zap.Error(err))
	e.status.Fail(sourceCloudWatch, err)
}

// Delivered implements output.Reporter.
func (e *emfExporter) Delivered() {
	if e.status.Clear(sourceCloudWatch) {
		e.logger.Info("CloudWatch Logs accepts events again")
	}
}
