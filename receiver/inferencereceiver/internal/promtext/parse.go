// Package promtext reads the Prometheus text exposition format (0.0.4, and the
// sample lines of OpenMetrics 1.0) as inference servers serve it.
//
// It is deliberately forgiving: a line it cannot read is reported with its
// line number and skipped, and every other sample is kept. The upstream
// expfmt parser stops at the first bad line, which would throw away a whole
// scrape because of one broken label.
package promtext // import "github.com/otelcol-accel/otelcol-accel/receiver/inferencereceiver/internal/promtext"

import (
	"fmt"
	"strconv"
	"strings"
)

// Label is one name="value" pair of a sample.
type Label struct {
	Name  string
	Value string
}

// Sample is one line of exposition: a series and its value. Names and label
// values are substrings of the parsed document; clone them before keeping
// them past the document's lifetime.
type Sample struct {
	Name   string
	Labels []Label
	Value  float64
	Line   int
}

// Label returns the value of the named label and whether it is present.
func (s *Sample) Label(name string) (string, bool) {
	for _, l := range s.Labels {
		if l.Name == name {
			return l.Value, true
		}
	}
	return "", false
}

// LineError says which line could not be read and why.
type LineError struct {
	Line   int
	Reason string
	Text   string // the line, shortened
}

func (e LineError) Error() string {
	return fmt.Sprintf("line %d: %s: %q", e.Line, e.Reason, e.Text)
}

// Document is the result of parsing one scrape.
type Document struct {
	Samples []Sample
	// Errors lists the lines that were skipped, at most MaxErrors of them;
	// ErrorCount counts all of them.
	Errors     []LineError
	ErrorCount int
	// Lines is the number of lines read.
	Lines int
}

// MaxErrors bounds the LineErrors a Document keeps, so a scrape of garbage
// cannot make the receiver hold one error per line.
const MaxErrors = 16

const maxExcerpt = 120

// Parse reads an exposition document. It never fails: unreadable lines are
// recorded in Document.Errors and skipped.
func Parse(text string) Document {
	// Sized from cheap upper bounds so the arrays never grow: one backing
	// array for all labels keeps allocations per scrape flat.
	doc := Document{Samples: make([]Sample, 0, strings.Count(text, "\n")+1)}
	labels := make([]Label, 0, strings.Count(text, "=\""))
	lineNo := 0
	for len(text) > 0 {
		var line string
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			line, text = text, ""
		}
		lineNo++
		line = strings.TrimSuffix(line, "\r")
		trimmed := trimBlank(line)
		if trimmed == "" || trimmed[0] == '#' {
			continue
		}
		start := len(labels)
		s, ls, reason := parseSample(trimmed, labels)
		if reason != "" {
			labels = labels[:start]
			doc.addError(lineNo, reason, line)
			continue
		}
		labels = ls
		s.Labels = labels[start:len(labels):len(labels)]
		s.Line = lineNo
		doc.Samples = append(doc.Samples, s)
	}
	doc.Lines = lineNo
	return doc
}

func (d *Document) addError(line int, reason, text string) {
	d.ErrorCount++
	if len(d.Errors) >= MaxErrors {
		return
	}
	if len(text) > maxExcerpt {
		text = text[:maxExcerpt] + "…"
	}
	d.Errors = append(d.Errors, LineError{Line: line, Reason: reason, Text: text})
}

// parseSample reads `name{l="v",...} value [timestamp] [# exemplar]`, or the
// UTF-8 form `{"name",l="v"} value`. It appends labels to buf and returns it.
func parseSample(line string, buf []Label) (Sample, []Label, string) {
	var s Sample
	rest := line
	if rest[0] != '{' {
		n := metricNameLen(rest)
		if n == 0 {
			return s, buf, "metric name expected"
		}
		s.Name, rest = rest[:n], rest[n:]
		if trimBlank(rest) != "" && trimBlank(rest)[0] == '{' {
			rest = trimBlank(rest)
		}
	}
	if len(rest) > 0 && rest[0] == '{' {
		var reason string
		var quotedName string
		buf, quotedName, rest, reason = parseLabels(rest[1:], buf)
		if reason != "" {
			return s, buf, reason
		}
		if quotedName != "" {
			if s.Name != "" {
				return s, buf, "metric named twice"
			}
			s.Name = quotedName
		}
		if s.Name == "" {
			return s, buf, "metric name expected"
		}
	}
	afterLabels := len(rest) < len(line) && line[len(line)-len(rest)-1] == '}'
	if len(rest) == 0 || (rest[0] != ' ' && rest[0] != '\t' && !afterLabels) {
		return s, buf, "space and value expected after the series"
	}
	rest = trimBlank(rest)
	if rest == "" {
		return s, buf, "space and value expected after the series"
	}
	end := strings.IndexAny(rest, " \t")
	valueText := rest
	if end >= 0 {
		valueText = rest[:end]
		if reason := checkTrailer(rest[end:]); reason != "" {
			return s, buf, reason
		}
	}
	v, err := strconv.ParseFloat(valueText, 64)
	if err != nil {
		return s, buf, "value is not a number"
	}
	s.Value = v
	return s, buf, ""
}

