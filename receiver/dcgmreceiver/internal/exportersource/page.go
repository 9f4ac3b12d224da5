package exportersource

import (
	"cmp"
	"fmt"
	"math"
	"strconv"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/model"
)

// page collects one response: a resource per GPU and per MIG instance, and
// for each of their values the one row it is taken from.
//
// dcgm-exporter prints a family once per entity and holder, so one value can
// arrive on several rows: a GPU shared by pods repeats every family once per
// pod (per vgpu with KUBERNETES_VIRTUAL_GPUS, per consumer of a DRA claim),
// and a GPU in MIG mode repeats the GPU's own families (power, energy,
// temperatures, clocks, errors…) once per MIG instance, read at slightly
// different moments. Each value is taken from exactly one row, the lowest
// by rank, so the result does not depend on the order of the page.
type page struct {
	d         *Decoder
	resources []*resource
	byKey     map[string]int32
	holders   []holder // holders[nobody] is the empty holder
	holderIDs map[string]int32
	// migAlias maps a MIG UUID (dra_mig_device_uuid) to the instance that
	// rows with GPU_I_ID labels name, so both forms are one resource.
	migAlias map[string]int32
	helpSec  map[string]float64
	key, id  []byte // scratch
	// scratch is the group sample builds in; spare the values slices of
	// the last scrape's resources. A page lives as long as its Decoder and
	// is reset for each response, so that a node's scrape does not
	// allocate again per device what it allocated the last time.
	scratch group
	spare   [][]choice
}

func newPage(d *Decoder) *page {
	return &page{
		d: d, byKey: map[string]int32{}, holders: []holder{{}}, holderIDs: map[string]int32{},
		migAlias: map[string]int32{}, helpSec: map[string]float64{},
	}
}

// reset readies the page for the next response: nothing of the last one
// is kept but the room it took.
func (p *page) reset() {
	for _, r := range p.resources {
		clear(r.values)
		p.spare = append(p.spare, r.values)
	}
	clear(p.resources)
	p.resources = p.resources[:0]
	clear(p.byKey)
	clear(p.holders)
	p.holders = p.holders[:1]
	clear(p.holderIDs)
	clear(p.migAlias)
	clear(p.helpSec)
	p.scratch = group{}
}

// values returns a cleared slice with room for every field.
func (p *page) values() []choice {
	if n := len(p.spare); n > 0 {
		v := p.spare[n-1]
		p.spare[n-1] = nil
		p.spare = p.spare[:n-1]
		return v
	}
	return make([]choice, len(fields))
}

// resource is one GPU or MIG instance of the page.
type resource struct {
	id  model.Identity
	pos int32
	// migUUID is set on an instance known only by dra_mig_device_uuid.
	migUUID string
	// values holds the row taken for each field; extra the per-pod and
	// per-XID series.
	values []choice
	extra  map[extraKey]choice
	// holders are those named on the resource's own rows, once each.
	holders []int32
	heldBy  map[int32]bool
	// instances counts the MIG instances of a GPU.
	instances int
	merged    bool
}

type extraKey struct {
	field int
	key   string // "<namespace>/<pod>", or the XID code
}

// choice is the value taken for one field of a resource, and from which row.
type choice struct {
	v  float64
	r  rank
	ok bool
}

// rank orders the rows that report one value; the lowest is taken:
//
//  1. the resource's own row: for a GPU, a row of the GPU itself before any
//     MIG instance's row of the GPU's families;
//  2. among MIG instances' rows, the lowest GPU-instance id (an instance
//     known only by its DRA MIG UUID comes after those, by UUID);
//  3. a row without a holder, then holders by namespace, pod, container,
//     vgpu and DRA claim.
type rank struct {
	fromInstance bool
	gi           int
	instance     int32 // the resource the row names
	holder       int32
}

func (p *page) less(a, b rank) bool {
	if a.fromInstance != b.fromInstance {
		return !a.fromInstance
	}
	if c := cmp.Or(cmp.Compare(a.gi, b.gi),
		cmp.Compare(p.resources[a.instance].id.HWID, p.resources[b.instance].id.HWID)); c != 0 {
		return c < 0
	}
	if a.holder == b.holder {
		return false
	}
	if a.holder == nobody || b.holder == nobody {
		return a.holder == nobody
	}
	return p.holders[a.holder].compare(p.holders[b.holder]) < 0
}

// take keeps v from a row of rank r if that row ranks before the one kept.
func (p *page) take(c *choice, v float64, r rank) {
	if !c.ok || p.less(r, c.r) {
		*c = choice{v: v, r: r, ok: true}
	}
}

