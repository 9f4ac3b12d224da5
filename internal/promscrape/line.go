package promscrape

import (
	"bytes"
	"errors"
	"strings"
)

// lineParser reads one line at a time; what it keeps between lines is the
// families declared so far and its buffers.
type lineParser[T Text] struct {
	families families[T]
	// labels holds the labels of the lines read: the Reader empties it
	// before each line, Parse keeps one array for the page.
	labels []Label[T]
	// scratch holds the label values of the current line that had
	// escapes: the Reader empties it before each line.
	scratch []byte
	// absent are the values that mean "no value" (ParseOptions).
	absent []string

	// openMetrics: read the exemplar after a sample's value (a page
	// served as application/openmetrics-text); else it is passed over
	// unread, as in format 0.0.4 no such thing exists.
	openMetrics bool
	// exAt is where the current sample line's '#' is, -1 without one.
	exAt int
	// ex is the current line's exemplar when the sample HasExemplar;
	// exCol and exErr say why it was dropped otherwise (exErr nil: none).
	ex    Exemplar[T]
	exCol int
	exErr error
}

// lineKind is what a line turned out to be.
type lineKind uint8

const (
	lineSkip    lineKind = iota // blank, or a comment other than HELP and TYPE
	lineSample                  // the sample was filled in
	lineHelp                    // name and help were set
	lineType                    // name and typ were set, and the family declared
	lineInvalid                 // col and err say why
	lineAbsent                  // a sample whose value is one of the absent words
)

// lineResult describes a line that is not a sample.
type lineResult[T Text] struct {
	name T
	help T // as written, escapes and all
	typ  MetricType
	col  int // 0-based byte where reading stopped
	err  error
}

// parse reads one line without its line end. A sample's labels are
// appended to p.labels; a bad sample line leaves p.labels as it was.
func (p *lineParser[T]) parse(line T, s *Sample[T], res *lineResult[T]) lineKind {
	for len(line) > 0 && (line[len(line)-1] == '\r' || isBlank(line[len(line)-1])) {
		line = line[:len(line)-1]
	}
	i := skipBlank(line, 0)
	if i == len(line) {
		return lineSkip
	}
	if line[i] == '#' {
		return p.comment(line, i+1, res)
	}
	start := len(p.labels)
	col, err := p.sample(line, i, s)
	if errors.Is(err, errAbsent) {
		p.labels = p.labels[:start]
		return lineAbsent
	}
	if err != nil {
		p.labels = p.labels[:start]
		res.col, res.err = col, err
		return lineInvalid
	}
	s.Labels = p.labels[start:len(p.labels):len(p.labels)]
	p.families.classify(s)
	p.exErr = nil
	if p.exAt >= 0 && p.openMetrics {
		p.exemplar(line, s)
	}
	return lineSample
}

// exemplar reads the exemplar at p.exAt into p.ex; one it cannot read, or
// one where OpenMetrics allows none, is dropped with exCol and exErr set,
// and the sample is kept: the sample is the data, the exemplar a pointer
// to a trace.
func (p *lineParser[T]) exemplar(line T, s *Sample[T]) {
	start := len(p.labels)
	col, err := p.readExemplar(line, p.exAt+1)
	if err == nil && !exemplarAllowed(s) {
		col, err = p.exAt, ErrExemplarPlace
	}
	if err != nil {
		p.labels = p.labels[:start]
		p.ex = Exemplar[T]{}
		p.exCol, p.exErr = col, err
		return
	}
	p.ex.Labels = p.labels[start:len(p.labels):len(p.labels)]
	s.HasExemplar = true
}

// exemplarAllowed: OpenMetrics 1.0 puts exemplars on a counter's _total,
// a histogram's or gauge histogram's _bucket. An undeclared family's
// _total or _bucket line is given the benefit of the doubt.
func exemplarAllowed[T Text](s *Sample[T]) bool {
	switch s.Type {
	case Counter:
		return s.Part == PartValue && hasSuffix(s.Name, "_total")
	case Histogram, GaugeHistogram:
		return s.Part == PartBucket
	case Untyped:
		return hasSuffix(s.Name, "_total") || hasSuffix(s.Name, "_bucket")
	}
	return false
}

