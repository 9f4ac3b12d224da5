// Package framing splits neuron-monitor's output stream into JSON documents.
//
// neuron-monitor writes one complete JSON report per update, normally on one
// line. A json.Decoder would handle that, and pretty-printed output too, but
// it cannot recover from a broken document: after a syntax error, or a report
// cut short because the child crashed mid-write, every later byte is lost. The
// Framer instead tracks object depth itself (outside strings) so that it knows
// where each top-level document starts and ends, and resynchronises on the
// next report when one is broken.
//
// Resynchronisation rule: a '{' in the first column of a line always starts a
// new report. That holds for neuron-monitor's one-report-per-line output and
// for pretty-printed output (json.dumps(indent=2), jq, Go's MarshalIndent):
// nested objects there are either after a key on the same line or indented.
// So an unfinished document followed by a line starting with '{' is reported
// as truncated and the new one is read normally.
package framing

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// DefaultMaxDocumentSize bounds one report. A trn2.48xlarge report with 64
// NeuronCores and a few runtimes is a few hundred KiB.
const DefaultMaxDocumentSize = 32 << 20

// Position locates a document or a problem in the stream.
type Position struct {
	// Report is the 1-based ordinal of the document in the stream (for a
	// problem outside any document: the number of documents begun so far).
	Report int
	// Offset is the byte offset where the document (or garbage) starts.
	Offset int64
	// Line is the 1-based line of Offset.
	Line int
}

func (p Position) String() string {
	return fmt.Sprintf("report #%d at byte %d (line %d)", p.Report, p.Offset, p.Line)
}

// ProblemKind classifies what was wrong with a piece of the stream.
type ProblemKind int

const (
	// Truncated: a document was not closed before the stream ended or before
	// a new document began.
	Truncated ProblemKind = iota + 1
	// Oversized: a document grew past the size limit; it was skipped.
	Oversized
	// Garbage: bytes outside any document that are not whitespace.
	Garbage
	// Unbalanced: a closing brace or bracket with no document open.
	Unbalanced
)

// Problem is a piece of the stream that is not a complete document.
type Problem struct {
	Kind ProblemKind
	Position
	// Size is how many bytes were skipped.
	Size int64
	// Sample holds the first bytes of garbage, for the error message.
	Sample string
	// Reason says why a document ended early.
	Reason string
}

func (p *Problem) Error() string {
	switch p.Kind {
	case Truncated:
		return fmt.Sprintf("truncated document: %s: %s after %d bytes; skipped", p.Position, p.Reason, p.Size)
	case Oversized:
		return fmt.Sprintf("oversized document: %s is larger than %d bytes; skipped", p.Position, p.Size)
	case Garbage:
		return fmt.Sprintf("non-JSON output: %d bytes at byte %d (line %d) outside any report: %q; skipped", p.Size, p.Offset, p.Line, p.Sample)
	case Unbalanced:
		return fmt.Sprintf("unbalanced JSON: closing bracket at byte %d (line %d) with no report open; skipped", p.Offset, p.Line)
	}
	return "unknown framing problem"
}

// Frame is one result of Next: either a complete document or a problem.
type Frame struct {
	// Doc holds a complete top-level JSON value (syntax not yet checked
	// beyond bracket balance). It is valid until the next call to Next.
	Doc []byte
	Position
	// Problem is set instead of Doc when this piece of the stream was bad.
	Problem *Problem
}

// Framer reads documents from a stream. It is not safe for concurrent use.
type Framer struct {
	r       *bufio.Reader
	maxSize int

	offset      int64 // offset of the next byte to read
	line        int
	atLineStart bool

	reports int // documents begun

	// The document being read.
	inDoc      bool
	discarding bool // oversized: keep tracking depth but do not buffer
	depth      int
	inString   bool
	escaped    bool
	doc        []byte
	docPos     Position
	docSize    int64

	// Garbage being skipped.
	garbageSize int64
	garbagePos  Position
	sample      []byte

	// Frames ready to be returned, in order.
	pending []Frame

	// skipToNewline discards everything up to and including the next '\n'
	// (used when the stream is joined mid-line, e.g. at the end of a file).
	skipToNewline bool
}

// Option configures a Framer.
type Option func(*Framer)

// WithMaxDocumentSize bounds the size of one document.
func WithMaxDocumentSize(n int) Option { return func(f *Framer) { f.maxSize = n } }

// StartMidLine makes the Framer ignore everything up to the first newline:
// the stream was joined at an arbitrary offset and the first line may be the
// tail of a report.
func StartMidLine() Option { return func(f *Framer) { f.skipToNewline = true } }

