package exportersource

import (
	"cmp"
	"slices"
	"strconv"

	"github.com/otelcol-accel/otelcol-accel/internal/mig"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/model"
)

// group gathers the values taken for one resource while its sample is
// built.
type group struct {
	s model.Sample

	fbUsed, fbFree, fbReserved, fbTotal, fbUsedRatio model.Value
	// gpuFBUsed is the GPU's own FB_USED under per_pod_usage: no total of
	// memory use is emitted beside the pods' points, but with FB_FREE and
	// FB_RESERVED it is still the GPU's size.
	gpuFBUsed  model.Value
	pcieLegacy [model.NumDirections]model.Value
}

// fbUsedField is DCGM_FI_DEV_FB_USED's entry in fields.
var fbUsedField = fieldIndex["DCGM_FI_DEV_FB_USED"]

// finish builds one sample per resource from the rows taken, and orders
// them: by GPU index, each GPU before its MIG instances.
func (p *page) finish() []model.Sample {
	p.mergeAliases()
	out := make([]model.Sample, 0, len(p.resources))
	for _, r := range p.resources {
		if !r.merged {
			out = append(out, p.sample(r))
		}
	}
	slices.SortStableFunc(out, func(a, b model.Sample) int {
		return cmp.Or(
			cmp.Compare(a.Index, b.Index),
			cmp.Compare(parentOf(a), parentOf(b)),
			compareBool(a.IsMIG(), b.IsMIG()),
			cmp.Compare(a.GPUInstanceID, b.GPUInstanceID),
			cmp.Compare(a.HWID, b.HWID),
		)
	})
	// In that order, so that the last bit of a share does not depend on
	// the order of the page.
	fitMIGShares(out)
	return out
}

// mergeAliases folds an instance known only by its DRA MIG UUID into the
// one rows with GPU_I_ID name, when a row carried both.
func (p *page) mergeAliases() {
	for _, r := range p.resources {
		if r.migUUID == "" {
			continue
		}
		pos, ok := p.migAlias[r.migUUID]
		if !ok {
			continue
		}
		into := p.resources[pos]
		for fi := range r.values {
			if c := r.values[fi]; c.ok {
				p.take(&into.values[fi], c.v, c.r)
			}
		}
		for k, c := range r.extra {
			p.takeExtra(into, k, c.v, c.r)
		}
		for _, h := range r.holders {
			into.addHolder(h)
		}
		if into.id.Profile == "" {
			into.id.Profile = r.id.Profile
		}
		r.merged = true
	}
}

// sample applies the values taken for a resource and derives the rest.
func (p *page) sample(r *resource) model.Sample {
	g := &p.scratch
	*g = group{s: model.Sample{Identity: r.id}}
	perPod := p.applyExtra(r, &g.s)
	for fi, c := range r.values {
		f := &fields[fi]
		if !c.ok || f.apply == nil {
			continue
		}
		if perPod[fi] {
			// Under per_pod_usage a family split per pod has no total
			// beside its pods' points. dcgm-exporter keeps the GPU's own
			// FB_USED row beside them (createPerProcessMetrics), which
			// still gives the GPU's memory size.
			if fi == fbUsedField {
				g.gpuFBUsed = model.Of(c.v)
			}
			continue
		}
		f.apply(g, c.v, units{violationScale: p.violationScale(f.name)})
	}
	g.finishMemory()
	for dir, v := range g.pcieLegacy {
		if v.OK && !g.s.LinkRate[model.LinkPCIe][dir].OK {
			g.s.LinkRate[model.LinkPCIe][dir] = v
		}
	}
	p.hints(r, &g.s.Identity)
	g.s.Partitioned = !g.s.IsMIG() && r.instances > 0
	g.s.KeepOwn()
	// A value near the float64 limit can overflow in unit conversion; it is
	// dropped rather than sent as Inf.
	g.s.DropNonFinite()
	return g.s
}

// applyExtra stores the per-XID and per-pod series, in a fixed order, and
// says which fields were split per pod.
func (p *page) applyExtra(r *resource, s *model.Sample) map[int]bool {
	if len(r.extra) == 0 {
		return nil
	}
	keys := make([]extraKey, 0, len(r.extra))
	for k := range r.extra {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b extraKey) int { return cmp.Or(cmp.Compare(a.field, b.field), cmp.Compare(a.key, b.key)) })
	perPod := map[int]bool{}
	for _, k := range keys {
		f, c := &fields[k.field], r.extra[k]
		switch {
		case f.byXID:
			code, _ := strconv.Atoi(k.key) // written by row from an int
			s.XIDWindow = append(s.XIDWindow, model.XIDWindowCount{Code: code, Count: int64(c.v)})
		case f.perPod != nil:
			f.perPod(s, k.key, c.v)
			perPod[k.field] = true
		}
	}
	slices.SortFunc(s.XIDWindow, func(a, b model.XIDWindowCount) int { return cmp.Compare(a.Code, b.Code) })
	return perPod
}

// hints sets the Kubernetes and DRA attribution hints when the resource's
// rows name exactly one holder: a GPU shared by several pods or claims
// gives no single one (the attributes processor splits it).
func (p *page) hints(r *resource, id *model.Identity) {
	var pod, claim *holder
	pods, claims, containers := 0, 0, 0
	for _, h := range r.holders {
		hd := &p.holders[h]
		if hd.pod != "" {
			switch {
			case pod == nil:
				pod, pods, containers = hd, 1, 1
			case hd.namespace != pod.namespace || hd.pod != pod.pod:
				pods++
			case hd.container != pod.container:
				containers++
			}
		}
		if hd.draClaim != "" {
			switch {
			case claim == nil:
				claim, claims = hd, 1
			case hd.draClaimNS != claim.draClaimNS || hd.draClaim != claim.draClaim || hd.draDriver != claim.draDriver ||
				hd.draPool != claim.draPool || hd.draDevice != claim.draDevice:
				claims++
			}
		}
	}
	if pods == 1 {
		id.Pod, id.Namespace = pod.pod, pod.namespace
		if containers == 1 {
			id.Container = pod.container
		}
	}
	if claims == 1 {
		id.DRA = model.DRAHint{
			ClaimName: claim.draClaim, ClaimNamespace: claim.draClaimNS,
			Driver: claim.draDriver, Pool: claim.draPool, Device: claim.draDevice,
		}
	}
}

// fitMIGShares sets each MIG instance's share of its GPU from its profile,
// fitted per GPU (mig.Fit) so that a layout never adds up to more than the
// GPU. The GPU's memory comes from its own rows, else from its model name.
func fitMIGShares(samples []model.Sample) {
	gpuMemory := map[string]float64{}
	for _, s := range samples {
		if !s.IsMIG() && s.MemTotal.OK {
			gpuMemory[s.HWID] = s.MemTotal.V
		}
	}
	totals := map[string]float64{} // parent → sum of its instances' shares
	for i := range samples {
		s := &samples[i]
		if s.IsMIG() {
			s.Share = model.MIGShare(s.Profile, gpuMemory[s.Parent], s.Model)
			totals[s.Parent] += s.Share
		}
	}
	for i := range samples {
		if s := &samples[i]; s.IsMIG() {
			s.Share *= mig.FitFactor(totals[s.Parent])
		}
	}
}

func parentOf(s model.Sample) string {
	if s.Parent != "" {
		return s.Parent
	}
	return s.HWID
}

func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
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
	case g.gpuFBUsed.OK && g.fbFree.OK:
		g.s.MemTotal = model.Of((g.gpuFBUsed.V + g.fbFree.V + g.fbReserved.V) * mib)
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
