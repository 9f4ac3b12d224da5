package index

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/podresources"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/deviceid"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/ecs"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/kube"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/nvmlmig"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/static"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/workload"
)

// Input is everything one build reads. Nil or empty parts are sources that
// are off or did not answer.
type Input struct {
	NodeName    string
	ClusterName string
	// HostNames are the names a static mapping row's host column may use.
	HostNames []string

	// PodResources is the kubelet's List; PodResourcesOK says it answered.
	PodResources   []podresources.Pod
	PodResourcesOK bool
	// Allocatable is GetAllocatableResources (nil when unsupported).
	Allocatable []podresources.Devices

	Kube *kube.Snapshot

	ECS   []ecs.Container
	ECSOK bool

	Static []static.Row

	// Authoritative: every enabled device source answered, so unheld
	// devices are unallocated.
	Authoritative bool

	Topology *Topology
	MIG      nvmlmig.Resolver // optional

	Workload workload.Config
	// InferencePods are pods seen serving gen_ai metrics (by UID and by
	// ns/name); with Workload.InferWorkloadType they default to inference.
	InferencePods map[string]bool
	// PlaceholderNamespaces hold schedulers' reservation pods (Run:ai's
	// runai-reservation): their pods mark a device reserved, not allocated.
	PlaceholderNamespaces []string
}

// source priority: a device held according to Kubernetes is not also held
// according to ECS or the mapping file.
const (
	srcKubernetes = iota
	srcECS
	srcStatic
)

// claim is one consumer's hold on one device key.
type claim struct {
	consumer *Consumer
	key      string
	source   int
	mode     string   // "" exclusive, time_slicing, mps, dra
	replicas []string // replica ids held (time-slicing / MPS)
	maxRep   int
	resource string // extended resource name (replica count and strategy labels)
	weight   float64
	extra    []KV
	partID   string
}

type builder struct {
	in     Input
	ix     *Index
	topo   *Topology
	claims map[string][]*claim
	// replicas seen per device key, from Allocatable and List
	allocReplicas map[string]int
	seenReplicas  map[string]map[string]bool
	node          *corev1.Node
	podMeta       map[string]*workload.Meta // ns/name
	consumers     map[string]*Consumer
	// unplacedMIG: held MIG devices with no known <parent>/gi<N> position,
	// by MIG UUID (or DRA device, for a MIG device created on prepare).
	unplacedMIG map[string]bool
}

// Build makes an index from one snapshot of the sources.
func Build(in Input) *Index {
	b := &builder{
		in:            in,
		ix:            Empty(),
		topo:          in.Topology,
		claims:        map[string][]*claim{},
		allocReplicas: map[string]int{},
		seenReplicas:  map[string]map[string]bool{},
		podMeta:       map[string]*workload.Meta{},
		consumers:     map[string]*Consumer{},
		unplacedMIG:   map[string]bool{},
	}
	if b.topo == nil {
		b.topo = NewTopology()
	}
	b.ix.authoritative = in.Authoritative
	if in.Kube != nil {
		b.node = in.Kube.Node
		for _, p := range in.Kube.Pods {
			m := workload.Resolve(p, in.Workload)
			b.podMeta[p.Namespace+"/"+p.Name] = &m
			if m.InvalidWorkloadType != "" {
				if b.ix.InvalidWorkloadTypes == nil {
					b.ix.InvalidWorkloadTypes = map[string]string{}
				}
				b.ix.InvalidWorkloadTypes[p.Namespace+"/"+p.Name] = m.InvalidWorkloadType
			}
		}
	}
	b.nodeAttrs()
	b.pods()
	b.allocatable()
	b.kubeletClaims()
	b.draClaims()
	b.claimHolders()
	b.ecsClaims()
	b.staticClaims()
	b.entries()
	b.migParents()
	b.podIPs()
	b.holdings()
	b.ix.unplacedMIG = len(b.unplacedMIG)
	b.ix.Stats.Devices = len(b.ix.entries)
	b.ix.Stats.Consumers = len(b.consumers)
	b.ix.Stats.Pods = len(b.ix.podsByName)
	return b.ix
}