// New returns a Framer reading r.
func New(r io.Reader, opts ...Option) *Framer {
	f := &Framer{r: bufio.NewReaderSize(r, 64<<10), maxSize: DefaultMaxDocumentSize, line: 1, atLineStart: true}
	for _, o := range opts {
		o(f)
	}
	return f
}

// Next returns the next document or problem. It returns io.EOF after the
// stream ends (an unfinished document is returned as a Truncated problem
// first) and passes other read errors through.
func (f *Framer) Next() (Frame, error) {
	for {
		if len(f.pending) > 0 {
			fr := f.pending[0]
			f.pending = f.pending[1:]
			return fr, nil
		}
		c, err := f.r.ReadByte()
		if err != nil {
			if errors.Is(err, io.EOF) {
				f.flushGarbage()
				if f.inDoc {
					f.endTruncated("the stream ended")
				}
				if len(f.pending) > 0 {
					continue
				}
			}
			return Frame{}, err
		}
		f.step(c)
	}
}

func (f *Framer) step(c byte) {
	f.stepByte(c)
	if c == '\n' {
		f.line++
	}
}

func (f *Framer) stepByte(c byte) {
	pos := f.offset
	f.offset++
	lineStart := f.atLineStart
	f.atLineStart = c == '\n'

	if f.skipToNewline {
		if c == '\n' {
			f.skipToNewline = false
		}
		return
	}

	if f.inDoc {
		if lineStart && c == '{' {
			f.endTruncated("a new report began on a new line")
			f.beginDoc(pos, c)
			return
		}
		f.docByte(c)
		return
	}

	switch c {
	case ' ', '\t', '\r', '\n':
	case '{', '[':
		// A top-level array is not a report, but it is framed like one so
		// that the objects inside it are not mistaken for reports.
		f.flushGarbage()
		f.beginDoc(pos, c)
	case '}', ']':
		f.flushGarbage()
		p := f.posAt(pos)
		f.pending = append(f.pending, Frame{Position: p, Problem: &Problem{Kind: Unbalanced, Position: p, Size: 1}})
	default:
		if f.garbageSize == 0 {
			f.garbagePos = f.posAt(pos)
			f.sample = f.sample[:0]
		}
		f.garbageSize++
		if len(f.sample) < 64 {
			f.sample = append(f.sample, c)
		}
	}
}

func (f *Framer) posAt(offset int64) Position {
	return Position{Report: f.reports, Offset: offset, Line: f.line}
}

func (f *Framer) beginDoc(offset int64, open byte) {
	f.reports++
	f.inDoc = true
	f.discarding = false
	f.depth = 1
	f.inString = false
	f.escaped = false
	f.docPos = Position{Report: f.reports, Offset: offset, Line: f.line}
	f.doc = append(f.doc[:0], open)
	f.docSize = 1
}

func (f *Framer) docByte(c byte) {
	f.docSize++
	if !f.discarding {
		if len(f.doc) >= f.maxSize {
			f.discarding = true
			f.doc = f.doc[:0]
		} else {
			f.doc = append(f.doc, c)
		}
	}
	if f.inString {
		switch {
		case f.escaped:
			f.escaped = false
		case c == '\\':
			f.escaped = true
		case c == '"':
			f.inString = false
		}
		return
	}
	switch c {
	case '"':
		f.inString = true
	case '{', '[':
		f.depth++
	case '}', ']':
		f.depth--
		if f.depth == 0 {
			f.endDoc()
		}
	}
}

func (f *Framer) endDoc() {
	f.inDoc = false
	if f.discarding {
		f.pending = append(f.pending, Frame{Position: f.docPos, Problem: &Problem{Kind: Oversized, Position: f.docPos, Size: int64(f.maxSize)}})
		return
	}
	f.pending = append(f.pending, Frame{Doc: f.doc, Position: f.docPos})
}

func (f *Framer) endTruncated(reason string) {
	f.inDoc = false
	f.pending = append(f.pending, Frame{Position: f.docPos, Problem: &Problem{Kind: Truncated, Position: f.docPos, Size: f.docSize, Reason: reason}})
}

func (f *Framer) flushGarbage() {
	if f.garbageSize == 0 {
		return
	}
	f.pending = append(f.pending, Frame{Position: f.garbagePos, Problem: &Problem{Kind: Garbage, Position: f.garbagePos, Size: f.garbageSize, Sample: string(f.sample)}})
	f.garbageSize = 0
}
