package exportersource

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// sampleLine is one parsed sample line of the Prometheus text format. Its
// byte slices point into the line (or into the scratch buffer when a label
// value had escapes) and are valid until the next line is parsed.
type sampleLine struct {
	name   []byte
	labels []labelPair
	value  float64

	scratch []byte
}

type labelPair struct {
	name, value []byte
}

// convertFailed is what dcgm-exporter writes in place of a value it could not
// read from DCGM (a blank field, a field the GPU does not support).
var convertFailed = []byte("ERROR - FAILED TO CONVERT TO STRING")

var (
	errNoName       = errors.New("no metric name")
	errConvert      = errors.New(`dcgm-exporter could not read the field ("ERROR - FAILED TO CONVERT TO STRING")`)
	errNotFinite    = errors.New("value is not a finite number")
	errNoValue      = errors.New("no value after the metric name")
	errLabelsOpen   = errors.New("label set is not closed with '}'")
	errTrailingData = errors.New("unexpected text after the value and timestamp")
)

// parseSampleLine parses `name{label="value",…} value [timestamp]`. It
// accepts dcgm-exporter 2.x label sets, which put a space after commas, as
// well as the compact 3.x/4.x form, and a trailing comma before '}'.
func parseSampleLine(line []byte, s *sampleLine) error {
	s.name, s.labels, s.scratch = nil, s.labels[:0], s.scratch[:0]
	// Unescaped label values are never longer than the line: with this much
	// room, appends to scratch never move it, so values already sliced from
	// it stay valid.
	if cap(s.scratch) < len(line) {
		s.scratch = make([]byte, 0, len(line))
	}
	i := skipSpace(line, 0)
	start := i
	for i < len(line) && isNameChar(line[i], i == start) {
		i++
	}
	if i == start {
		return errNoName
	}
	s.name = line[start:i]
	i = skipSpace(line, i)
	if i < len(line) && line[i] == '{' {
		var err error
		if i, err = parseLabels(line, i+1, s); err != nil {
			return err
		}
	}
	i = skipSpace(line, i)
	if i >= len(line) {
		return errNoValue
	}
	rest := line[i:]
	if bytes.HasPrefix(rest, convertFailed) {
		return errConvert
	}
	end := i
	for end < len(line) && !isSpace(line[end]) {
		end++
	}
	v, err := strconv.ParseFloat(string(line[i:end]), 64)
	if err != nil {
		return fmt.Errorf("value %q is not a number", clip(line[i:]))
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return errNotFinite
	}
	s.value = v
	// An optional integer timestamp may follow; anything else is garbage
	// that says the line was cut or merged with another.
	i = skipSpace(line, end)
	if i < len(line) {
		tsEnd := i
		for tsEnd < len(line) && !isSpace(line[tsEnd]) {
			tsEnd++
		}
		if _, err := strconv.ParseInt(string(line[i:tsEnd]), 10, 64); err != nil || skipSpace(line, tsEnd) != len(line) {
			return errTrailingData
		}
	}
	return nil
}

func parseLabels(line []byte, i int, s *sampleLine) (int, error) {
	for {
		i = skipSpace(line, i)
		if i >= len(line) {
			return i, errLabelsOpen
		}
		if line[i] == '}' {
			return i + 1, nil
		}
		start := i
		for i < len(line) && isNameChar(line[i], i == start) && line[i] != ':' {
			i++
		}
		if i == start {
			return i, fmt.Errorf("label name expected at column %d, found %q", i+1, clip(line[i:]))
		}
		name := line[start:i]
		i = skipSpace(line, i)
		if i >= len(line) || line[i] != '=' {
			return i, fmt.Errorf("label %q has no '='", name)
		}
		i = skipSpace(line, i+1)
		if i >= len(line) || line[i] != '"' {
			return i, fmt.Errorf("label %q: value is not quoted", name)
		}
		value, next, err := parseQuoted(line, i+1, s)
		if err != nil {
			return next, fmt.Errorf("label %q: %w", name, err)
		}
		s.labels = append(s.labels, labelPair{name: name, value: value})
		i = skipSpace(line, next)
		if i < len(line) && line[i] == ',' {
			i++
			continue
		}
		if i < len(line) && line[i] == '}' {
			return i + 1, nil
		}
		return i, errLabelsOpen
	}
}

// parseQuoted reads a label value up to its closing quote, resolving the
// three escapes the format defines.
func parseQuoted(line []byte, i int, s *sampleLine) ([]byte, int, error) {
	start := i
	for i < len(line) && line[i] != '"' && line[i] != '\\' {
		i++
	}
	if i < len(line) && line[i] == '"' {
		return line[start:i], i + 1, nil
	}
	// Escapes: copy the value into scratch.
	off := len(s.scratch)
	s.scratch = append(s.scratch, line[start:i]...)
	for i < len(line) {
		switch c := line[i]; c {
		case '"':
			return s.scratch[off:len(s.scratch):len(s.scratch)], i + 1, nil
		case '\\':
			if i+1 >= len(line) {
				return nil, i, errors.New("value ends in a lone backslash")
			}
			switch line[i+1] {
			case 'n':
				s.scratch = append(s.scratch, '\n')
			case '\\', '"':
				s.scratch = append(s.scratch, line[i+1])
			default:
				return nil, i, fmt.Errorf("unknown escape \\%c", line[i+1])
			}
			i += 2
		default:
			s.scratch = append(s.scratch, c)
			i++
		}
	}
	return nil, i, errors.New("value is not closed with '\"'")
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' }

func isNameChar(c byte, first bool) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_', c == ':':
		return true
	case c >= '0' && c <= '9':
		return !first
	}
	return false
}

// clip shortens text quoted in an error message.
func clip(b []byte) string {
	const max = 60
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}

// parseHelp reads `# HELP name text` and returns name and text.
func parseHelp(line []byte) (name, text []byte, ok bool) {
	rest, found := bytes.CutPrefix(line, []byte("# HELP "))
	if !found {
		return nil, nil, false
	}
	name, text, _ = bytes.Cut(rest, []byte(" "))
	return name, text, len(name) > 0
}
