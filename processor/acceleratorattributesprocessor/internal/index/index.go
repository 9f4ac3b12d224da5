// Package index turns what the sources say (PodResources, the Kubernetes
// API, DRA claims, ECS, a mapping file) into one immutable lookup table:
// device key → who holds it, with which share and partition identity.
//
// It is built on every refresh (O(devices + pods)) and read without locks
// on every batch: resolving a resource costs a few map lookups, never work
// per data point.
package index

import (
	"strconv"
	"strings"
)

// KV is one resource attribute to set: a string, or a double when IsDouble.
type KV struct {
	Key      string
	Str      string
	Double   float64
	IsDouble bool
}

// Str builds a string KV.
func Str(k, v string) KV { return KV{Key: k, Str: v} }

// Consumer is one holder of (part of) a device: a pod's container, an ECS
// container, or a job from the mapping file.
type Consumer struct {
	// ID is stable across refreshes: k8s/<ns>/<pod>/<container>, ecs/<id>, static/<line>.
	ID string
	// PodUID and ContainerIDs route per-process data points (pid → cgroup →
	// pod UID or container id) to this consumer's copy.
	PodUID       string
	ContainerIDs []string
	Attrs        []KV
	// Placeholder: a scheduler's reservation pod (a namespace in
	// Input.PlaceholderNamespaces) that holds the device for workloads it
	// does not name; the device is reserved, not allocated to it.
	Placeholder bool
}

// IsPod reports whether the consumer is (a container of) the pod
// namespace/name; IDs are k8s/<ns>/<pod>/<container>, and Kubernetes names
// contain no slash, so the prefix is exact.
func (c *Consumer) IsPod(namespace, name string) bool {
	id, ok := strings.CutPrefix(c.ID, "k8s/")
	if !ok {
		return false
	}
	rest, ok := strings.CutPrefix(id, namespace+"/"+name)
	return ok && strings.HasPrefix(rest, "/")
}

// Copy is one output resource of a device.
type Copy struct {
	// Consumer is nil for the unallocated remainder.
	Consumer *Consumer
	// Share is relative to the resource's own accelerator.partition.share
	// (1 for a whole device, the MIG profile share for a MIG device).
	Share float64
	// PartitionType replaces the receiver's when not empty.
	PartitionType string
	PartitionID   string
	// Extra attributes of this holding (DRA driver, pool, device, claim).
	Extra []KV
}

// Entry says who holds one device or partition.
type Entry struct {
	// Copies lists the holders, then the unallocated remainder if any.
	// Empty when nobody holds the device.
	Copies []Copy
	// InPlace: one holder has all of it; the resource is enriched in place.
	InPlace bool
	// State is accelerator.allocation.state.
	State string
}

// Shared reports whether the device's resource must be copied per holder.
func (e *Entry) Shared() bool { return !e.InPlace && len(e.Copies) > 0 }

// Pod is what is known about one pod: for inference resources (which carry
// the pod, not a device), for validating dcgm-exporter's pod hints, and for
// routing pids.
type Pod struct {
	UID       string
	Namespace string
	Name      string
	// Attrs are the pod-level attributes (no container).
	Attrs []KV
	// Placeholder: see Consumer.Placeholder.
	Placeholder bool
}

// Identity is what a resource says about the device it describes.
type Identity struct {
	HWID        string
	Parent      string
	Kind        string
	GI          int // MIG GPU-instance id, -1 if none
	DeviceIndex int // -1 if none
	CoreIndex   int // NeuronCore index, -1 if none
}

// Index is one immutable lookup table.
type Index struct {
	entries    map[string]*Entry
	podsByUID  map[string]*Pod
	podsByName map[string]*Pod
	// podsByIP and holdings attribute spans (holdings.go).
	podsByIP map[string]*Pod
	holdings map[string][]Holding

	// NodeAttrs go on every device and inference resource (insert if absent).
	NodeAttrs []KV
	// authoritative: every enabled device source answered on its last
	// refresh, so a device nobody holds is unallocated rather than unknown.
	authoritative bool
	// unresolved: some holdings could not be tied to a device key (a DRA
	// device with no slice), so a miss for a device of that kind proves
	// nothing.
	unresolvedNVIDIA bool
	unresolvedNeuron bool
	// unplacedMIG counts the distinct MIG devices held on this node whose
	// <parent>/gi<N> position is unknown (so a miss for a MIG series proves
	// nothing either); unplacedMIGPods are their holders (ns/name). See
	// UnplacedMIG.
	unplacedMIG     int
	unplacedMIGPods map[string]bool
	// knownPods are pods PodResources or the API say run on this node (ns/name).
	knownPods     map[string]bool
	podsAuthority bool
	// claimHolders: who holds each allocated DRA claim with pods on this
	// node, for device resources that name their claim (ClaimHolders).
	claimHolders map[string]*Entry

	Stats Stats
	// InvalidWorkloadTypes maps ns/name to a workload-type label value that
	// is not one of the enum values (the pod counts as unknown).
	InvalidWorkloadTypes map[string]string
	// SliceProblems are ResourceSlice devices that cannot be tied to a GPU;
	// claims on them are left unattributed.
	SliceProblems []SliceProblem
}

// Stats describe what the index holds, for logs and tests.
type Stats struct {
	Devices, Consumers, Pods int
}

// Empty is an index that knows nothing: every resource passes through.
func Empty() *Index {
	return &Index{entries: map[string]*Entry{}, podsByUID: map[string]*Pod{}, podsByName: map[string]*Pod{}, knownPods: map[string]bool{},
		claimHolders: map[string]*Entry{}, podsByIP: map[string]*Pod{}, holdings: map[string][]Holding{}}
}

// Outcome of a device lookup.
type Outcome uint8

