// Package promparse reads a Prometheus text exposition page (format 0.0.4,
// as prometheus_client serves it) with github.com/prometheus/common/expfmt,
// without letting one bad line cost the whole page.
//
// expfmt stops at the first line it cannot read. Parse splits the page into
// one block per metric family and, when a block has a bad line, keeps the
// lines before it, records the line (number, reason, text) and parses on
// from the line after it; every other sample is kept.
package promparse

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// LineError is one line that could not be read.
type LineError struct {
	Line   int    // 1-based line number in the page
	Reason string // what expfmt found wrong
	Text   string // the line, shortened
}

func (e LineError) Error() string { return fmt.Sprintf("line %d: %s: %q", e.Line, e.Reason, e.Text) }

// Page is one parsed page.
type Page struct {
	// Families are the metric families by name, with the samples of every
	// line that could be read.
	Families map[string]*dto.MetricFamily
	// Errors are the first MaxErrors lines skipped; ErrorCount counts them
	// all. Samples whose value is Python's None (an exporter printing a
	// missing value) are skipped without an error.
	Errors     []LineError
	ErrorCount int
	// GaveUpAt is the line from which the page was not read because it had
	// more than MaxBadLines bad lines (0: the whole page was read).
	GaveUpAt int
	// Lines is the number of lines in the page.
	Lines int
}

const (
	// MaxErrors bounds the LineErrors a Page keeps.
	MaxErrors = 8
	// MaxBadLines bounds the work spent on a page that is mostly not in the
	// format (each bad line costs a re-parse of the rest of its block).
	MaxBadLines = 256
	maxExcerpt  = 120
)

// Parse reads one page. It never fails: what cannot be read is described
// in the Page.
func Parse(page []byte) Page {
	p := Page{Families: map[string]*dto.MetricFamily{}, Lines: countLines(page)}
	bad := 0
	for _, b := range familyBlocks(page) {
		text, before := b.text, b.line-1 // before: lines of the page ahead of text
		for len(text) > 0 {
			fams, err := parse(text)
			if err == nil {
				p.merge(fams)
				break
			}
			var pe expfmt.ParseError
			if !errors.As(err, &pe) || pe.Line < 1 {
				// Not about a line: the rest of the block is lost.
				p.add(LineError{Line: before + 1, Reason: err.Error(), Text: excerpt(firstLine(text))})
				break
			}
			head, badLine, rest := splitAt(text, pe.Line)
			if fams, err := parse(head); err == nil {
				p.merge(fams)
			}
			if !isNoneValue(badLine) {
				p.add(LineError{Line: before + pe.Line, Reason: pe.Msg, Text: excerpt(badLine)})
			}
			before += pe.Line
			text = rest
			if bad++; bad >= MaxBadLines && len(rest) > 0 {
				p.GaveUpAt = before + 1
				return p
			}
		}
	}
	return p
}

func parse(text []byte) (map[string]*dto.MetricFamily, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(bytes.NewReader(text))
}

// merge adds a block's families. A family split by a bad line comes back
// twice (the part after the line untyped): its samples are appended and
// the declared type kept.
func (p *Page) merge(fams map[string]*dto.MetricFamily) {
	for name, f := range fams {
		have, ok := p.Families[name]
		if !ok {
			p.Families[name] = f
			continue
		}
		if have.GetType() == dto.MetricType_UNTYPED && f.Type != nil {
			have.Type = f.Type
		}
		if have.Help == nil {
			have.Help = f.Help
		}
		have.Metric = append(have.Metric, f.Metric...)
	}
}

func (p *Page) add(e LineError) {
	p.ErrorCount++
	if len(p.Errors) < MaxErrors {
		p.Errors = append(p.Errors, e)
	}
}

type block struct {
	text []byte
	line int // 1-based line number of its first line in the page
}

// familyBlocks splits a page before every HELP or TYPE line that names a
// family other than the one the current block describes, so that a bad line
// costs a re-parse of its own family only.
func familyBlocks(page []byte) []block {
	var blocks []block
	start, startLine, line, current := 0, 1, 1, ""
	for off := 0; off < len(page); line++ {
		next := len(page)
		if end := bytes.IndexByte(page[off:], '\n'); end >= 0 {
			next = off + end + 1
		}
		if name, ok := commentFamily(page[off:next]); ok && name != current {
			if off > start {
				blocks = append(blocks, block{page[start:off], startLine})
			}
			start, startLine, current = off, line, name
		}
		off = next
	}
	if start < len(page) {
		blocks = append(blocks, block{page[start:], startLine})
	}
	return blocks
}

// commentFamily returns the family a `# HELP name …` or `# TYPE name …`
// line describes.
func commentFamily(line []byte) (string, bool) {
	rest, ok := bytes.CutPrefix(line, []byte("# HELP "))
	if !ok {
		if rest, ok = bytes.CutPrefix(line, []byte("# TYPE ")); !ok {
			return "", false
		}
	}
	name, _, _ := bytes.Cut(bytes.TrimRight(rest, "\r\n"), []byte(" "))
	return string(name), len(name) > 0
}

// splitAt returns the lines before line n (1-based), line n, and the lines
// after it.
func splitAt(text []byte, n int) (head []byte, line string, rest []byte) {
	off := 0
	for i := 1; i < n && off < len(text); i++ {
		j := bytes.IndexByte(text[off:], '\n')
		if j < 0 {
			off = len(text)
			break
		}
		off += j + 1
	}
	head = text[:off]
	end := bytes.IndexByte(text[off:], '\n')
	if end < 0 {
		return head, string(text[off:]), nil
	}
	return head, string(text[off : off+end]), text[off+end+1:]
}

// isNoneValue reports a sample line whose value is Python's None: a missing
// value, not a malformed line.
func isNoneValue(line string) bool {
	line = strings.TrimRight(line, " \t\r")
	if line == "" || line[0] == '#' {
		return false
	}
	i := strings.LastIndexAny(line, " \t}")
	return i >= 0 && line[i+1:] == "None"
}

func firstLine(text []byte) string {
	line, _, _ := bytes.Cut(text, []byte("\n"))
	return string(line)
}

func excerpt(s string) string {
	if len(s) > maxExcerpt {
		return s[:maxExcerpt] + "…"
	}
	return s
}

func countLines(b []byte) int {
	n := bytes.Count(b, []byte("\n"))
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}
