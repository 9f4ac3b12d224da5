package kernellog

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"unicode/utf8"
)

// MaxLineBytes bounds one line. The kernel's records are at most about
// 1 KiB (8 KiB with a dict); a longer "line" is a binary file or a corrupt
// one, and is skipped rather than held.
const MaxLineBytes = 16 << 10

// errLineTooLong is what readLine reports for a line past MaxLineBytes.
var errLineTooLong = errors.New("line longer than 16 KiB skipped (not a kernel log, or a corrupt one)")

// lineReader reads lines of at most MaxLineBytes. A longer one is consumed
// to its end and reported, never held whole.
type lineReader struct {
	r *bufio.Reader
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, MaxLineBytes)}
}

// next returns the next line without its "\n" and the bytes it took. A
// line still being written (no "\n" at EOF) is returned with complete
// false so that a follower can wait for the rest; n is then 0 and the bytes
// are given back by the caller reading again from the same offset.
func (lr *lineReader) next() (line []byte, n int, complete bool, err error) {
	b, err := lr.r.ReadSlice('\n')
	switch {
	case err == nil:
		return b[:len(b)-1], len(b), true, nil
	case errors.Is(err, bufio.ErrBufferFull):
		n = len(b)
		for errors.Is(err, bufio.ErrBufferFull) {
			b, err = lr.r.ReadSlice('\n')
			n += len(b)
		}
		if err != nil {
			return nil, n, false, err
		}
		return nil, n, true, errLineTooLong
	default:
		return b, 0, false, err
	}
}

// text makes a line safe to keep: invalid UTF-8 and NULs (a binary blob
// written into a log) become U+FFFD, so no later step sees them.
func text(b []byte) string {
	if utf8.Valid(b) && bytes.IndexByte(b, 0) < 0 {
		return string(b)
	}
	return strings.ReplaceAll(strings.ToValidUTF8(string(b), "\uFFFD"), "\x00", "\uFFFD")
}

// relevant is the cheap test a source applies before a line goes into the
// backlog: only lines that carry an accelerator driver's or the PCIe error
// reporting's markers, which this package turns into events or counts as
// skipped, never ignores. A flood of other messages then costs no backlog.
func relevant(s string) bool {
	return strings.Contains(s, "NVRM") || strings.Contains(s, "Xid") ||
		strings.Contains(s, "NEURON_HW_ERR") || strings.Contains(s, "AER:") ||
		strings.Contains(s, "PCIe Bus Error") || strings.Contains(s, "fallen off the bus")
}
