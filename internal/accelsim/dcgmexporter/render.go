package dcgmexporter

import (
	"sort"
	"strconv"
	"strings"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/detrand"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/fleet"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/sim"
)

// row is one series label set: an entity and, when mapped, its holder.
// The label text is built once; only values change between scrapes.
type row struct {
	entity int
	mig    bool
	// lag and key place a MIG instance's row among its GPU's (migrows.go).
	lag int
	key uint64
	// labels is everything after the metric name up to, but not including,
	// the closing brace: `{gpu="0",UUID="GPU-…",…,DCGM_FI_DRIVER_VERSION="…"`.
	labels []byte
	// attrs are the Kubernetes (and DRA) attributes, sorted by key.
	attrs []kv
	// attrText is attrs rendered: `,container="…",namespace="…",pod="…"`.
	attrText []byte
	// pod is the row's pod on a GPU under virtual_gpus: its GPU_UTIL and
	// FB_USED are that pod's own, labelled podAttrText (attrText and the
	// pod's pod_uid, as dcgm-exporter labels its per-process rows).
	pod         *fleet.Pod
	podAttrText []byte
	// perProcessOnly is the GPU's own row under virtual_gpus: printed only
	// for GPU_UTIL and FB_USED, the device-level value dcgm-exporter keeps
	// beside the per-pod rows of those two (every other field it prints
	// only once per pod).
	perProcessOnly bool
}

type kv struct{ k, v string }

// Renderer renders one node's /metrics page.
type Renderer struct {
	node *fleet.Node
	rows []row
}

// NewRenderer prepares the label sets of a node's GPU entities.
func NewRenderer(n *fleet.Node) *Renderer {
	r := &Renderer{node: n}
	opts := n.DCGM
	uuidLabel := "UUID"
	if opts.OldNamespace {
		uuidLabel = "uuid"
	}
	var mapped map[any][]kv
	if opts.KubernetesEnabled() {
		mapped = deviceToPod(n, opts.OldNamespace)
	}
	var dra map[any][][]kv
	if opts.KubernetesDRA {
		dra = draMapping(n, opts.OldNamespace)
	}
	var virtual map[*fleet.GPU][]virtualHolder
	if opts.VirtualGPUs && opts.KubernetesEnabled() {
		virtual = virtualHolders(n)
	}
	entity := 0
	add := func(g *fleet.GPU, mi *fleet.MIGInstance) {
		var b strings.Builder
		b.WriteString(`{gpu="`)
		b.WriteString(strconv.Itoa(g.Index))
		b.WriteString(`",` + uuidLabel + `="`)
		b.WriteString(g.UUID)
		b.WriteString(`",pci_bus_id="`)
		b.WriteString(g.PCIBusID)
		b.WriteString(`",device="nvidia`)
		b.WriteString(strconv.Itoa(g.Index))
		b.WriteString(`",modelName="`)
		b.WriteString(n.Model.Name)
		b.WriteString(`"`)
		var key any = g
		lag, readKey := 0, uint64(0)
		if mi != nil {
			key = mi
			lag, readKey = migLag(g, mi), detrand.Hash(0, g.UUID, mi.GIID)
			b.WriteString(`,GPU_I_PROFILE="`)
			b.WriteString(mi.Profile.Name)
			b.WriteString(`",GPU_I_ID="`)
			b.WriteString(strconv.Itoa(mi.GIID))
			b.WriteString(`"`)
		}
		if opts.HostnameLabel != "none" {
			b.WriteString(`,` + opts.HostnameLabel + `="`)
			b.WriteString(n.Name)
			b.WriteString(`"`)
		}
		b.WriteString(`,DCGM_FI_DRIVER_VERSION="`)
		b.WriteString(n.DriverVersion)
		b.WriteString(`"`)
		labels := []byte(b.String())
		if hs := virtual[g]; mi == nil && len(hs) > 0 {
			r.rows = append(r.rows, row{entity: entity, labels: labels, perProcessOnly: true})
			for _, h := range hs {
				attrs := podAttrs(h.pod, h.container, opts.OldNamespace)
				if h.vgpu != "" {
					attrs = append(attrs, kv{"vgpu", h.vgpu})
				}
				sort.Slice(attrs, func(i, j int) bool { return attrs[i].k < attrs[j].k })
				withUID := append(append([]kv(nil), attrs...), kv{"pod_uid", h.pod.UID})
				sort.Slice(withUID, func(i, j int) bool { return withUID[i].k < withUID[j].k })
				r.rows = append(r.rows, row{entity: entity, labels: labels, attrs: attrs, attrText: renderAttrs(nil, attrs),
					pod: h.pod, podAttrText: renderAttrs(nil, withUID)})
			}
			entity++
			return
		}
		variants := dra[key]
		if len(variants) == 0 {
			variants = [][]kv{mapped[key]}
		}
		for _, attrs := range variants {
			sort.Slice(attrs, func(i, j int) bool { return attrs[i].k < attrs[j].k })
			r.rows = append(r.rows, row{entity: entity, mig: mi != nil, lag: lag, key: readKey, labels: labels, attrs: attrs, attrText: renderAttrs(nil, attrs)})
		}
		entity++
	}
	for _, g := range n.GPUs {
		if g.MIGEnabled() {
			for _, mi := range g.MIG {
				add(g, mi)
			}
			continue
		}
		add(g, nil)
	}
	return r
}

