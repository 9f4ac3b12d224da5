package exportersource

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/model"
)

// Violation units accepted by the violation_unit setting.
const (
	ViolationUnitAuto = "auto"
	ViolationUnitNS   = "ns"
	ViolationUnitUS   = "us"
)

// maxLineBytes bounds one line: dcgm-exporter lines with every pod label are
// a few KiB; a longer one is a broken response.
const maxLineBytes = 64 << 10

// maxReportedLineErrors bounds how many skipped lines one result describes.
const maxReportedLineErrors = 5

// Decoder turns dcgm-exporter's /metrics text into samples. It keeps nothing
// between calls.
type Decoder struct {
	Filter model.DeviceFilter
	// ViolationUnit is auto (read the unit from the field's HELP text,
	// default ns), ns or us.
	ViolationUnit string
	// PerPodUsage reads per-pod DCGM_FI_DEV_GPU_UTIL and DCGM_FI_DEV_FB_USED
	// rows as per-pod measurements (dcgm-exporter 4.5+ with
	// KUBERNETES_VIRTUAL_GPUS) rather than as copies of the GPU's value.
	PerPodUsage bool
	// HostName is the node's name as the collector knows it. It is
	// preferred to dcgm-exporter's Hostname/hostname label, which is the
	// exporter's own host name: its pod's name in Kubernetes.
	HostName string
}

// LineError is a line that was skipped and why.
type LineError struct {
	Line int
	Err  error
}

func (e LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }

// Result is what one response held.
type Result struct {
	Samples []model.Sample
	// Lines counts sample lines (not comments), DCGMLines those of DCGM
	// fields.
	Lines, DCGMLines int
	// Skipped counts the DCGM lines that could not be used; LineErrors
	// describes the first few.
	Skipped    int
	LineErrors []LineError
	// ReadErr is set when the body ended early (a truncated response);
	// everything read before is in Samples.
	ReadErr error
}

// Decode reads one response. Lines that cannot be used are skipped and
// counted; a body that ends early keeps what was read.
func (d *Decoder) Decode(r io.Reader) Result {
	var (
		res    Result
		br     = bufio.NewReaderSize(r, 32<<10)
		line   sampleLine
		labels lineLabels
		pg     = newPage(d)
		lineNo int
		long   []byte
	)
	skip := func(err error) {
		res.Skipped++
		if len(res.LineErrors) < maxReportedLineErrors {
			res.LineErrors = append(res.LineErrors, LineError{Line: lineNo, Err: err})
		}
	}
	for {
		raw, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A line longer than the buffer: gather it, up to a limit.
			long = append(long[:0], raw...)
			for errors.Is(err, bufio.ErrBufferFull) && len(long) <= maxLineBytes {
				raw, err = br.ReadSlice('\n')
				long = append(long, raw...)
			}
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			raw = long
		}
		if len(raw) > 0 {
			lineNo++
			if len(raw) > maxLineBytes {
				skip(fmt.Errorf("line is longer than %d bytes", maxLineBytes))
			} else if err == nil || errors.Is(err, io.EOF) {
				pg.line(bytes.TrimRight(raw, "\r\n"), &line, &labels, &res, skip)
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				res.ReadErr = err
			}
			break
		}
	}
	res.Samples = pg.finish()
	return res
}

// line reads one line of the page: a HELP comment (for units) or a sample.
func (p *page) line(text []byte, line *sampleLine, labels *lineLabels, res *Result, skip func(error)) {
	text = bytes.TrimLeft(text, " \t")
	if len(text) == 0 {
		return
	}
	if text[0] == '#' {
		if name, help, ok := parseHelp(text); ok && bytes.HasSuffix(name, []byte("_VIOLATION")) {
			if scale, known := unitFromHelp(help); known {
				p.helpSec[string(name)] = scale
			}
		}
		return
	}
	res.Lines++
	if !bytes.HasPrefix(text, []byte("DCGM_FI_")) && !bytes.HasPrefix(text, []byte("DCGM_EXP_")) {
		return
	}
	res.DCGMLines++
	if err := parseSampleLine(text, line); err != nil {
		skip(fmt.Errorf("%s: %w", firstToken(text), err))
		return
	}
	fi, known := fieldIndex[string(line.name)]
	if !known {
		return
	}
	if err := p.row(fi, line, labels); err != nil {
		skip(fmt.Errorf("%s: %w", line.name, err))
	}
}

