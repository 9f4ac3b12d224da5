package inferencereceiver // import "github.com/otelcol-accel/otelcol-accel/receiver/inferencereceiver"

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.uber.org/zap"
)

// health turns per-target outcomes into component status and into log lines
// that repeat at most once per interval: an unreachable target is one error
// when it fails, a reminder every interval while it stays down, and one info
// line when it recovers.
type health struct {
	logger   *zap.Logger
	interval time.Duration

	failing map[string]*failure // by problem key (target id, "kubernetes")
	// notes throttles warnings about input that was skipped.
	notes map[string]time.Time

	reported string // failing keys and reasons last reported as status
}

type failure struct {
	what     string // the endpoint, or the API
	reason   string
	since    time.Time
	logged   time.Time
	attempts int
}

func newHealth(logger *zap.Logger, interval time.Duration) *health {
	return &health{logger: logger, interval: interval, failing: map[string]*failure{}, notes: map[string]time.Time{}}
}

// fail records that key is down for reason.
func (h *health) fail(key, what, reason string, now time.Time, fields ...zap.Field) {
	f := h.failing[key]
	if f == nil {
		f = &failure{what: what, since: now}
		h.failing[key] = f
	}
	f.attempts++
	f.reason = reason
	if f.attempts == 1 || now.Sub(f.logged) >= h.interval {
		f.logged = now
		msg := "Inference server cannot be scraped; other targets are still scraped, this one is retried every collection interval"
		if f.attempts > 1 {
			msg = "Inference server still cannot be scraped"
		}
		h.logger.Error(msg, append(fields,
			zap.String("target", what),
			zap.String("reason", reason),
			zap.Int("failed_scrapes", f.attempts),
			zap.Duration("failing_for", now.Sub(f.since)))...)
	}
}

// ok records that key works; it logs the recovery of a failing one.
func (h *health) ok(key string, now time.Time) {
	f := h.failing[key]
	if f == nil {
		return
	}
	delete(h.failing, key)
	h.logger.Info("Inference server scraped again", zap.String("target", f.what),
		zap.Int("failed_scrapes", f.attempts), zap.Duration("was_failing_for", now.Sub(f.since)))
}

// forget drops a problem whose subject went away (a pod that was deleted).
func (h *health) forget(key string) {
	delete(h.failing, key)
	for k := range h.notes {
		if k == key || strings.HasPrefix(k, key+"\x00") {
			delete(h.notes, k)
		}
	}
}

// note logs a warning about skipped input, at most once per interval per
// key and kind.
func (h *health) note(key, kind string, now time.Time, msg string, fields ...zap.Field) {
	k := key + "\x00" + kind
	if last, ok := h.notes[k]; ok && now.Sub(last) < h.interval {
		return
	}
	h.notes[k] = now
	h.logger.Warn(msg, fields...)
}

// report sends the component's status when the set of failing targets
// changed: RecoverableError naming each with its reason, or OK once all
// recover. A reason that changes while its target stays down does not cause
// a new report.
func (h *health) report(host component.Host, now time.Time) {
	// A note older than the interval would be logged again anyway; dropping
	// it keeps the map from growing with pods that came and went.
	for k, at := range h.notes {
		if now.Sub(at) >= h.interval {
			delete(h.notes, k)
		}
	}
	keys := make([]string, 0, len(h.failing))
	for k := range h.failing {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var sig strings.Builder
	errs := make([]error, 0, len(keys))
	for _, k := range keys {
		f := h.failing[k]
		sig.WriteString(k)
		sig.WriteByte(0)
		errs = append(errs, fmt.Errorf("%s: %s", f.what, f.reason))
	}
	if sig.String() == h.reported || host == nil {
		return
	}
	h.reported = sig.String()
	if len(errs) == 0 {
		componentstatus.ReportStatus(host, componentstatus.NewEvent(componentstatus.StatusOK))
		return
	}
	componentstatus.ReportStatus(host, componentstatus.NewRecoverableErrorEvent(errors.Join(errs...)))
}