func renderAttrs(b []byte, attrs []kv) []byte {
	for _, a := range attrs {
		b = append(b, ',')
		b = append(b, a.k...)
		b = append(b, '=', '"')
		b = append(b, a.v...)
		b = append(b, '"')
	}
	return b
}

// Render appends the exposition of the given entity samples to b. The
// entities must come from sim.World.NodeGPUs for the renderer's node.
func (r *Renderer) Render(b []byte, entities []sim.Entity) []byte {
	for fi := range fields {
		f := &fields[fi]
		if f.id == clockEventsFieldID && !r.node.DCGM.ClockEvents {
			continue
		}
		later := laterReads[f.id]
		start := len(b)
		b = append(b, "# HELP "...)
		b = append(b, f.name...)
		b = append(b, ' ')
		b = append(b, f.help...)
		b = append(b, "\n# TYPE "...)
		b = append(b, f.name...)
		b = append(b, ' ')
		b = append(b, f.typ...)
		b = append(b, '\n')
		header := len(b)
		perProcess := f.id == gpuUtilFieldID || f.id == fbUsedFieldID
		for ri := range r.rows {
			rw := &r.rows[ri]
			s := &entities[rw.entity].Sample
			if s.Lost && f.id != xidFieldID {
				continue // DCGM returns blank values for a lost GPU
			}
			if rw.mig && !f.onMIG {
				continue
			}
			if rw.perProcessOnly && !perProcess {
				continue
			}
			iv, fv, ok := f.get(s)
			if !ok {
				continue
			}
			attrText := rw.attrText
			if rw.pod != nil && perProcess {
				iv, attrText = podReading(&entities[rw.entity], rw.pod, f.id, iv), rw.podAttrText
			}
			if later != nil && rw.lag > 0 {
				iv, fv = later(s, rw.lag, rw.key)
			}
			b = append(b, f.name...)
			b = append(b, rw.labels...)
			if f.id == xidFieldID {
				b = renderAttrs(b, mergeXID(rw.attrs, iv))
			} else {
				b = append(b, attrText...)
			}
			b = append(b, '}', ' ')
			if f.isF {
				b = strconv.AppendFloat(b, fv, 'f', 6, 64)
			} else {
				b = strconv.AppendInt(b, iv, 10)
			}
			b = append(b, '\n')
		}
		if len(b) == header {
			b = b[:start] // no series: the exporter prints no family
		}
	}
	return b
}

// Fields dcgm-exporter 4.5+ measures per pod on a time-sliced GPU.
const (
	gpuUtilFieldID = 203
	fbUsedFieldID  = 252
)

// podReading is one pod's own GPU_UTIL or FB_USED on a GPU: its share of
// the device's processes where several pods use it, else the device's
// value (own), which is then the one pod's.
func podReading(e *sim.Entity, p *fleet.Pod, field int, own int64) int64 {
	if len(e.PerPod) == 0 {
		return own
	}
	for _, u := range e.PerPod {
		if u.Pod == p {
			if field == gpuUtilFieldID {
				return u.GPUUtil
			}
			return u.FBUsed
		}
	}
	return 0
}

// virtualHolder is one row's holder under virtual_gpus.
type virtualHolder struct {
	pod       *fleet.Pod
	container string
	vgpu      string // the replica of a time-sliced GPU; "" for a whole one
}

