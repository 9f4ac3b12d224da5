package promstore

import (
	"cmp"
	"math"
	"strconv"
	"time"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorinsightsexporter/internal/fleet"
	s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/xid"
)

type serverKey struct{ endpoint, model, podUID, pod string }

type aux struct{ v *float64 }

type tpotAux struct{ q fleet.Quantiles }

// builder gathers the queries' samples into one snapshot, keyed as the
// memory backend keys its model.
type builder struct {
	readings  []pendingReading
	resources map[resourceKey]*fleet.Resource
	order     []resourceKey
	gr        map[resourceKey]*aux
	servers   map[serverKey]*fleet.Server
	tpots     map[*fleet.Server]*tpotAux
	mpsByNode map[string]*fleet.MPS
	causes    map[*fleet.Resource]*causes
}

// causes are a device's failure causes by its error counters: the most
// severe that grew recently, and the most severe it ever counted.
type causes struct{ recent, ever *xid.Cause }

func newBuilder() *builder {
	return &builder{resources: map[resourceKey]*fleet.Resource{}, gr: map[resourceKey]*aux{},
		servers: map[serverKey]*fleet.Server{}, tpots: map[*fleet.Server]*tpotAux{}, mpsByNode: map[string]*fleet.MPS{},
		causes: map[*fleet.Resource]*causes{}}
}

func (b *builder) resource(labels map[string]string) *fleet.Resource {
	id := identityOf(labels)
	k := keyOf(&id)
	r := b.resources[k]
	if r == nil {
		r = &fleet.Resource{Identity: id}
		b.resources[k] = r
		b.order = append(b.order, k)
	}
	return r
}

func (b *builder) grEngine(r *fleet.Resource) *aux {
	k := keyOf(&r.Identity)
	a := b.gr[k]
	if a == nil {
		a = &aux{}
		b.gr[k] = a
	}
	return a
}

func (b *builder) status(samples []sample) {
	for _, x := range samples {
		b.resource(x.labels).Health = x.labels[label(s.AttrHWState)]
	}
}

// errors reads error counters into each device's causes: recent ones grew
// after the time after (a health event newer than it is about this failure
// or a later one).
func (b *builder) errors(recent bool, after time.Time) func([]sample) {
	return func(samples []sample) {
		for _, x := range samples {
			r := b.resource(x.labels)
			code, _ := strconv.Atoi(x.labels[label(s.AttrXID)])
			cl, ok := xid.ForError(x.labels[label(s.AttrErrorType)], code, r.Kind == s.KindAWSNeuron)
			if !ok || cl.State == s.HWStateOK {
				continue
			}
			c := b.causes[r]
			if c == nil {
				c = &causes{}
				b.causes[r] = c
			}
			slot := &c.ever
			if recent {
				slot = &c.recent
			}
			if *slot == nil || xid.Worse((*slot).State, cl.State) != (*slot).State {
				*slot = &xid.Cause{Classification: cl, After: after}
			}
		}
	}
}

// gauge sets a field from each sample: several series of one resource add
// up (sum) or give the highest.
func (b *builder) gauge(field func(*fleet.Resource) **float64, sum bool) func([]sample) {
	return func(samples []sample) {
		for _, x := range samples {
			if math.IsNaN(x.value) {
				continue
			}
			p := field(b.resource(x.labels))
			v := x.value
			switch {
			case *p == nil:
				*p = &v
			case sum:
				**p += v
			case v > **p:
				**p = v
			}
		}
	}
}

// pendingReading is a chart value of one resource being folded from its
// series, written to its field when the snapshot is made.
type pendingReading struct {
	r     *fleet.Resource
	field func(*fleet.Resource) **float64
	acc   *fleet.Reading
}

// reading folds a chart's series per resource (fleet.Reading).
func (b *builder) reading(chart string, field func(*fleet.Resource) **float64) func([]sample) {
	return func(samples []sample) {
		acc := map[*fleet.Resource]*fleet.Reading{}
		for _, x := range samples {
			if math.IsNaN(x.value) {
				continue
			}
			r := b.resource(x.labels)
			a := acc[r]
			if a == nil {
				a = &fleet.Reading{Chart: chart}
				acc[r] = a
				b.readings = append(b.readings, pendingReading{r, field, a})
			}
			a.Add(x.value, perProcess(x.labels))
		}
	}
}

func (b *builder) waste(samples []sample) {
	for _, x := range samples {
		if math.IsNaN(x.value) {
			continue
		}
		r := b.resource(x.labels)
		if r.WastePerHour == nil {
			r.WastePerHour = map[string]float64{}
		}
		r.WastePerHour[x.labels[label(s.AttrWasteReason)]] += x.value
	}
}

func (b *builder) mps(set func(*fleet.MPS, float64)) func([]sample) {
	return func(samples []sample) {
		for _, x := range samples {
			id := identityOf(x.labels)
			m := b.mpsByNode[id.Node]
			if m == nil {
				m = &fleet.MPS{Node: id.Node, Cluster: id.Cluster}
				b.mpsByNode[id.Node] = m
			}
			set(m, x.value)
		}
	}
}

func (b *builder) serverOf(labels map[string]string) *fleet.Server {
	sv := fleet.ServerOf(func(k string) string { return labels[label(k)] })
	k := serverKey{sv.Endpoint, sv.Model, sv.PodUID, sv.Namespace + "/" + sv.Pod}
	x := b.servers[k]
	if x == nil {
		x = &sv
		b.servers[k] = x
	}
	return x
}

func (b *builder) tpot(x *fleet.Server) *tpotAux {
	a := b.tpots[x]
	if a == nil {
		a = &tpotAux{}
		b.tpots[x] = a
	}
	return a
}

func (b *builder) server(field func(*fleet.Server) **float64) func([]sample) {
	return func(samples []sample) {
		for _, x := range samples {
			if math.IsNaN(x.value) || math.IsInf(x.value, 0) {
				continue // histogram_quantile of no observations
			}
			v := x.value
			*field(b.serverOf(x.labels)) = &v
		}
	}
}

func (b *builder) snapshot(now time.Time) *fleet.Snapshot {
	snap := &fleet.Snapshot{At: now.UTC()}
	for _, p := range b.readings {
		if v, ok := p.acc.Value(); ok {
			*p.field(p.r) = &v
		}
	}
	for _, k := range b.order {
		r := b.resources[k]
		if c := b.causes[r]; c != nil {
			r.Cause = cmp.Or(c.recent, c.ever)
		}
		if r.Utilization == nil {
			if a := b.gr[k]; a != nil {
				r.Utilization = a.v
			}
		}
		snap.Resources = append(snap.Resources, *r)
	}
	for _, x := range b.servers {
		if x.ITL.P50 == nil {
			if a := b.tpots[x]; a != nil {
				x.ITL = a.q
			}
		}
		snap.Servers = append(snap.Servers, *x)
	}
	for _, m := range b.mpsByNode {
		snap.MPS = append(snap.MPS, *m)
	}
	return snap
}
