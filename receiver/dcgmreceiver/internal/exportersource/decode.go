package exportersource

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/otelcol-accel/otelcol-accel/internal/promscrape"
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
const maxLineBytes = promscrape.DefaultMaxLineBytes

// maxReportedLineErrors bounds how many skipped lines one result describes.
const maxReportedLineErrors = 5

// Decoder turns dcgm-exporter's /metrics text into samples. It keeps only
// its read buffers between calls (so that a scrape allocates none for
// them), and is not safe for concurrent use.
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

	reader *promscrape.Reader
	page   *page // reused by every Decode: a Decoder reads one response at a time
}

// LineError is a line that was skipped: its number, where reading stopped
// (when the text could not be read), why, and the line.
type LineError = promscrape.LineError

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

// convertFailed is what dcgm-exporter writes in place of a value it could not
// read from DCGM (a blank field, a field the GPU does not support).
var convertFailed = []byte("ERROR - FAILED TO CONVERT TO STRING")

var (
	errConvert   = errors.New(`dcgm-exporter could not read the field ("ERROR - FAILED TO CONVERT TO STRING")`)
	errNotFinite = errors.New("value is not a finite number")
)

// Decode reads one response. Lines that cannot be used are skipped and
// counted; a body that ends early keeps what was read.
func (d *Decoder) Decode(r io.Reader) Result {
	var (
		res    Result
		labels lineLabels
		pg     = d.page
	)
	if pg == nil {
		pg = newPage(d)
		d.page = pg
	} else {
		pg.reset()
	}
	if d.reader == nil {
		d.reader = promscrape.NewReader(r)
		d.reader.MaxLineBytes = maxLineBytes
	} else {
		d.reader.Reset(r)
	}
	rd := d.reader
	defer rd.Reset(nil) // let go of the body
	skip := func(e func() LineError) {
		res.Skipped++
		if len(res.LineErrors) < maxReportedLineErrors {
			res.LineErrors = append(res.LineErrors, e())
		}
	}
	for en := rd.Next(); en != promscrape.EntryEnd; en = rd.Next() {
		switch en {
		case promscrape.EntryHelp:
			pg.help(rd.Help())
		case promscrape.EntrySample:
			s := rd.Sample()
			res.Lines++
			if !isDCGM(s.Name) {
				continue
			}
			res.DCGMLines++
			if err := pg.addSample(s, &labels); err != nil {
				skip(func() LineError { return rd.LineError(err) })
			}
		case promscrape.EntryInvalid:
			res.Lines++
			if !isDCGM(bytes.TrimLeft(rd.Raw(), " \t")) {
				continue
			}
			res.DCGMLines++
			skip(func() LineError {
				e := rd.Invalid()
				if errors.Is(e.Err, promscrape.ErrValue) && bytes.HasPrefix(rd.Raw()[e.Column-1:], convertFailed) {
					e.Err = errConvert
				}
				return e
			})
		}
	}
	res.ReadErr = rd.Err()
	res.Samples = pg.finish()
	return res
}

// isDCGM tells DCGM fields (and dcgm-exporter's own DCGM_EXP_ series) from
// the other series of the page, which are not read.
func isDCGM(name []byte) bool {
	return bytes.HasPrefix(name, []byte("DCGM_FI_")) || bytes.HasPrefix(name, []byte("DCGM_EXP_"))
}

// help reads the unit of a *_VIOLATION field from its HELP text.
func (p *page) help(name, text []byte) {
	if bytes.HasSuffix(name, []byte("_VIOLATION")) {
		if scale, known := unitFromHelp(text); known {
			p.helpSec[string(name)] = scale
		}
	}
}

// addSample takes one DCGM sample into the page, if its field is one we read.
func (p *page) addSample(s *promscrape.Sample[[]byte], labels *lineLabels) error {
	fi, known := fieldIndex[string(s.Name)]
	if !known {
		return nil
	}
	if math.IsNaN(s.Value) || math.IsInf(s.Value, 0) {
		return errNotFinite
	}
	return p.row(fi, s, labels)
}

// row takes one sample of a known family into the resource it belongs to.
func (p *page) row(fi int, line *promscrape.Sample[[]byte], l *lineLabels) error {
	f := &fields[fi]
	l.read(line.Labels)
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
		p.takeExtra(target, extraKey{field: fi, key: xidCode}, line.Value, r)
	case f.perPod != nil && p.d.PerPodUsage && h != nobody && p.holders[h].pod != "":
		p.takeExtra(target, extraKey{field: fi, key: p.holders[h].podKey()}, line.Value, r)
	default:
		p.take(&target.values[fi], line.Value, r)
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