// checkTrailer accepts an optional timestamp and an optional OpenMetrics
// exemplar after the value. Timestamps are ignored: the receiver stamps
// points with its own scrape time, as Prometheus does by default.
func checkTrailer(t string) string {
	t = trimBlank(t)
	if t == "" || t[0] == '#' {
		return ""
	}
	end := strings.IndexAny(t, " \t")
	ts := t
	if end >= 0 {
		ts = t[:end]
		rest := trimBlank(t[end:])
		if rest != "" && rest[0] != '#' {
			return "unexpected text after the timestamp"
		}
	}
	if _, err := strconv.ParseFloat(ts, 64); err != nil {
		return "timestamp is not a number"
	}
	return ""
}

// parseLabels reads from just after '{' to just after '}'. It returns the
// labels appended to buf, the metric name if the set carried one (UTF-8
// form), what follows the '}', and a reason when the set is unreadable.
func parseLabels(s string, buf []Label) ([]Label, string, string, string) {
	var quotedName string
	for {
		s = trimBlank(s)
		if s == "" {
			return buf, "", "", "unterminated label set"
		}
		if s[0] == '}' {
			return buf, quotedName, s[1:], ""
		}
		l, isName, rest, reason := parseLabelPair(s)
		if reason != "" {
			return buf, "", "", reason
		}
		if isName {
			if quotedName != "" {
				return buf, "", "", "metric named twice"
			}
			quotedName = l.Value
		} else {
			buf = append(buf, l)
		}
		s = trimBlank(rest)
		if s == "" {
			return buf, "", "", "unterminated label set"
		}
		switch s[0] {
		case ',':
			s = s[1:]
		case '}':
		default:
			return buf, "", "", "',' or '}' expected in label set"
		}
	}
}

// parseLabelPair reads `name="value"`, `"name"="value"`, or a lone quoted
// metric name (isName).
func parseLabelPair(s string) (l Label, isName bool, rest string, reason string) {
	if s[0] == '"' {
		v, r, ok := readQuoted(s[1:])
		if !ok {
			return l, false, "", "unterminated quoted name"
		}
		r = trimBlank(r)
		if r == "" || r[0] != '=' {
			return Label{Value: v}, true, r, ""
		}
		l.Name, s = v, r
	} else {
		n := labelNameLen(s)
		if n == 0 {
			return l, false, "", "label name expected"
		}
		l.Name, s = s[:n], trimBlank(s[n:])
	}
	if s == "" || s[0] != '=' {
		return l, false, "", "'=' expected after label " + strconv.Quote(l.Name)
	}
	s = trimBlank(s[1:])
	if s == "" || s[0] != '"' {
		return l, false, "", "quoted value expected for label " + strconv.Quote(l.Name)
	}
	v, r, ok := readQuoted(s[1:])
	if !ok {
		return l, false, "", "unterminated value of label " + strconv.Quote(l.Name)
	}
	l.Value = v
	return l, false, r, ""
}

// readQuoted reads up to the closing quote, undoing \\, \" and \n escapes.
// Values without escapes are returned as substrings, without allocating.
func readQuoted(s string) (string, string, bool) {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			return s[:i], s[i+1:], true
		case '\\':
			return unescape(s)
		}
	}
	return "", "", false
}

func unescape(s string) (string, string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			return b.String(), s[i+1:], true
		case '\\':
			if i+1 >= len(s) {
				return "", "", false
			}
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case '\\', '"':
				b.WriteByte(s[i])
			default:
				// Prometheus keeps unknown escapes as written.
				b.WriteByte('\\')
				b.WriteByte(s[i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", "", false
}

// metricNameLen returns the length of the metric name at the start of s:
// [a-zA-Z_:][a-zA-Z0-9_:]*.
func metricNameLen(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || c == ':' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (i > 0 && c >= '0' && c <= '9') {
			continue
		}
		return i
	}
	return len(s)
}

// labelNameLen returns the length of the label name at the start of s:
// [a-zA-Z_][a-zA-Z0-9_]*.
func labelNameLen(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (i > 0 && c >= '0' && c <= '9') {
			continue
		}
		return i
	}
	return len(s)
}

// trimBlank drops leading spaces and tabs.
func trimBlank(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] != ' ' && s[i] != '\t' {
			return s[i:]
		}
	}
	return ""
}
