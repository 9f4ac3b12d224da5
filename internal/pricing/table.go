package pricing

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// DefaultRegion is the region of the bundled table, and the region a row or
// a lookup without one falls back to unless Options says otherwise.
const DefaultRegion = "us-east-1"

// Options shape a table.
type Options struct {
	// DefaultRegion is given to rows without a region, and lookups for a
	// region the table does not price fall back to it. Empty: DefaultRegion.
	DefaultRegion string
	// PriceFactor multiplies every price in the table (a savings plan that
	// covers the whole fleet). 0 means 1.
	PriceFactor float64
	// WithoutBundled leaves the bundled AWS table out.
	WithoutBundled bool
}

func (o Options) region() string {
	if o.DefaultRegion == "" {
		return DefaultRegion
	}
	return strings.ToLower(o.DefaultRegion)
}

func (o Options) factor() float64 {
	if o.PriceFactor == 0 {
		return 1
	}
	return o.PriceFactor
}

// Table is an immutable set of price rows.
type Table struct {
	defaultRegion string
	rows          map[Key]Row
	// modelRows are the "*" rows, longest model name first so that "L40S"
	// wins over "L4".
	modelRows []Row
	// sameModel lists instance rows by (model, region), cheapest first.
	sameModel map[Key][]Row
}

// Build merges rows in order (a later row with the same instance type and
// region overrides the fields it sets) and checks that every resulting row
// can price something.
func Build(opts Options, sources ...[]parsedRow) (*Table, error) {
	t := &Table{defaultRegion: opts.region(), rows: map[Key]Row{}, sameModel: map[Key][]Row{}}
	last := map[Key]*parsedRow{}
	var order []Key
	for _, src := range sources {
		for i := range src {
			row := src[i] // a copy: the caller's rows (the cached bundled table) stay as parsed
			p := &row
			if p.Region == "" {
				p.Region = t.defaultRegion
			}
			p.InstanceType = strings.TrimSpace(p.InstanceType)
			k := p.Key()
			base, ok := t.rows[k]
			if !ok {
				base = Row{InstanceType: p.InstanceType, Region: strings.ToLower(p.Region), PriceFactor: 1}
				order = append(order, k)
			}
			t.rows[k] = p.merge(base)
			last[k] = p
		}
	}
	var errs errorList
	for _, k := range order {
		r := t.rows[k]
		if err := r.complete(); err != nil {
			p := last[k]
			errs.add(p.file, p.line, "%v", err)
			continue
		}
		r.effective = r.listPerAccelerator() * r.PriceFactor * opts.factor()
		t.rows[k] = r
	}
	if err := errs.err(); err != nil {
		return nil, err
	}
	for _, k := range order {
		r := t.rows[k]
		if r.InstanceType == AnyInstanceType {
			t.modelRows = append(t.modelRows, r)
			continue
		}
		if r.AcceleratorModel != "" {
			mk := Key{Model: strings.ToLower(r.AcceleratorModel), Region: r.Region}
			t.sameModel[mk] = append(t.sameModel[mk], r)
		}
	}
	sort.SliceStable(t.modelRows, func(i, j int) bool {
		return len(t.modelRows[i].AcceleratorModel) > len(t.modelRows[j].AcceleratorModel)
	})
	for _, rows := range t.sameModel {
		sort.SliceStable(rows, func(i, j int) bool { return rows[i].effective < rows[j].effective })
	}
	return t, nil
}

// DefaultRegionName is the region lookups fall back to.
func (t *Table) DefaultRegionName() string { return t.defaultRegion }

// Len is the number of rows.
func (t *Table) Len() int { return len(t.rows) }

// Rows returns every row, sorted by region then instance type.
func (t *Table) Rows() []Row {
	out := make([]Row, 0, len(t.rows))
	for _, r := range t.rows {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Region != out[j].Region {
			return out[i].Region < out[j].Region
		}
		return out[i].InstanceType < out[j].InstanceType
	})
	return out
}

// Match says how a lookup found its row.
type Match int

const (
	// NoMatch: the table has no row for the resource.
	NoMatch Match = iota
	// ExactMatch: instance type and region.
	ExactMatch
	// RegionFallback: the instance type in the table's default region,
	// because the resource's region is missing or not in the table.
	RegionFallback
	// ModelMatch: a "*" row whose accelerator model is in hw.model.
	ModelMatch
)

func (m Match) String() string {
	switch m {
	case ExactMatch:
		return "exact"
	case RegionFallback:
		return "region_fallback"
	case ModelMatch:
		return "model"
	default:
		return "none"
	}
}

// Lookup finds the row for an instance type in a region, falling back to the
// table's default region. Without an instance type it tries the "*" rows by
// hardware model.
func (t *Table) Lookup(instanceType, region, hwModel string) (Row, Match) {
	region = strings.ToLower(strings.TrimSpace(region))
	if region == "" {
		region = t.defaultRegion
	}
	if instanceType != "" {
		if r, ok := t.rows[makeKey(instanceType, region)]; ok {
			return r, ExactMatch
		}
		if region != t.defaultRegion {
			if r, ok := t.rows[makeKey(instanceType, t.defaultRegion)]; ok {
				return r, RegionFallback
			}
		}
	}
	if hwModel == "" {
		return Row{}, NoMatch
	}
	var fallback *Row
	for i := range t.modelRows {
		r := &t.modelRows[i]
		if !containsWord(hwModel, r.AcceleratorModel) {
			continue
		}
		if r.Region == region {
			return *r, ModelMatch
		}
		if fallback == nil && r.Region == t.defaultRegion {
			fallback = r
		}
	}
	if fallback != nil {
		return *fallback, ModelMatch
	}
	return Row{}, NoMatch
}

// SameModel lists the instance types in row's region whose accelerators are
// the same model, cheapest accelerator-hour first (row itself included).
func (t *Table) SameModel(row Row) []Row {
	return t.sameModel[Key{Model: strings.ToLower(row.AcceleratorModel), Region: row.Region}]
}

// containsWord reports whether needle occurs in haystack, ignoring case, with
// no letter or digit on either side: "L4" is in "NVIDIA L4" but not in
// "NVIDIA L40S".
func containsWord(haystack, needle string) bool {
	if needle == "" {
		return false
	}
	h, n := strings.ToLower(haystack), strings.ToLower(needle)
	for from := 0; from <= len(h)-len(n); {
		i := strings.Index(h[from:], n)
		if i < 0 {
			return false
		}
		i += from
		end := i + len(n)
		if (i == 0 || !isAlnum(h[i-1])) && (end == len(h) || !isAlnum(h[end])) {
			return true
		}
		from = i + 1
	}
	return false
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
}

// ErrNoFiles is returned by Load when asked for a table with neither the
// bundled rows nor any file.
var ErrNoFiles = errors.New("no price rows: the bundled table is disabled and pricing.files is empty")

// describe is a short human form of a row for log lines and findings.
func (r Row) describe() string {
	if r.InstanceType == AnyInstanceType {
		return fmt.Sprintf("%s (%s)", r.AcceleratorModel, r.Region)
	}
	return fmt.Sprintf("%s (%s)", r.InstanceType, r.Region)
}

// String is the row's short form: instance type and region.
func (r Row) String() string { return r.describe() }
