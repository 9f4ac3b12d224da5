package exportersource

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/mig"
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

// group collects the fields of one device (or one MIG instance, or one
// pod's copy of a device when dcgm-exporter duplicates series per pod).
type group struct {
	s model.Sample

	fbUsed, fbFree, fbReserved, fbTotal, fbUsedRatio model.Value
	pcieLegacy                                       [model.NumDirections]model.Value
}

// labels of one line that identify its device.
type lineLabels struct {
	uuid, gi, profile, index, busID, model, host, driver, pod, namespace, container []byte
}

func (l *lineLabels) read(pairs []labelPair) {
	*l = lineLabels{}
	for _, p := range pairs {
		switch string(p.name) {
		case "UUID", "uuid":
			l.uuid = p.value
		case "GPU_I_ID":
			l.gi = p.value
		case "GPU_I_PROFILE":
			l.profile = p.value
		case "gpu":
			l.index = p.value
		case "pci_bus_id":
			l.busID = p.value
		case "modelName":
			l.model = p.value
		case "Hostname", "hostname":
			l.host = p.value
		case "DCGM_FI_DRIVER_VERSION":
			l.driver = p.value
		case "pod", "pod_name":
			l.pod = p.value
		case "namespace", "pod_namespace":
			l.namespace = p.value
		case "container", "container_name":
			l.container = p.value
		}
	}
}

// Decode reads one response. Lines that cannot be used are skipped and
// counted; a body that ends early keeps what was read.
func (d *Decoder) Decode(r io.Reader) Result {
	var (
		res     Result
		br      = bufio.NewReaderSize(r, 32<<10)
		line    sampleLine
		labels  lineLabels
		key     []byte
		index   = map[string]int{}
		groups  []*group
		helpSec = map[string]float64{}
		lineNo  int
		long    []byte
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
				d.line(bytes.TrimRight(raw, "\r\n"), &line, &labels, &key, index, &groups, helpSec, &res, skip)
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				res.ReadErr = err
			}
			break
		}
	}
	res.Samples = finish(groups)
	return res
}

func (d *Decoder) line(text []byte, line *sampleLine, labels *lineLabels, key *[]byte, index map[string]int, groups *[]*group, helpSec map[string]float64, res *Result, skip func(error)) {
	text = bytes.TrimLeft(text, " \t")
	if len(text) == 0 {
		return
	}
	if text[0] == '#' {
		if name, help, ok := parseHelp(text); ok && bytes.HasSuffix(name, []byte("_VIOLATION")) {
			if scale, known := unitFromHelp(help); known {
				helpSec[string(name)] = scale
			}
		}
		return
	}
	res.Lines++
	if !bytes.HasPrefix(text, []byte("DCGM_FI_")) {
		return
	}
	res.DCGMLines++
	if err := parseSampleLine(text, line); err != nil {
		skip(fmt.Errorf("%s: %w", firstToken(text), err))
		return
	}
	apply, known := fields[string(line.name)]
	if !known {
		return
	}
	labels.read(line.labels)
	if len(labels.uuid) == 0 {
		skip(fmt.Errorf("%s: no UUID (or uuid) label, so the GPU it belongs to is unknown", line.name))
		return
	}
	idx := -1
	if len(labels.index) > 0 {
		n, err := strconv.Atoi(string(labels.index))
		if err != nil || n < 0 {
			skip(fmt.Errorf("%s: gpu label %q is not a GPU index", line.name, labels.index))
			return
		}
		idx = n
	}
	*key = append(append(append(append(append(append(append(append((*key)[:0],
		labels.uuid...), 0), labels.gi...), 0), labels.pod...), 0), labels.namespace...), 0)
	*key = append(*key, labels.container...)
	gi, ok := index[string(*key)]
	if !ok {
		g, err := d.newGroup(labels, idx)
		if err != nil {
			skip(fmt.Errorf("%s: %w", line.name, err))
			return
		}
		if g == nil {
			return // filtered out
		}
		gi = len(*groups)
		index[string(*key)] = gi
		*groups = append(*groups, g)
	}
	g := (*groups)[gi]
	g.fill(labels)
	apply(g, line.value, units{violationScale: d.violationScale(line.name, helpSec)})
}

