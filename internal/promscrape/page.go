package promscrape

import (
	"cmp"
	"slices"
	"strings"
)

// Page is one parsed page.
type Page struct {
	// Samples are the sample lines that could be read, in page order.
	// Their names and label values are substrings of the page (values
	// with escapes are copies); their labels share one array.
	Samples []Sample[string]
	// Errors are the lines skipped, the first MaxErrors of them kept.
	Errors Errors
	// Lines is the number of lines in the page.
	Lines int
	// Absent counts the samples left out for a value of
	// ParseOptions.AbsentValues.
	Absent int

	// Exemplars are the exemplars read (ParseOptions.OpenMetrics), in
	// page order, each with the index of its sample in Samples.
	Exemplars []PageExemplar
	// ExemplarErrors are the exemplars dropped for being unreadable or
	// misplaced, the first MaxErrors of them kept; their samples are in
	// Samples.
	ExemplarErrors Errors

	// labels is the array the samples' labels share, and types the
	// families' map, kept for ParseInto.
	labels []Label[string]
	types  map[string]MetricType
}

// PageExemplar is an exemplar and the sample it follows.
type PageExemplar struct {
	Sample int // index in Page.Samples
	Exemplar[string]
}

// Exemplar returns the exemplar of Samples[i].
func (pg *Page) Exemplar(i int) (Exemplar[string], bool) {
	if i < 0 || i >= len(pg.Samples) || !pg.Samples[i].HasExemplar {
		return Exemplar[string]{}, false
	}
	n, ok := slices.BinarySearchFunc(pg.Exemplars, i, func(e PageExemplar, i int) int { return cmp.Compare(e.Sample, i) })
	if !ok {
		return Exemplar[string]{}, false
	}
	return pg.Exemplars[n].Exemplar, true
}

// MaxErrors is how many line errors a Page keeps.
const MaxErrors = 16

// ParseOptions change what Parse takes for a sample.
type ParseOptions struct {
	// AbsentValues are words an exporter writes where a sample has no
	// value (prometheus_client prints Python's None): such lines are left
	// out without an error, and counted in Page.Absent.
	AbsentValues []string
	// OpenMetrics reads the exemplars of the page (IsOpenMetrics of its
	// Content-Type); without it they are passed over unread.
	OpenMetrics bool
}

// Parse reads a whole page. It never fails: a line it cannot read is
// recorded in Errors and skipped, and the rest is kept.
func Parse(text string) Page { return ParseOptions{}.Parse(text) }

// Parse reads a whole page as the options say.
func (o ParseOptions) Parse(text string) Page {
	var pg Page
	o.ParseInto(&pg, text)
	return pg
}

// ParseInto reads a whole page into pg, reusing the arrays of the page pg
// held before: a scraper that reads the same endpoint every interval
// allocates them once, not per scrape. What pg held is overwritten; the
// caller must keep none of its samples (their strings, which point into
// the old text, stay valid). The errors' texts are copies, free of text.
func (o ParseOptions) ParseInto(pg *Page, text string) {
	samples, labels, exemplars, types := pg.Samples[:0], pg.labels[:0], pg.Exemplars[:0], pg.types
	errs, exErrs := pg.Errors.First[:0], pg.ExemplarErrors.First[:0]
	// A first page is sized from cheap upper bounds so that neither
	// array grows; later ones grow only if the page did.
	if cap(samples) == 0 {
		samples = make([]Sample[string], 0, strings.Count(text, "\n")+1)
		labels = make([]Label[string], 0, strings.Count(text, "="))
	}
	clear(types)
	*pg = Page{
		Samples:        samples,
		Errors:         Errors{Max: MaxErrors, First: errs},
		ExemplarErrors: Errors{Max: MaxErrors, First: exErrs},
		Exemplars:      exemplars,
	}
	p := lineParser[string]{labels: labels, absent: o.AbsentValues, openMetrics: o.OpenMetrics}
	p.families.types = types
	var (
		s   Sample[string]
		res lineResult[string]
	)
	for len(text) > 0 {
		line := text
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			text = ""
		}
		pg.Lines++
		p.scratch = p.scratch[:0]
		switch p.parse(line, &s, &res) {
		case lineSample:
			s.Line = pg.Lines
			pg.Samples = append(pg.Samples, s)
			if s.HasExemplar {
				pg.Exemplars = append(pg.Exemplars, PageExemplar{Sample: len(pg.Samples) - 1, Exemplar: p.ex})
			} else if p.exErr != nil {
				le := LineError{Line: pg.Lines, Column: p.exCol + 1, Err: p.exErr}
				if !pg.ExemplarErrors.Full() {
					le.Text = excerpt(strings.TrimRight(line, "\r"))
				}
				pg.ExemplarErrors.Add(le)
			}
		case lineAbsent:
			pg.Absent++
		case lineInvalid:
			le := LineError{Line: pg.Lines, Column: res.col + 1, Err: res.err}
			if !pg.Errors.Full() {
				le.Text = excerpt(strings.TrimRight(line, "\r"))
			}
			pg.Errors.Add(le)
		}
	}
	pg.labels, pg.types = p.labels, p.families.types
	// The old page's strings (and errors) must not stay reachable through
	// the arrays beyond what this page wrote; what it wrote replaced them.
	clearTail(pg.Samples)
	clearTail(pg.labels)
	clearTail(pg.Exemplars)
	clearTail(pg.Errors.First)
	clearTail(pg.ExemplarErrors.First)
}

// clearTail zeroes s's array from len(s) to cap(s).
func clearTail[T any](s []T) { clear(s[len(s):cap(s)]) }