func (b *builder) nodeAttrs() {
	var kv []KV
	if b.in.NodeName != "" {
		kv = append(kv, Str(accelschema.AttrK8sNodeName, b.in.NodeName))
	}
	if b.in.ClusterName != "" {
		kv = append(kv, Str(accelschema.AttrK8sClusterName, b.in.ClusterName))
	}
	if b.node != nil {
		l := b.node.Labels
		if v := firstLabel(l, "node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type"); v != "" {
			kv = append(kv, Str(accelschema.AttrHostType, v))
		}
		if v := firstLabel(l, "topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/region"); v != "" {
			kv = append(kv, Str(accelschema.AttrCloudRegion, v))
		}
		if v := firstLabel(l, "topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone"); v != "" {
			kv = append(kv, Str(accelschema.AttrCloudZone, v))
		}
		// aws:///us-east-1a/i-0abc… names the provider and the instance.
		if rest, ok := strings.CutPrefix(b.node.Spec.ProviderID, "aws://"); ok {
			kv = append(kv, Str(accelschema.AttrCloudProvider, "aws"))
			if i := strings.LastIndexByte(rest, '/'); i >= 0 && strings.HasPrefix(rest[i+1:], "i-") {
				kv = append(kv, Str(accelschema.AttrHostID, rest[i+1:]))
			}
		}
	}
	b.ix.NodeAttrs = kv
}

func firstLabel(l map[string]string, keys ...string) string {
	for _, k := range keys {
		if v := l[k]; v != "" {
			return v
		}
	}
	return ""
}

// pods indexes every pod PodResources or the API knows on this node.
func (b *builder) pods() {
	add := func(ns, name string) *Pod {
		key := ns + "/" + name
		if p, ok := b.ix.podsByName[key]; ok {
			return p
		}
		p := &Pod{Namespace: ns, Name: name}
		p.Attrs = b.podAttrs(ns, name)
		p.Placeholder = slices.Contains(b.in.PlaceholderNamespaces, ns)
		if m := b.podMeta[key]; m != nil {
			p.UID = m.UID
			b.ix.podsByUID[m.UID] = p
		}
		b.ix.podsByName[key] = p
		b.ix.knownPods[key] = true
		return p
	}
	if b.in.PodResourcesOK {
		b.ix.podsAuthority = true
		for _, p := range b.in.PodResources {
			add(p.Namespace, p.Name)
		}
	}
	if b.in.Kube != nil {
		if len(b.in.Kube.Pods) > 0 {
			b.ix.podsAuthority = true
		}
		for _, p := range b.in.Kube.Pods {
			add(p.Namespace, p.Name)
		}
	}
}

// podAttrs are the attributes of a pod, without its container.
func (b *builder) podAttrs(ns, name string) []KV {
	kv := []KV{Str(accelschema.AttrK8sNamespaceName, ns), Str(accelschema.AttrK8sPodName, name)}
	m := b.podMeta[ns+"/"+name]
	wlType := accelschema.WorkloadUnknown
	if m == nil {
		return append(kv, Str(accelschema.AttrWorkloadType, wlType))
	}
	kv = append(kv, Str(accelschema.AttrK8sPodUID, m.UID))
	for _, o := range []struct{ key, val string }{
		{accelschema.AttrK8sDeploymentName, m.Deployment},
		{accelschema.AttrK8sReplicaSetName, m.ReplicaSet},
		{accelschema.AttrK8sStatefulSetName, m.StatefulSet},
		{accelschema.AttrK8sDaemonSetName, m.DaemonSet},
		{accelschema.AttrK8sJobName, m.Job},
		{accelschema.AttrK8sCronJobName, m.CronJob},
		{accelschema.AttrTeam, m.Team},
		{accelschema.AttrWorkloadName, m.WorkloadName},
	} {
		if o.val != "" {
			kv = append(kv, Str(o.key, o.val))
		}
	}
	switch {
	case m.WorkloadType != "":
		wlType = m.WorkloadType
	case b.in.Workload.InferWorkloadType && (b.in.InferencePods[m.UID] || b.in.InferencePods[ns+"/"+name]):
		wlType = accelschema.WorkloadInference
	}
	kv = append(kv, Str(accelschema.AttrWorkloadType, wlType))
	for _, l := range m.Labels {
		kv = append(kv, Str(accelschema.K8sPodLabelPrefix+l[0], l[1]))
	}
	return kv
}

// k8sConsumer returns the consumer for one container of a pod.
func (b *builder) k8sConsumer(ns, pod, container string) *Consumer {
	id := "k8s/" + ns + "/" + pod + "/" + container
	if c, ok := b.consumers[id]; ok {
		return c
	}
	c := &Consumer{ID: id, Placeholder: slices.Contains(b.in.PlaceholderNamespaces, ns)}
	c.Attrs = append(c.Attrs, b.podAttrs(ns, pod)...)
	if container != "" {
		c.Attrs = append(c.Attrs, Str(accelschema.AttrK8sContainerName, container))
	}
	if m := b.podMeta[ns+"/"+pod]; m != nil {
		c.PodUID = m.UID
	}
	b.consumers[id] = c
	return c
}

