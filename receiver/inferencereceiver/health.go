package inferencereceiver // import "github.com/otelcol-accel/otelcol-accel/receiver/inferencereceiver"

import (
	"fmt"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.uber.org/zap"

	"github.com/otelcol-accel/otelcol-accel/internal/componenthealth"
)

// health turns per-target outcomes into component status and into log lines
// that repeat at most once per interval: an unreachable target is one error
// when it fails, a reminder every interval while it stays down, and one info
// line when it recovers.
//
// It is used by the scrape loop only; the times it is given are the
// scraper's clock.
type health struct {
	logger *zap.Logger
	log    *componenthealth.Logger
	// status is by problem key (target id, "kubernetes"), each error
	// "what: reason". A reason that changes while its target stays down
	// does not cause a new report.
	status  *componenthealth.Problems
	started bool
	// release ends the hold that gathers a scrape's outcomes into one report.
	release func()

	failing map[string]*failure // by problem key
	at      time.Time           // the scraper's now, the log limiter's clock
}

type failure struct {
	what     string // the endpoint, or the API
	since    time.Time
	attempts int
}

func newHealth(logger *zap.Logger, interval time.Duration) *health {
	h := &health{
		logger:  logger,
		log:     componenthealth.NewLogger(logger, interval),
		status:  componenthealth.NewProblems(componenthealth.SourcesNamedInErrors(), componenthealth.ReportSourceChangesOnly()),
		failing: map[string]*failure{},
	}
	h.log.SetClock(func() time.Time { return h.at })
	h.release = h.status.Hold()
	return h
}

// fail records that key is down for reason.
func (h *health) fail(key, what, reason string, now time.Time, fields ...zap.Field) {
	h.at = now
	f := h.failing[key]
	if f == nil {
		f = &failure{what: what, since: now}
		h.failing[key] = f
	}
	f.attempts++
	h.status.Fail(key, fmt.Errorf("%s: %s", what, reason))
	msg := "Inference server cannot be scraped; other targets are still scraped, this one is retried every collection interval"
	if f.attempts > 1 {
		msg = "Inference server still cannot be scraped"
	}
	h.log.Error(key+"\x00down", msg, append(fields,
		zap.String("target", what),
		zap.String("reason", reason),
		zap.Int("failed_scrapes", f.attempts),
		zap.Duration("failing_for", now.Sub(f.since)))...)
}

// ok records that key works; it logs the recovery of a failing one.
func (h *health) ok(key string, now time.Time) {
	f := h.failing[key]
	if f == nil {
		return
	}
	delete(h.failing, key)
	h.status.Clear(key)
	h.log.Reset(key + "\x00down")
	h.logger.Info("Inference server scraped again", zap.String("target", f.what),
		zap.Int("failed_scrapes", f.attempts), zap.Duration("was_failing_for", now.Sub(f.since)))
}

// forget drops a problem whose subject went away (a pod that was deleted).
func (h *health) forget(key string) {
	delete(h.failing, key)
	h.status.Clear(key)
	h.log.ResetPrefix(key + "\x00")
}

// note logs a warning about skipped input, at most once per interval per
// key and kind.
func (h *health) note(key, kind string, now time.Time, msg string, fields ...zap.Field) {
	h.at = now
	h.log.Warn(key+"\x00"+kind, msg, fields...)
}

// report sends the component's status when the set of failing targets
// changed since the last report: RecoverableError naming each with its
// reason, or OK once all recover.
func (h *health) report(host component.Host) {
	if host == nil {
		return
	}
	if !h.started {
		h.started = true
		h.status.Start(host)
	}
	h.release()
	h.release = h.status.Hold()
}