func (p *page) takeExtra(res *resource, k extraKey, v float64, r rank) {
	if res.extra == nil {
		res.extra = map[extraKey]choice{}
	}
	c := res.extra[k]
	p.take(&c, v, r)
	res.extra[k] = c
}

// holderOf interns the line's holder.
func (p *page) holderOf(l *lineLabels) int32 {
	if !l.someone() {
		return nobody
	}
	p.key = l.holderKey(p.key[:0])
	if id, ok := p.holderIDs[string(p.key)]; ok {
		return id
	}
	id := int32(len(p.holders))
	p.holders = append(p.holders, l.holder())
	p.holderIDs[string(p.key)] = id
	return id
}

// Resource kinds keep a GPU and a MIG instance apart even if their ids
// collide.
const (
	kindGPU      = 'g'
	kindInstance = 'i'
)

func (p *page) lookup(kind byte, hwID []byte, create func() *resource) *resource {
	p.key = append(append(p.key[:0], kind), hwID...)
	if pos, ok := p.byKey[string(p.key)]; ok {
		return p.resources[pos]
	}
	r := create()
	if r == nil {
		return nil
	}
	r.pos = int32(len(p.resources))
	r.values = p.values()
	p.resources = append(p.resources, r)
	p.byKey[string(p.key)] = r.pos
	return r
}

// gpu returns the GPU's resource, nil when the device filter leaves it out.
func (p *page) gpu(l *lineLabels, idx int) *resource {
	return p.lookup(kindGPU, l.uuid, func() *resource {
		uuid := string(l.uuid)
		if !p.d.Filter.Match(idx, uuid) {
			return nil
		}
		return &resource{id: model.Identity{
			HWID: uuid, Index: idx, HostName: p.d.HostName,
			PartitionType: accelschema.PartitionNone, Share: 1,
			GPUInstanceID: -1, ComputeInstanceID: -1,
		}}
	})
}

// instance returns the MIG instance a row names, nil when the filter
// leaves it out; gi is -1 for an instance known only by its DRA MIG UUID.
func (p *page) instance(l *lineLabels, idx, gi int, parent *resource) *resource {
	hwID := l.migInstanceUUID()
	if gi >= 0 {
		p.id = strconv.AppendInt(append(append(p.id[:0], l.uuid...), "/gi"...), int64(gi), 10)
		hwID = p.id
	}
	r := p.lookup(kindInstance, hwID, func() *resource {
		uuid := string(l.uuid)
		id := model.Identity{
			HWID: string(hwID), Parent: uuid, Index: idx, HostName: p.d.HostName,
			PartitionType: accelschema.PartitionMIG,
			GPUInstanceID: gi, ComputeInstanceID: -1,
			// Share comes from the profile, in finish.
		}
		if gi >= 0 {
			id.PartitionID = strconv.Itoa(gi)
		}
		if !p.d.Filter.Match(idx, uuid, id.HWID) {
			return nil
		}
		r := &resource{id: id}
		if gi < 0 {
			r.migUUID = id.HWID
		}
		if parent != nil {
			parent.instances++
		}
		return r
	})
	if r != nil && gi >= 0 {
		if uuid := l.migInstanceUUID(); uuid != nil {
			p.migAlias[string(uuid)] = r.pos
		}
	}
	return r
}

// parseGI reads GPU_I_ID; -1 when the row has none.
func parseGI(l *lineLabels) (int, error) {
	if len(l.gi) == 0 {
		return -1, nil
	}
	gi, err := strconv.Atoi(string(l.gi))
	if err != nil || gi < 0 {
		return 0, fmt.Errorf("GPU_I_ID %q is not a GPU-instance id", l.gi)
	}
	return gi, nil
}

// fill takes identity details from a row; the first non-empty value wins
// (dcgm-exporter repeats them on every line). A MIG instance's profile is
// GPU_I_PROFILE, else the DRA claim's dra_mig_profile.
func (r *resource) fill(l *lineLabels) {
	id := &r.id
	if id.IsMIG() {
		setOnce(&id.Profile, l.profile)
		setOnce(&id.Profile, l.draMIGProfile)
	}
	setOnce(&id.PCIBusID, l.busID)
	setOnce(&id.Model, l.model)
	setOnce(&id.HostName, l.host)
	setOnce(&id.DriverVersion, l.driver)
}

func (r *resource) addHolder(h int32) {
	if h == nobody || r.heldBy[h] {
		return
	}
	if r.heldBy == nil {
		r.heldBy = map[int32]bool{}
	}
	r.heldBy[h] = true
	r.holders = append(r.holders, h)
}

func setOnce(dst *string, v []byte) {
	if *dst == "" && len(v) > 0 {
		*dst = string(v)
	}
}

// noInstance ranks the rows of an instance without a GPU-instance id after
// every instance that has one.
const noInstance = math.MaxInt