// virtualHolders are, per whole GPU, its holders as dcgm-exporter's
// KUBERNETES_VIRTUAL_GPUS mapping (toDeviceToSharingPods) sees them: one
// per container and nvidia.com/gpu device id, in the kubelet's order, so
// a pod holding two replicas of one GPU has two (vgpu "0" and "1").
// Renamed replicas (nvidia.com/gpu.shared) are not nvidia.com/gpu and stay
// unmapped, as in the default mapping.
func virtualHolders(n *fleet.Node) map[*fleet.GPU][]virtualHolder {
	byUUID := map[string]*fleet.GPU{}
	for _, g := range n.GPUs {
		if !g.MIGEnabled() {
			byUUID[g.UUID] = g
		}
	}
	out := map[*fleet.GPU][]virtualHolder{}
	for _, p := range n.Pods {
		for _, c := range p.Containers {
			for _, d := range c.Devices {
				if d.Resource != fleet.ResourceGPU {
					continue
				}
				for _, id := range d.IDs {
					uuid, vgpu, _ := strings.Cut(id, "::")
					if g, ok := byUUID[uuid]; ok {
						out[g] = append(out[g], virtualHolder{pod: p, container: c.Name, vgpu: vgpu})
					}
				}
			}
		}
	}
	return out
}

// mergeXID adds the exporter's err_code and err_msg to the sorted attributes.
func mergeXID(attrs []kv, code int64) []kv {
	out := make([]kv, 0, len(attrs)+2)
	out = append(out, attrs...)
	out = append(out, kv{"err_code", strconv.FormatInt(code, 10)}, kv{"err_msg", xidMessage(code)})
	sort.Slice(out, func(i, j int) bool { return out[i].k < out[j].k })
	return out
}

// deviceToPod is the exporter's default Kubernetes mapping: it walks the
// kubelet's List response in order and records, per device, the last
// container that holds it. Only nvidia.com/gpu and nvidia.com/mig-*
// resources are considered, so nvidia.com/gpu.shared replicas stay unmapped
// (the exporter needs --nvidia-resource-names for them).
func deviceToPod(n *fleet.Node, old bool) map[any][]kv {
	out := map[any][]kv{}
	byUUID := map[string]*fleet.GPU{}
	byMIG := map[string]*fleet.MIGInstance{}
	for _, g := range n.GPUs {
		byUUID[g.UUID] = g
		for _, mi := range g.MIG {
			byMIG[mi.UUID] = mi
		}
	}
	for _, p := range n.Pods {
		for _, c := range p.Containers {
			for _, d := range c.Devices {
				if d.Resource != fleet.ResourceGPU && !strings.HasPrefix(d.Resource, fleet.ResourceMIGPrefix) {
					continue
				}
				for _, id := range d.IDs {
					id, _, _ = strings.Cut(id, "::")
					var key any
					if mi, ok := byMIG[id]; ok {
						key = mi
					} else if g, ok := byUUID[id]; ok {
						key = g
					} else {
						continue
					}
					out[key] = podAttrs(p, c.Name, old)
				}
			}
		}
	}
	return out
}

// draMapping is the exporter's --kubernetes-enable-dra mapping: every
// consumer of a claim gets its own copy of the device's series.
func draMapping(n *fleet.Node, old bool) map[any][][]kv {
	out := map[any][][]kv{}
	for _, p := range n.Pods {
		for _, c := range p.Containers {
			for _, cl := range c.Claims {
				base := func(device string) []kv {
					return append(podAttrs(p, c.Name, old),
						kv{"dra_claim_name", cl.Name}, kv{"dra_claim_namespace", cl.Namespace},
						kv{"dra_driver_name", fleet.DRADriverGPU}, kv{"dra_pool_name", n.Name}, kv{"dra_device_name", device})
				}
				for _, g := range cl.GPUs {
					out[g] = append(out[g], base(g.DRAName()))
				}
				for _, mi := range cl.MIG {
					attrs := append(base(mi.DRAName()), kv{"dra_mig_profile", mi.Profile.Name}, kv{"dra_mig_device_uuid", mi.UUID})
					out[mi] = append(out[mi], attrs)
				}
			}
		}
	}
	return out
}

func podAttrs(p *fleet.Pod, container string, old bool) []kv {
	if old {
		return []kv{{"pod_name", p.Name}, {"pod_namespace", p.Namespace}, {"container_name", container}}
	}
	return []kv{{"pod", p.Name}, {"namespace", p.Namespace}, {"container", container}}
}