func hasSuffix[T Text](s T, suffix string) bool {
	return len(s) >= len(suffix) && string(s[len(s)-len(suffix):]) == suffix
}

// readExemplar reads `{labels} value [timestamp]` from just after the '#'.
func (p *lineParser[T]) readExemplar(line T, i int) (int, error) {
	p.ex = Exemplar[T]{}
	i = skipBlank(line, i)
	if i == len(line) || line[i] != '{' {
		return i, ErrExemplarLabels
	}
	var named Sample[T]
	start, open := len(p.labels), i
	i, err := p.labelSet(line, i+1, &named)
	if err != nil {
		return i, err
	}
	if len(named.Name) > 0 {
		return open, ErrExemplarName
	}
	runes := 0
	for _, l := range p.labels[start:] {
		runes += runeCount(l.Name) + runeCount(l.Value)
	}
	if runes > MaxExemplarRunes {
		return open, ErrExemplarTooLong
	}
	j := skipBlank(line, i)
	end := tokenEnd(line, j)
	v, ok := parseValue(line[j:end])
	if !ok {
		return j, ErrExemplarValue
	}
	p.ex.Value = v
	if j = skipBlank(line, end); j == len(line) {
		return 0, nil
	}
	end = tokenEnd(line, j)
	ts, ok := parseSeconds(line[j:end])
	if !ok {
		return j, ErrExemplarTime
	}
	p.ex.Timestamp, p.ex.HasTimestamp = ts, true
	if j = skipBlank(line, end); j < len(line) {
		return j, ErrExemplarTrailing
	}
	return 0, nil
}

// timestamp reads a sample's timestamp: OpenMetrics writes seconds,
// format 0.0.4 milliseconds (parseTimestamp tells them apart by the
// fraction, all a page of unknown format allows).
func (p *lineParser[T]) timestamp(b T) (int64, bool) {
	if p.openMetrics {
		return parseSeconds(b)
	}
	return parseTimestamp(b)
}

// runeCount counts UTF-8 characters as the bytes that start one.
func runeCount[T Text](s T) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i]&0xC0 != 0x80 {
			n++
		}
	}
	return n
}

// sample reads `name{label="value",…} value [timestamp] [# exemplar]`, or
// the UTF-8 form `{"name",label="value"} value`, from line[i:].
func (p *lineParser[T]) sample(line T, i int, s *Sample[T]) (int, error) {
	*s = Sample[T]{}
	p.exAt = -1
	if line[i] != '{' {
		n := nameEnd(line, i, nameChar)
		if n == i {
			return i, ErrNoName
		}
		// What follows the name is read as the value even without a
		// blank before it ("a+1"), as expfmt reads it.
		s.Name = line[i:n]
		i = skipBlank(line, n)
	}
	if i < len(line) && line[i] == '{' {
		open := i
		var err error
		if i, err = p.labelSet(line, i+1, s); err != nil {
			return i, err
		}
		if len(s.Name) == 0 {
			return open, ErrNoName
		}
	}
	j := skipBlank(line, i)
	if j == len(line) {
		return j, ErrNoValue
	}
	end := tokenEnd(line, j)
	v, ok := parseValue(line[j:end])
	if !ok {
		for _, word := range p.absent {
			if string(line[j:end]) == word {
				return j, errAbsent
			}
		}
		return j, ErrValue
	}
	s.Value = v
	j = skipBlank(line, end)
	if j == len(line) {
		return 0, nil
	}
	if line[j] == '#' {
		p.exAt = j
		return 0, nil
	}
	end = tokenEnd(line, j)
	ts, ok := p.timestamp(line[j:end])
	if !ok {
		return j, ErrTimestamp
	}
	s.Timestamp, s.HasTimestamp = ts, true
	// An OpenMetrics exemplar may follow.
	if j = skipBlank(line, end); j < len(line) {
		if line[j] != '#' {
			return j, ErrTrailing
		}
		p.exAt = j
	}
	return 0, nil
}