func (b *builder) add(c *claim) {
	b.claims[c.key] = append(b.claims[c.key], c)
}

// allocatable records the replica ids the kubelet can hand out per device.
func (b *builder) allocatable() {
	for _, d := range b.in.Allocatable {
		for _, raw := range d.IDs {
			id := deviceid.Parse(raw)
			if !id.Shared() {
				continue
			}
			if key := b.deviceKey(id, d.ResourceName); key != "" {
				b.allocReplicas[key]++
			}
		}
	}
}

// deviceKey maps a device-plugin id to the key of the physical device or
// MIG instance it names.
func (b *builder) deviceKey(id deviceid.ID, resource string) string {
	switch id.Form {
	case deviceid.FormGPU:
		return id.UUID
	case deviceid.FormMIG:
		// The MIG UUID itself (NVML-source resources carry it as hw.id); its
		// <parent>/gi<N> position, when known, becomes an alias in entries().
		return id.UUID
	case deviceid.FormMIGLegacy:
		return posKey(id.UUID, id.GI)
	case deviceid.FormGKE:
		if id.GI >= 0 {
			return idxGIKey(id.Index, id.GI)
		}
		return idxKey(id.Index)
	case deviceid.FormIndex:
		switch {
		case resource == "aws.amazon.com/neuroncore":
			return neuronCoreKey(id.Index)
		case resource == "aws.amazon.com/neuron", resource == "aws.amazon.com/neurondevice":
			return neuronKey(id.Index)
		case strings.HasPrefix(resource, "nvidia.com/"):
			// The NVIDIA device plugin with deviceIDStrategy: index.
			return idxKey(id.Index)
		}
	}
	return id.Raw
}

// migPosition finds where a MIG UUID lives: learned from resources, or NVML.
func (b *builder) migPosition(uuid string) (string, bool) {
	if pos, ok := b.topo.MIGPos[uuid]; ok {
		return pos, true
	}
	if b.in.MIG != nil {
		if p, ok := b.in.MIG.MIGPosition(uuid); ok {
			return posKey(p.Parent, p.GI), true
		}
	}
	return "", false
}

// checkMIGPosition notes a held MIG UUID whose <parent>/gi<N> position is
// unknown: a miss for a MIG device proves nothing while one exists, unless
// the pigeonhole rule (Index.UnplacedMIG) settles it.
func (b *builder) checkMIGPosition(uuid, ns, pod string) {
	if _, ok := b.migPosition(uuid); ok {
		return
	}
	b.noteUnplacedMIG(uuid, ns, pod)
}

// noteUnplacedMIG counts a held MIG device (by any id unique to it) that
// cannot be placed, and its holder ns/pod.
func (b *builder) noteUnplacedMIG(id, ns, pod string) {
	b.unplacedMIG[id] = true
	if b.ix.unplacedMIGPods == nil {
		b.ix.unplacedMIGPods = map[string]bool{}
	}
	b.ix.unplacedMIGPods[ns+"/"+pod] = true
}

// kubeletClaims reads device-plugin devices from PodResources.
func (b *builder) kubeletClaims() {
	if !b.in.PodResourcesOK {
		return
	}
	for _, p := range b.in.PodResources {
		for _, c := range p.Containers {
			for _, d := range c.Devices {
				for _, raw := range d.IDs {
					id := deviceid.Parse(raw)
					key := b.deviceKey(id, d.ResourceName)
					if key == "" {
						continue
					}
					cl := &claim{consumer: b.k8sConsumer(p.Namespace, p.Name, c.Name), key: key, source: srcKubernetes, resource: d.ResourceName, maxRep: -1}
					if id.Shared() {
						cl.mode = modeReplica
						cl.replicas = []string{raw}
						cl.maxRep = id.Replica
						if b.seenReplicas[key] == nil {
							b.seenReplicas[key] = map[string]bool{}
						}
						b.seenReplicas[key][raw] = true
					}
					if id.Form == deviceid.FormMIG {
						b.checkMIGPosition(id.UUID, p.Namespace, p.Name)
					}
					b.add(cl)
				}
			}
		}
	}
}

// modeReplica is a device-plugin replica; entries() decides between
// time-slicing and MPS from the node's labels and the MPS daemon's data.
const modeReplica = "replica"

