package promscrape

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// Entry is what Reader.Next found.
type Entry uint8

// Entries.
const (
	// EntryEnd: the page is over; Err says whether it ended early.
	EntryEnd Entry = iota
	// EntrySample: Sample holds the line's sample.
	EntrySample
	// EntryHelp: Help holds the family's name and text.
	EntryHelp
	// EntryType: Type holds the family's name and type.
	EntryType
	// EntryInvalid: the line could not be read and is skipped; Invalid
	// says where and why, Raw what it said. Next goes on with the next
	// line.
	EntryInvalid
)

// DefaultMaxLineBytes bounds one line of a Reader: a dcgm-exporter line
// with every pod label is a few KiB; a longer one is a broken page.
const DefaultMaxLineBytes = 64 << 10

// Reader reads a page line by line from an io.Reader. What its methods
// return points into its buffers and is valid until the next call to Next;
// copy what is kept longer. A Reader is not safe for concurrent use.
type Reader struct {
	// MaxLineBytes bounds a line (default DefaultMaxLineBytes); a longer
	// one is EntryInvalid with ErrLineTooLong.
	MaxLineBytes int
	// AbsentValues are as in ParseOptions: samples with such a value are
	// passed over and counted by Absent.
	AbsentValues []string
	// OpenMetrics reads exemplars (IsOpenMetrics of the page's
	// Content-Type); without it they are passed over unread.
	OpenMetrics bool

	br     *bufio.Reader
	p      lineParser[[]byte]
	sample Sample[[]byte]
	res    lineResult[[]byte]
	raw    []byte
	long   []byte
	lineNo int
	absent int
	err    error
	done   bool
}

// NewReader returns a Reader of src.
func NewReader(src io.Reader) *Reader {
	r := &Reader{MaxLineBytes: DefaultMaxLineBytes, br: bufio.NewReaderSize(src, 32<<10)}
	r.p.families.names = map[string]string{}
	return r
}

// Reset makes r read a new page from src, keeping its buffers.
func (r *Reader) Reset(src io.Reader) {
	r.br.Reset(src)
	r.p.families.reset()
	r.raw, r.lineNo, r.absent, r.err, r.done = nil, 0, 0, nil, false
}

// Next reads up to the next sample, HELP, TYPE or unreadable line; blank
// lines and other comments are passed over.
func (r *Reader) Next() Entry {
	for {
		raw, ok := r.readLine()
		if !ok {
			return EntryEnd
		}
		r.raw = raw
		if len(raw) > r.maxLine() {
			r.res = lineResult[[]byte]{err: fmt.Errorf("%w (more than %d bytes)", ErrLineTooLong, r.maxLine())}
			return EntryInvalid
		}
		r.p.labels, r.p.scratch, r.p.absent, r.p.openMetrics = r.p.labels[:0], r.p.scratch[:0], r.AbsentValues, r.OpenMetrics
		switch r.p.parse(raw, &r.sample, &r.res) {
		case lineSample:
			r.sample.Line = r.lineNo
			return EntrySample
		case lineHelp:
			return EntryHelp
		case lineType:
			return EntryType
		case lineInvalid:
			return EntryInvalid
		case lineAbsent:
			r.absent++
		}
	}
}

func (r *Reader) maxLine() int {
	if r.MaxLineBytes > 0 {
		return r.MaxLineBytes
	}
	return DefaultMaxLineBytes
}

// readLine returns the next line without its line end. A line cut by a
// read error is dropped: Err reports the cut.
func (r *Reader) readLine() ([]byte, bool) {
	for !r.done {
		raw, err := r.br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// Longer than the buffer: gather it up to the limit, then
			// pass over the rest.
			r.long = append(r.long[:0], raw...)
			for errors.Is(err, bufio.ErrBufferFull) && len(r.long) <= r.maxLine() {
				raw, err = r.br.ReadSlice('\n')
				r.long = append(r.long, raw...)
			}
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = r.br.ReadSlice('\n')
			}
			raw = r.long
		}
		if err != nil {
			r.done = true
			if !errors.Is(err, io.EOF) {
				r.err = err
				if len(raw) > 0 {
					r.lineNo++
				}
				return nil, false
			}
		}
		if len(raw) == 0 {
			continue
		}
		r.lineNo++
		if raw[len(raw)-1] == '\n' {
			raw = raw[:len(raw)-1]
		}
		return raw, true
	}
	return nil, false
}

// Sample is the line's sample, after EntrySample.
func (r *Reader) Sample() *Sample[[]byte] { return &r.sample }

// Exemplar is the sample's exemplar, after EntrySample when
// Sample().HasExemplar.
func (r *Reader) Exemplar() (Exemplar[[]byte], bool) {
	if !r.sample.HasExemplar {
		return Exemplar[[]byte]{}, false
	}
	return r.p.ex, true
}

// ExemplarError says why the sample's exemplar was dropped, after
// EntrySample; false when there was none or it was read.
func (r *Reader) ExemplarError() (LineError, bool) {
	if r.p.exErr == nil {
		return LineError{}, false
	}
	return LineError{Line: r.lineNo, Column: r.p.exCol + 1, Err: r.p.exErr, Text: excerpt(bytes.TrimRight(r.raw, "\r"))}, true
}

// Help is the family and its (unescaped) text, after EntryHelp.
func (r *Reader) Help() (name, text []byte) { return r.res.name, r.p.unescapeHelp(r.res.help) }

// Type is the family and its type, after EntryType.
func (r *Reader) Type() (name []byte, t MetricType) { return r.res.name, r.res.typ }

// Invalid says why the line was skipped, after EntryInvalid.
func (r *Reader) Invalid() LineError {
	le := LineError{Line: r.lineNo, Err: r.res.err, Text: excerpt(bytes.TrimRight(r.raw, "\r"))}
	if !errors.Is(r.res.err, ErrLineTooLong) {
		le.Column = r.res.col + 1
	}
	return le
}

// LineError describes the current line as skipped for the caller's own
// reason: a sample that reads well but cannot be used.
func (r *Reader) LineError(err error) LineError {
	return LineError{Line: r.lineNo, Err: err, Text: excerpt(bytes.TrimRight(r.raw, "\r"))}
}

// Raw is the current line as read, without its line end.
func (r *Reader) Raw() []byte { return r.raw }

// Line is the current line's number, from 1; after EntryEnd, the number of
// lines read.
func (r *Reader) Line() int { return r.lineNo }

// Absent counts the samples passed over for a value of AbsentValues.
func (r *Reader) Absent() int { return r.absent }

// Err is why the page ended early (a body cut short, one too large), nil
// when it was read to its end.
func (r *Reader) Err() error { return r.err }