// labelSet reads from just after '{' to just after '}'.
func (p *lineParser[T]) labelSet(line T, i int, s *Sample[T]) (int, error) {
	for {
		i = skipBlank(line, i)
		if i == len(line) {
			return i, ErrLabelSetOpen
		}
		if line[i] == '}' {
			return i + 1, nil
		}
		// A name without '=' after it is the metric's name: quoted (the
		// UTF-8 form) or bare, as expfmt reads it.
		var name T
		lone, at := false, i
		if line[i] == '"' {
			q, next, err := p.quoted(line, i+1)
			if err != nil {
				return next, errUnterminatedKey
			}
			next = skipBlank(line, next)
			name, lone, i = q, next == len(line) || line[next] != '=', next
		} else {
			n := nameEnd(line, i, labelChar)
			if n == i {
				return i, ErrLabelName
			}
			next := skipBlank(line, n)
			if next == len(line) || line[next] != '=' {
				m := nameEnd(line, i, nameChar)
				after := skipBlank(line, m)
				if after == len(line) || (line[after] != ',' && line[after] != '}') {
					return next, ErrLabelEquals
				}
				n, next, lone = m, after, true
			}
			name, i = line[i:n], next
		}
		if lone {
			if len(s.Name) > 0 {
				return at, ErrNamedTwice
			}
			s.Name = name
			var err error
			if i, err = separator(line, i); err != nil || line[i-1] == '}' {
				return i, err
			}
			continue
		}
		if i = skipBlank(line, i+1); i == len(line) || line[i] != '"' {
			return i, ErrLabelNotQuoted
		}
		value, next, err := p.quoted(line, i+1)
		if err != nil {
			return next, err
		}
		p.labels = append(p.labels, Label[T]{Name: name, Value: value})
		var err2 error
		if i, err2 = separator(line, next); err2 != nil || line[i-1] == '}' {
			return i, err2
		}
	}
}

// separator reads the ',' or '}' after a label, returning the position
// just after it.
func separator[T Text](line T, i int) (int, error) {
	i = skipBlank(line, i)
	switch {
	case i == len(line):
		return i, ErrLabelSetOpen
	case line[i] == ',' || line[i] == '}':
		return i + 1, nil
	}
	return i, ErrLabelSeparator
}

// quoted reads a quoted string from just after its opening quote, undoing
// the escapes \\, \" and \n (others are kept as written, as Prometheus
// does). A string without escapes is a slice of the line; one with escapes
// is unescaped into scratch.
func (p *lineParser[T]) quoted(line T, i int) (T, int, error) {
	start := i
	if q := indexByte(line[i:], '"'); q >= 0 && indexByte(line[i:i+q], '\\') < 0 {
		return line[i : i+q], i + q + 1, nil
	}
	for i < len(line) && line[i] != '"' && line[i] != '\\' {
		i++
	}
	if i == len(line) {
		return line[:0], i, ErrLabelValueOpen
	}
	off := len(p.scratch)
	for ; start < i; start++ {
		p.scratch = append(p.scratch, line[start])
	}
	for i < len(line) {
		switch c := line[i]; c {
		case '"':
			end := len(p.scratch)
			return T(p.scratch[off:end:end]), i + 1, nil
		case '\\':
			if i+1 == len(line) {
				return line[:0], i, ErrLabelValueOpen
			}
			switch e := line[i+1]; e {
			case 'n':
				p.scratch = append(p.scratch, '\n')
			case '\\', '"':
				p.scratch = append(p.scratch, e)
			default:
				p.scratch = append(p.scratch, '\\', e)
			}
			i += 2
		default:
			p.scratch = append(p.scratch, c)
			i++
		}
	}
	return line[:0], i, ErrLabelValueOpen
}

