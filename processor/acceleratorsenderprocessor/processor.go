package acceleratorsenderprocessor

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/componenthealth"
	"github.com/otelcol-accel/otelcol-accel/internal/pmetricutil"
	"github.com/otelcol-accel/otelcol-accel/internal/senderauth"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorsenderprocessor/internal/metadata"
)

type senderProcessor struct {
	cfg       *Config
	agents    map[string]bool
	logger    *zap.Logger
	rlog      *componenthealth.Logger
	telemetry *metadata.TelemetryBuilder
}

func newSenderProcessor(set processor.Settings, cfg *Config) (*senderProcessor, error) {
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	return &senderProcessor{
		cfg: cfg, agents: cfg.usernames(), logger: set.Logger, telemetry: tb,
		rlog: componenthealth.NewLogger(set.Logger, time.Minute),
	}, nil
}

// warnLocalMode says once, at start, that the gateway takes health data
// from senders nobody vouched for.
func (p *senderProcessor) warnLocalMode() {
	if p.cfg.AcceptUnauthenticated {
		p.logger.Warn("accelerator_sender: accept_unauthenticated is on: health events and device status from senders without an identity reach the remediator (local mode; turn it off wherever the agents send a k8s_token_auth token)")
	}
}

func senderOf(ctx context.Context) sender {
	id, ok := senderauth.FromContext(ctx)
	return sender{id: id, authenticated: ok}
}

// processLogs drops the health records of resources their sender may not
// speak for and names the reporter on the rest. Other records pass.
func (p *senderProcessor) processLogs(ctx context.Context, ld plog.Logs) (plog.Logs, error) {
	s := senderOf(ctx)
	ld.ResourceLogs().RemoveIf(func(rl plog.ResourceLogs) bool {
		res := rl.Resource().Attributes()
		reporter, reason := "", ""
		judged := false
		rl.ScopeLogs().RemoveIf(func(sl plog.ScopeLogs) bool {
			sl.LogRecords().RemoveIf(func(lr plog.LogRecord) bool {
				attrs := lr.Attributes()
				event := ""
				if v, ok := attrs.Get(accelschema.AttrEventName); ok {
					event = v.AsString()
				}
				if !accelschema.OnHealthPath(event) {
					// Only the check may name a reporter.
					attrs.Remove(accelschema.AttrHealthReporter)
					return false
				}
				if !judged {
					reporter, reason = p.verdict(s, res)
					judged = true
				}
				if reason != "" {
					p.dropped(ctx, s, res, "logs", reason, 1, event)
					return true
				}
				attrs.PutStr(accelschema.AttrHealthReporter, reporter)
				return false
			})
			return sl.LogRecords().Len() == 0
		})
		return rl.ScopeLogs().Len() == 0
	})
	return ld, nil
}

// processMetrics drops device resources (hw.id) their sender may not speak
// for; resources that are not a device's pass.
func (p *senderProcessor) processMetrics(ctx context.Context, md pmetric.Metrics) (pmetric.Metrics, error) {
	s := senderOf(ctx)
	md.ResourceMetrics().RemoveIf(func(rm pmetric.ResourceMetrics) bool {
		res := rm.Resource().Attributes()
		if _, device := res.Get(accelschema.AttrHWID); !device {
			return false
		}
		if _, reason := p.verdict(s, res); reason != "" {
			points := 0
			sms := rm.ScopeMetrics()
			for i := 0; i < sms.Len(); i++ {
				ms := sms.At(i).Metrics()
				for j := 0; j < ms.Len(); j++ {
					points += pmetricutil.PointCount(ms.At(j))
				}
			}
			p.dropped(ctx, s, res, "metrics", reason, points, "")
			return true
		}
		return false
	})
	return md, nil
}

func (p *senderProcessor) dropped(ctx context.Context, s sender, res interface{ AsRaw() map[string]any }, signal, reason string, n int, event string) {
	p.telemetry.ProcessorAcceleratorSenderDropped.Add(ctx, int64(n),
		metric.WithAttributes(attribute.String("reason", reason), attribute.String("signal", signal)))
	who := "(no identity)"
	if s.authenticated {
		who = s.id.String()
	}
	raw := res.AsRaw()
	fields := []zap.Field{
		zap.String("reason", reason), zap.String("signal", signal), zap.String("sender", who),
		zap.Any("node", raw[accelschema.AttrK8sNodeName]), zap.Any("device", raw[accelschema.AttrHWID]), zap.Int("items", n),
	}
	if event != "" {
		fields = append(fields, zap.String("event", event))
	}
	p.rlog.Warn(signal+"/"+reason+"/"+who, "accelerator_sender: dropped data its sender may not speak for", fields...)
}