func (b *builder) ecsClaims() {
	for _, ct := range b.in.ECS {
		if len(ct.Devices) == 0 {
			continue
		}
		c := &Consumer{ID: "ecs/" + ct.ID, ContainerIDs: []string{ct.ID}}
		c.Attrs = append(c.Attrs,
			Str(accelschema.AttrECSTaskARN, ct.TaskARN),
			Str(accelschema.AttrContainerName, ct.Name))
		if ct.Cluster != "" {
			c.Attrs = append(c.Attrs, Str(accelschema.AttrECSClusterARN, ct.Cluster))
		}
		if ct.TaskFamily != "" {
			c.Attrs = append(c.Attrs, Str(accelschema.AttrECSTaskFamily, ct.TaskFamily))
		}
		c.Attrs = append(c.Attrs, b.labelAttrs(ct.Labels, ct.TaskFamily)...)
		b.consumers[c.ID] = c
		for _, raw := range ct.Devices {
			id := deviceid.Parse(raw)
			var key string
			switch id.Form {
			case deviceid.FormIndex:
				key = idxKey(id.Index)
			default:
				key = b.deviceKey(id, "")
			}
			cl := &claim{consumer: c, key: key, source: srcECS, maxRep: -1}
			if ct.MPSActiveThreads > 0 {
				cl.mode = accelschema.PartitionMPS
				cl.weight = ct.MPSActiveThreads
				cl.partID = shortID(ct.ID)
			}
			b.add(cl)
		}
	}
}

// labelAttrs reads team and workload from container labels with the same
// keys as pod labels; the workload name defaults to def.
func (b *builder) labelAttrs(labels map[string]string, def string) []KV {
	pick := func(keys []string) string {
		for _, k := range keys {
			if v := labels[k]; v != "" {
				return v
			}
		}
		return ""
	}
	var kv []KV
	if t := pick(b.in.Workload.TeamLabels); t != "" {
		kv = append(kv, Str(accelschema.AttrTeam, t))
	}
	name := pick(b.in.Workload.WorkloadNameLabels)
	if name == "" {
		name = def
	}
	if name != "" {
		kv = append(kv, Str(accelschema.AttrWorkloadName, name))
	}
	wt := strings.ToLower(pick(b.in.Workload.WorkloadTypeLabels))
	if !accelschema.EnumWorkloadType.Has(wt) {
		wt = accelschema.WorkloadUnknown
	}
	return append(kv, Str(accelschema.AttrWorkloadType, wt))
}

func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

func (b *builder) staticClaims() {
	for _, r := range b.in.Static {
		if r.Host != "" && !slices.Contains(b.in.HostNames, r.Host) {
			continue
		}
		c := &Consumer{ID: "static/" + strconv.Itoa(r.Line)}
		if r.JobID != "" {
			c.Attrs = append(c.Attrs, Str(accelschema.AttrJobID, r.JobID))
		}
		if r.Team != "" {
			c.Attrs = append(c.Attrs, Str(accelschema.AttrTeam, r.Team))
		}
		if r.WorkloadName != "" {
			c.Attrs = append(c.Attrs, Str(accelschema.AttrWorkloadName, r.WorkloadName))
		}
		wt := r.WorkloadType
		if wt == "" {
			wt = accelschema.WorkloadUnknown
		}
		c.Attrs = append(c.Attrs, Str(accelschema.AttrWorkloadType, wt))
		b.consumers[c.ID] = c
		key := r.Device
		if n, err := strconv.Atoi(r.Device); err == nil && n >= 0 {
			key = idxKey(n)
		}
		b.add(&claim{consumer: c, key: key, source: srcStatic, weight: r.Share, maxRep: -1})
	}
}

// migParents gives MIG-enabled GPUs an entry whose state comes from their
// instances: the GPU itself is not allocatable, so it is neither held nor
// unallocated; it is "allocated" while any instance is held.
func (b *builder) migParents() {
	for parent, children := range b.topo.MIGParents {
		if _, ok := b.ix.entries[parent]; ok {
			continue
		}
		state := accelschema.AllocationUnallocated
		for child := range children {
			if e, ok := b.ix.entries[child]; ok && len(e.Copies) > 0 && e.Copies[0].Consumer != nil {
				state = accelschema.AllocationAllocated
				break
			}
		}
		if !b.ix.authoritative && state == accelschema.AllocationUnallocated {
			continue
		}
		b.ix.entries[parent] = &Entry{State: state}
	}
}

// sortClaims makes the copy order stable across refreshes.
func sortClaims(cs []*claim) {
	slices.SortStableFunc(cs, func(a, b *claim) int { return cmp.Compare(a.consumer.ID, b.consumer.ID) })
}