const (
	// Unknown: nothing can be said; leave the resource as it is.
	Unknown Outcome = iota
	// Held: the returned entry says who.
	Held
	// Unallocated: the sources are complete and nobody holds the device.
	Unallocated
	// Derived: a MIG-enabled GPU; Entry.State comes from its instances.
	Derived
)

// Lookup finds the entry for a device resource.
func (ix *Index) Lookup(id Identity) (*Entry, Outcome) {
	for _, k := range keysOf(id) {
		if e, ok := ix.entries[k]; ok {
			if len(e.Copies) == 0 {
				if e.State == "" {
					continue
				}
				return e, Derived
			}
			return e, Held
		}
	}
	if !ix.authoritative || id.HWID == "" {
		return nil, Unknown
	}
	switch {
	case id.Kind == kindNeuron && ix.unresolvedNeuron:
		return nil, Unknown
	case id.Kind != kindNeuron && ix.unresolvedNVIDIA:
		return nil, Unknown
	case id.Kind != kindNeuron && ix.unplacedMIG > 0 && (id.GI >= 0 || id.Parent != ""):
		return nil, Unknown
	}
	return nil, Unallocated
}

// Known reports whether the device has an entry at all (held, or known to
// be a MIG parent); false means a refresh might learn something.
func (ix *Index) Known(id Identity) bool {
	for _, k := range keysOf(id) {
		if _, ok := ix.entries[k]; ok {
			return true
		}
	}
	return false
}

// UnplacedMIG is the number of distinct MIG devices PodResources (or a DRA
// claim) says are held on this node but that cannot be placed at a
// <parent>/gi<N> position (no NVML, no NVML-source resource). Those are the
// dcgm-exporter MIG series Lookup answers Unknown for. It is 0 when a miss
// would prove nothing anyway (the sources are not authoritative, or DRA
// devices could not be resolved), so that no pigeonhole conclusion is drawn.
func (ix *Index) UnplacedMIG() int {
	if !ix.authoritative || ix.unresolvedNVIDIA {
		return 0
	}
	return ix.unplacedMIG
}

// HoldsUnplacedMIG reports whether the pod ns/name holds one of the MIG
// devices UnplacedMIG counts.
func (ix *Index) HoldsUnplacedMIG(namespace, name string) bool {
	return ix.unplacedMIGPods[namespace+"/"+name]
}

// EntryHoldsUnplacedMIG reports whether a pod among e's consumers holds one
// of the MIG devices UnplacedMIG counts: for an entry found through a DRA
// claim hint (ClaimHolders) on a series Lookup could not place.
func (ix *Index) EntryHoldsUnplacedMIG(e *Entry) bool {
	if e == nil {
		return false
	}
	for i := range e.Copies {
		c := e.Copies[i].Consumer
		if c == nil {
			continue
		}
		// k8s/<ns>/<pod>/<container>; Kubernetes names contain no slash.
		rest, ok := strings.CutPrefix(c.ID, "k8s/")
		if !ok {
			continue
		}
		parts := strings.SplitN(rest, "/", 3)
		if len(parts) >= 2 && ix.HoldsUnplacedMIG(parts[0], parts[1]) {
			return true
		}
	}
	return false
}

// PodByUID finds a pod.
func (ix *Index) PodByUID(uid string) (*Pod, bool) {
	p, ok := ix.podsByUID[uid]
	return p, ok
}

// PodByName finds a pod by namespace and name.
func (ix *Index) PodByName(namespace, name string) (*Pod, bool) {
	p, ok := ix.podsByName[namespace+"/"+name]
	return p, ok
}

// PodOnNode says whether ns/name runs on this node; ok is false when the
// sources cannot tell (so a hint can be neither confirmed nor refuted).
func (ix *Index) PodOnNode(namespace, name string) (onNode, ok bool) {
	if !ix.podsAuthority {
		return false, false
	}
	return ix.knownPods[namespace+"/"+name], true
}

const (
	kindNeuron = "aws_neuron"
)

// Key forms. UUIDs, MIG positions (<parent>/gi<N>, the dcgm-exporter hw.id)
// and raw ids are used as they are.
func idxKey(i int) string       { return "idx:" + strconv.Itoa(i) }
func idxGIKey(i, gi int) string { return "idx:" + strconv.Itoa(i) + "/gi" + strconv.Itoa(gi) }
func posKey(parent string, gi int) string {
	return parent + "/gi" + strconv.Itoa(gi)
}
func neuronKey(i int) string     { return "neuron:" + strconv.Itoa(i) }
func neuronCoreKey(g int) string { return "neuroncore:" + strconv.Itoa(g) }

// keysOf lists the keys a resource can be found under, most specific first.
func keysOf(id Identity) []string {
	keys := make([]string, 0, 4)
	if id.Kind == kindNeuron {
		// A core is looked up as a core only: a device whose cores are split
		// among pods has an entry of its own that must not match its cores.
		// Cores of a device held whole get entries at build time.
		if id.CoreIndex >= 0 {
			return append(keys, neuronCoreKey(id.CoreIndex))
		}
		if id.DeviceIndex >= 0 {
			keys = append(keys, neuronKey(id.DeviceIndex))
		}
		if id.HWID != "" {
			keys = append(keys, id.HWID)
		}
		return keys
	}
	if id.HWID != "" {
		keys = append(keys, id.HWID)
	}
	if id.Parent != "" && id.GI >= 0 {
		keys = append(keys, posKey(id.Parent, id.GI))
	}
	if id.DeviceIndex >= 0 {
		switch {
		case id.GI >= 0:
			keys = append(keys, idxGIKey(id.DeviceIndex, id.GI))
		case id.Parent == "":
			keys = append(keys, idxKey(id.DeviceIndex))
		}
	}
	return keys
}