// row takes one sample of a known family into the resource it belongs to.
func (p *page) row(fi int, line *sampleLine, l *lineLabels) error {
	f := &fields[fi]
	l.read(line.labels)
	if len(l.uuid) == 0 {
		return errors.New("no UUID (or uuid) label, so the GPU it belongs to is unknown")
	}
	idx := -1
	if len(l.index) > 0 {
		n, err := strconv.Atoi(string(l.index))
		if err != nil || n < 0 {
			return fmt.Errorf("gpu label %q is not a GPU index", l.index)
		}
		idx = n
	}
	gi, err := parseGI(l)
	if err != nil {
		return err
	}
	var xidCode string
	if f.byXID {
		code, err := strconv.Atoi(string(l.xid))
		if err != nil || code < 0 {
			return fmt.Errorf("xid label %q is not an XID code", l.xid)
		}
		xidCode = strconv.Itoa(code)
	}

	// The resource the row names: a MIG instance (GPU_I_ID, else the MIG
	// UUID of a DRA claim), or the GPU.
	gpu := p.gpu(l, idx)
	named := gpu
	onInstance := gi >= 0 || l.migInstanceUUID() != nil
	if onInstance {
		named = p.instance(l, idx, gi, gpu)
	}
	h := p.holderOf(l)
	if gpu != nil {
		gpu.fill(l)
	}
	if named != nil {
		named.fill(l)
		named.addHolder(h)
	}

	// A device-scoped family measures the GPU, whichever row it is on.
	target, r := named, rank{gi: noInstance, holder: h}
	if f.device && onInstance {
		target = gpu
		r.fromInstance = true
		if gi >= 0 {
			r.gi = gi
		}
	}
	if target == nil {
		return nil // filtered out
	}
	if named != nil {
		r.instance = named.pos
	} else {
		r.instance = target.pos
	}
	switch {
	case f.byXID:
		p.takeExtra(target, extraKey{field: fi, key: xidCode}, line.value, r)
	case f.perPod != nil && p.d.PerPodUsage && h != nobody && p.holders[h].pod != "":
		p.takeExtra(target, extraKey{field: fi, key: p.holders[h].podKey()}, line.value, r)
	default:
		p.take(&target.values[fi], line.value, r)
	}
	return nil
}

func (p *page) violationScale(name string) float64 {
	switch p.d.ViolationUnit {
	case ViolationUnitUS:
		return 1e-6
	case ViolationUnitNS:
		return 1e-9
	}
	if s, ok := p.helpSec[name]; ok {
		return s
	}
	return 1e-9
}

// unitFromHelp reads the unit dcgm-exporter's counters CSV states in a
// *_VIOLATION field's help text: "(in us)" in older files, "(in ns)" now.
func unitFromHelp(help []byte) (float64, bool) {
	h := bytes.ToLower(help)
	for _, us := range []string{"(in us)", "(us)", "(in usec)", "(in µs)", "(µs)", "microsecond"} {
		if bytes.Contains(h, []byte(us)) {
			return 1e-6, true
		}
	}
	for _, ns := range []string{"(in ns)", "(ns)", "(in nsec)", "nanosecond"} {
		if bytes.Contains(h, []byte(ns)) {
			return 1e-9, true
		}
	}
	return 0, false
}

func firstToken(b []byte) string {
	end := bytes.IndexAny(b, "{ \t")
	if end < 0 {
		end = len(b)
	}
	return clip(b[:end])
}