func (d *Decoder) violationScale(name []byte, helpSec map[string]float64) float64 {
	switch d.ViolationUnit {
	case ViolationUnitUS:
		return 1e-6
	case ViolationUnitNS:
		return 1e-9
	}
	if s, ok := helpSec[string(name)]; ok {
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

func (d *Decoder) newGroup(l *lineLabels, idx int) (*group, error) {
	uuid := string(l.uuid)
	id := model.Identity{
		HWID: uuid, Index: idx,
		PartitionType: accelschema.PartitionNone, Share: 1,
		GPUInstanceID: -1, ComputeInstanceID: -1,
	}
	if len(l.gi) > 0 {
		gi, err := strconv.Atoi(string(l.gi))
		if err != nil || gi < 0 {
			return nil, fmt.Errorf("GPU_I_ID %q is not a GPU-instance id", l.gi)
		}
		id.HWID = fmt.Sprintf("%s/gi%d", uuid, gi)
		id.Parent = uuid
		id.PartitionType = accelschema.PartitionMIG
		id.PartitionID = strconv.Itoa(gi)
		id.GPUInstanceID = gi
		id.Share = 0 // from the profile, in finish
	}
	if !d.Filter.Match(idx, uuid, id.HWID) {
		return nil, nil
	}
	return &group{s: model.Sample{Identity: id}}, nil
}

// fill takes identity details from a line; the first non-empty value wins
// (dcgm-exporter repeats them on every line).
func (g *group) fill(l *lineLabels) {
	id := &g.s.Identity
	setOnce(&id.Profile, l.profile)
	setOnce(&id.PCIBusID, l.busID)
	setOnce(&id.Model, l.model)
	setOnce(&id.HostName, l.host)
	setOnce(&id.DriverVersion, l.driver)
	setOnce(&id.Pod, l.pod)
	setOnce(&id.Namespace, l.namespace)
	setOnce(&id.Container, l.container)
}

func setOnce(dst *string, v []byte) {
	if *dst == "" && len(v) > 0 {
		*dst = string(v)
	}
}

// finish derives memory totals, legacy PCIe rates and MIG shares, and orders
// the samples: by GPU index, each GPU before its MIG instances.
func finish(groups []*group) []model.Sample {
	gpuMemory := map[string]float64{}
	for _, g := range groups {
		g.finishMemory()
		for dir, v := range g.pcieLegacy {
			if v.OK && !g.s.LinkRate[model.LinkPCIe][dir].OK {
				g.s.LinkRate[model.LinkPCIe][dir] = v
			}
		}
		if !g.s.IsMIG() && g.s.MemTotal.OK {
			gpuMemory[g.s.HWID] = g.s.MemTotal.V
		}
	}
	// MIG shares are fitted per parent GPU (mig.Fit) so that a layout never
	// adds up to more than the GPU; an instance whose series dcgm-exporter
	// repeats per pod counts once.
	type instance struct{ parent, hwID string }
	migShares := map[instance]float64{}
	totals := map[string]float64{} // parent → sum of its instances' shares, in page order
	for _, g := range groups {
		if !g.s.IsMIG() {
			continue
		}
		in := instance{g.s.Parent, g.s.HWID}
		if _, seen := migShares[in]; !seen {
			share := model.MIGShare(g.s.Profile, gpuMemory[g.s.Parent], g.s.Model)
			migShares[in] = share
			totals[g.s.Parent] += share
		}
	}
	out := make([]model.Sample, 0, len(groups))
	for _, g := range groups {
		if g.s.IsMIG() {
			g.s.Share = migShares[instance{g.s.Parent, g.s.HWID}] * mig.FitFactor(totals[g.s.Parent])
		}
		// A value near the float64 limit can overflow in unit conversion;
		// it is dropped rather than sent as Inf.
		g.s.DropNonFinite()
		out = append(out, g.s)
	}
	slices.SortStableFunc(out, func(a, b model.Sample) int {
		return cmp.Or(
			cmp.Compare(a.Index, b.Index),
			cmp.Compare(parentOf(a), parentOf(b)),
			cmp.Compare(a.GPUInstanceID, b.GPUInstanceID),
			cmp.Compare(a.Pod, b.Pod), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Container, b.Container),
		)
	})
	return out
}

func parentOf(s model.Sample) string {
	if s.Parent != "" {
		return s.Parent
	}
	return s.HWID
}

func (g *group) finishMemory() {
	if g.fbUsed.OK {
		g.s.MemUsed = model.Of(g.fbUsed.V * mib)
	}
	switch {
	case g.fbTotal.OK:
		g.s.MemTotal = model.Of(g.fbTotal.V * mib)
	case g.fbUsed.OK && g.fbFree.OK:
		g.s.MemTotal = model.Of((g.fbUsed.V + g.fbFree.V + g.fbReserved.V) * mib)
	}
	switch {
	case g.s.MemUsed.OK && g.s.MemTotal.OK && g.s.MemTotal.V > 0:
		g.s.MemUtil = model.Of(g.s.MemUsed.V / g.s.MemTotal.V)
	case g.fbUsedRatio.OK:
		// DCGM documents FB_USED_PERCENT as 0..1; older releases wrote 0..100.
		v := g.fbUsedRatio.V
		if v > 1 {
			v /= 100
		}
		g.s.MemUtil = model.Of(v)
	}
}

func firstToken(b []byte) string {
	end := bytes.IndexAny(b, "{ \t")
	if end < 0 {
		end = len(b)
	}
	return clip(b[:end])
}