// comment reads `# HELP name text` and `# TYPE name type` from just after
// the '#'; other comments, and HELP or TYPE lines without a name, are
// skipped as the format says.
func (p *lineParser[T]) comment(line T, i int, res *lineResult[T]) lineKind {
	i = skipBlank(line, i)
	word := tokenEnd(line, i)
	help := word-i == 4 && string(line[i:word]) == "HELP"
	if !help && (word-i != 4 || string(line[i:word]) != "TYPE") {
		return lineSkip
	}
	i = skipBlank(line, word)
	if i == word || i == len(line) {
		return lineSkip
	}
	var name T
	if line[i] == '"' {
		q, next, err := p.quoted(line, i+1)
		if err != nil {
			return lineSkip
		}
		name, i = q, next
	} else {
		n := nameEnd(line, i, nameChar)
		if n == i {
			return lineSkip
		}
		name, i = line[i:n], n
	}
	rest := skipBlank(line, i)
	if rest == i && rest < len(line) {
		return lineSkip // the name runs into other text
	}
	res.name = name
	if help {
		res.help = line[rest:]
		return lineHelp
	}
	res.typ = parseType(line[rest:tokenEnd(line, rest)])
	p.families.declare(name, res.typ)
	return lineType
}

// unescapeHelp undoes \\ and \n in a HELP text.
func (p *lineParser[T]) unescapeHelp(text T) T {
	i := 0
	for i < len(text) && text[i] != '\\' {
		i++
	}
	if i == len(text) {
		return text
	}
	off := len(p.scratch)
	for j := 0; j < len(text); j++ {
		c := text[j]
		if c == '\\' && j+1 < len(text) && (text[j+1] == '\\' || text[j+1] == 'n') {
			j++
			if c = text[j]; c == 'n' {
				c = '\n'
			}
		}
		p.scratch = append(p.scratch, c)
	}
	end := len(p.scratch)
	return T(p.scratch[off:end:end])
}

func parseType[T Text](word T) MetricType {
	for t, name := range typeNames {
		if string(word) == name {
			return MetricType(t)
		}
	}
	return Untyped
}

// Character classes.
const (
	nameChar  = 1 << iota // [a-zA-Z0-9_:] in a metric name
	labelChar             // [a-zA-Z0-9_] in a label name
	digit
	blank
)

var class = func() (c [256]uint8) {
	for b := 'a'; b <= 'z'; b++ {
		c[b] = nameChar | labelChar
		c[b-'a'+'A'] = nameChar | labelChar
	}
	for b := '0'; b <= '9'; b++ {
		c[b] = nameChar | labelChar | digit
	}
	c['_'] = nameChar | labelChar
	c[':'] = nameChar
	c[' '], c['\t'] = blank, blank
	return c
}()

// nameEnd returns the end of the name of the given class starting at i;
// i when there is none (names do not start with a digit).
func nameEnd[T Text](line T, i int, of uint8) int {
	if i == len(line) || class[line[i]]&of == 0 || class[line[i]]&digit != 0 {
		return i
	}
	for i++; i < len(line) && class[line[i]]&of != 0; i++ {
	}
	return i
}

// indexByte is bytes.IndexByte or strings.IndexByte.
func indexByte[T Text](s T, c byte) int {
	switch v := any(s).(type) {
	case string:
		return strings.IndexByte(v, c)
	case []byte:
		return bytes.IndexByte(v, c)
	}
	panic("unreachable")
}

func isBlank(c byte) bool { return class[c]&blank != 0 }

func skipBlank[T Text](line T, i int) int {
	for i < len(line) && class[line[i]]&blank != 0 {
		i++
	}
	return i
}

func tokenEnd[T Text](line T, i int) int {
	for i < len(line) && class[line[i]]&blank == 0 {
		i++
	}
	return i
}
