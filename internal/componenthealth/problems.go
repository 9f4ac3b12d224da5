package componenthealth

import (
	"slices"
	"strings"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
)

// Problems holds what is broken in one component, by source, and reports
// the aggregate as the component's status: RecoverableError naming every
// broken source, OK once none is. It reports only when the aggregate
// changes, and is safe for concurrent use.
//
// Every problem is recoverable: a component that cannot run at all returns
// the error from Start instead.
//
// The collector reports Starting before a component's Start and OK after it
// when the component said nothing else, so Problems begins at OK and says
// nothing until a source breaks. Problems recorded before Start are
// reported when Start hands over the host; nothing is reported after
// Shutdown.
type Problems struct {
	summary     string
	sourcesOnly bool
	bare        bool

	mu       sync.Mutex
	host     component.Host
	holds    int
	problems map[string]error
	reported string // signature of the last aggregate reported; "" is OK
}

// Option configures Problems.
type Option func(*Problems)

// WithSummary starts the status error with summary ("accelerator_attributes
// degraded: …").
func WithSummary(summary string) Option {
	return func(p *Problems) { p.summary = summary }
}

// ReportSourceChangesOnly makes a source that stays broken with a different
// error no new report by itself: its latest error shows in the next report
// that is due because a source broke or recovered. For errors that differ
// on every attempt (a request id, a duration).
func ReportSourceChangesOnly() Option {
	return func(p *Problems) { p.sourcesOnly = true }
}

// SourcesNamedInErrors is for components whose errors already say what
// failed ("dcgm-exporter at http://…/metrics is not reachable: …"): the
// status error is those errors alone, without "source: " before each.
func SourcesNamedInErrors() Option {
	return func(p *Problems) { p.bare = true }
}

// NewProblems returns an empty set: the component is OK.
func NewProblems(opts ...Option) *Problems {
	p := &Problems{problems: map[string]error{}}
	for _, o := range opts {
		o(p)
	}
	return p
}

// Start gives the host to report to, and reports what broke before it.
func (p *Problems) Start(host component.Host) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.host = host
	p.reportLocked()
}

// Shutdown stops reporting: the collector has taken the component's status
// over (Stopping, Stopped).
func (p *Problems) Shutdown() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.host = nil
}

// Fail records that source is broken because of err (a nil err is Clear).
// It returns true when source was working, or broken for another reason:
// the caller's cue to log at once rather than rate-limited.
func (p *Problems) Fail(source string, err error) bool {
	if err == nil {
		return p.Clear(source)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	prev, was := p.problems[source]
	p.problems[source] = err
	p.reportLocked()
	return !was || prev.Error() != err.Error()
}

// Clear records that source works. It returns true when it was broken: the
// caller's cue to log the recovery.
func (p *Problems) Clear(source string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, was := p.problems[source]
	delete(p.problems, source)
	p.reportLocked()
	return was
}

// Reporter returns source's "report my state" callback, the shape a
// source takes in its settings: nil clears, an error fails.
func (p *Problems) Reporter(source string) func(error) {
	return func(err error) { p.Fail(source, err) }
}

// Failing reports whether source is broken.
func (p *Problems) Failing(source string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.problems[source]
	return ok
}

// Hold delays reports until release is called, so that a pass over every
// source (a refresh, a scrape of every target) becomes one report of where
// it ended, not one per source. Holds nest; release may be called more than
// once.
func (p *Problems) Hold() (release func()) {
	p.mu.Lock()
	p.holds++
	p.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			p.holds--
			p.reportLocked()
		})
	}
}

// Err is the aggregate: nil when nothing is broken, else an *Error.
func (p *Problems) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.errLocked()
}

func (p *Problems) errLocked() error {
	if e := p.aggregateLocked(); e != nil {
		return e
	}
	return nil
}

func (p *Problems) aggregateLocked() *Error {
	if len(p.problems) == 0 {
		return nil
	}
	e := &Error{Summary: p.summary, Bare: p.bare, Problems: make([]Problem, 0, len(p.problems))}
	for source, err := range p.problems {
		e.Problems = append(e.Problems, Problem{Source: source, Err: err})
	}
	slices.SortFunc(e.Problems, func(a, b Problem) int { return strings.Compare(a.Source, b.Source) })
	return e
}

// reportLocked reports the aggregate when it differs from the last one
// reported. It runs under mu so that reports reach the host in the order
// their states were reached.
func (p *Problems) reportLocked() {
	if p.host == nil || p.holds > 0 {
		return
	}
	e := p.aggregateLocked()
	sig := ""
	if e != nil {
		sig = p.signature(e)
	}
	if sig == p.reported {
		return
	}
	p.reported = sig
	if e == nil {
		componentstatus.ReportStatus(p.host, componentstatus.NewEvent(componentstatus.StatusOK))
		return
	}
	componentstatus.ReportStatus(p.host, componentstatus.NewRecoverableErrorEvent(e))
}

// signature is what a change of the aggregate is judged by; never empty
// when something is broken.
func (p *Problems) signature(e *Error) string {
	var b strings.Builder
	for _, pr := range e.Problems {
		b.WriteString(pr.Source)
		b.WriteByte(0)
		if !p.sourcesOnly {
			b.WriteString(pr.Err.Error())
		}
		b.WriteByte(0)
	}
	return b.String()
}

// Problem is one broken source.
type Problem struct {
	Source string
	Err    error
}

// Error is the status error of a component with broken sources, in source
// order: "summary: source A: error; source B: error". errors.Is and
// errors.As see every source's error.
type Error struct {
	Summary  string
	Problems []Problem
	// Bare leaves the source names out of the text (SourcesNamedInErrors).
	Bare bool
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Summary != "" {
		b.WriteString(e.Summary)
		b.WriteString(": ")
	}
	for i, pr := range e.Problems {
		if i > 0 {
			b.WriteString("; ")
		}
		if !e.Bare {
			b.WriteString(pr.Source)
			b.WriteString(": ")
		}
		b.WriteString(pr.Err.Error())
	}
	return b.String()
}

// Unwrap returns every source's error.
func (e *Error) Unwrap() []error {
	errs := make([]error, len(e.Problems))
	for i, pr := range e.Problems {
		errs[i] = pr.Err
	}
	return errs
}

var _ interface{ Unwrap() []error } = (*Error)(nil)
