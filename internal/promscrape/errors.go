package promscrape

import (
	"errors"
	"fmt"
	"strings"
)

// Why a line was skipped. A LineError wraps one of these; compare with
// errors.Is.
var (
	ErrNoName          = errors.New("metric name expected")
	ErrNamedTwice      = errors.New("metric named twice")
	ErrLabelName       = errors.New("label name expected")
	ErrLabelEquals     = errors.New("'=' expected after the label name")
	ErrLabelNotQuoted  = errors.New(`label value is not quoted`)
	ErrLabelValueOpen  = errors.New(`label value is not closed with '"'`)
	ErrLabelSetOpen    = errors.New("label set is not closed with '}'")
	ErrLabelSeparator  = errors.New("',' or '}' expected in the label set")
	ErrNoValue         = errors.New("value expected after the series")
	ErrValue           = errors.New("value is not a number")
	ErrTimestamp       = errors.New("timestamp is not a number")
	ErrTrailing        = errors.New("unexpected text after the value and timestamp")
	ErrLineTooLong     = errors.New("line is too long")
	errUnterminatedKey = errors.New(`quoted name is not closed with '"'`)
	errAbsent          = errors.New("the value is one of the absent words")

	// Why an OpenMetrics exemplar was dropped; its sample is kept.
	ErrExemplarLabels   = errors.New("exemplar: '{' expected after '#'")
	ErrExemplarName     = errors.New("exemplar: a metric name is not allowed in its label set")
	ErrExemplarTooLong  = fmt.Errorf("exemplar: label names and values longer than %d UTF-8 characters", MaxExemplarRunes)
	ErrExemplarValue    = errors.New("exemplar: value is missing or not a number")
	ErrExemplarTime     = errors.New("exemplar: timestamp is not a number")
	ErrExemplarTrailing = errors.New("exemplar: unexpected text after its value and timestamp")
	ErrExemplarPlace    = errors.New("exemplar on a sample that may not carry one (only counters' _total and histograms' _bucket)")
)

// LineError is a line that was skipped: where, why, and what it said.
type LineError struct {
	Line   int    // from 1
	Column int    // byte in the line where reading stopped, from 1; 0 for the whole line
	Err    error  // one of the Err… values above, or the caller's own
	Text   string // the line, shortened to maxExcerpt bytes
}

func (e LineError) Error() string {
	if e.Column > 0 {
		return fmt.Sprintf("line %d, column %d: %v: %q", e.Line, e.Column, e.Err, e.Text)
	}
	return fmt.Sprintf("line %d: %v: %q", e.Line, e.Err, e.Text)
}

func (e LineError) Unwrap() error { return e.Err }

// maxExcerpt bounds the text of a line quoted in a LineError.
const maxExcerpt = 120

// excerpt is a copy, never a substring: a LineError outlives the text it
// quotes, which a scraper reuses (promscrape Client.FetchReusing reads the
// next page into the same buffer).
func excerpt[T Text](line T) string {
	if len(line) > maxExcerpt {
		return string(line[:maxExcerpt]) + "…"
	}
	if s, ok := any(line).(string); ok {
		return strings.Clone(s)
	}
	return string(line) // converting bytes copies them
}

// Errors keeps the first Max line errors of a page and counts them all, so
// that a page of garbage cannot make a receiver hold one error per line.
type Errors struct {
	Max   int
	First []LineError
	Count int
}

// Add counts e and keeps it while fewer than Max are kept.
func (e *Errors) Add(le LineError) {
	e.Count++
	if len(e.First) < e.Max {
		e.First = append(e.First, le)
	}
}

// Full reports whether Add would only count: callers skip building a
// LineError's text then.
func (e *Errors) Full() bool { return len(e.First) >= e.Max }

// Dropped is how many were counted but not kept.
func (e *Errors) Dropped() int { return e.Count - len(e.First) }
