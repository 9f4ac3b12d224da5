package index

import (
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

// Holding is one device or partition a pod holds, named as the device's
// own metrics name it, so that a span of the pod can be joined to them.
type Holding struct {
	// HWID is the hw.id of the device's or partition's series.
	HWID string
	// Parent is the hw.id of the physical device (HWID itself for a whole
	// device).
	Parent        string
	PartitionType string
	PartitionID   string
}

// Holdings lists what the pod ns/name holds, ordered by HWID; nil when it
// holds no accelerator the index can name.
func (ix *Index) Holdings(namespace, name string) []Holding {
	return ix.holdings[namespace+"/"+name]
}

// PodByIP finds the pod that owns an IP address on this node. Pods on the
// host network are not indexed by IP: their address is the node's, shared
// by every such pod.
func (ix *Index) PodByIP(ip string) (*Pod, bool) {
	p, ok := ix.podsByIP[ip]
	return p, ok
}

// podIPs indexes the Kubernetes pods' own addresses.
func (b *builder) podIPs() {
	if b.in.Kube == nil {
		return
	}
	for _, p := range b.in.Kube.Pods {
		if p.Spec.HostNetwork || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		pod, ok := b.ix.podsByName[p.Namespace+"/"+p.Name]
		if !ok {
			continue
		}
		for _, ip := range p.Status.PodIPs {
			if ip.IP != "" {
				b.ix.podsByIP[ip.IP] = pod
			}
		}
		if p.Status.PodIP != "" {
			b.ix.podsByIP[p.Status.PodIP] = pod
		}
	}
}

// holdings records, per pod, the devices its containers hold, from the
// claims' own keys (not the aliases entries() adds, which name the same
// device twice). Device-plugin index ids (idx:N) are left out: the index
// does not know the UUID behind them, and a guessed hw.id would join a
// trace to the wrong device.
func (b *builder) holdings() {
	keys := make([]string, 0, len(b.claims))
	for k := range b.claims {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	seen := map[string]bool{}
	for _, key := range keys {
		e := b.ix.entries[key]
		if e == nil {
			continue
		}
		for i := range e.Copies {
			c := &e.Copies[i]
			pod, ok := podOfConsumer(c.Consumer)
			if !ok || c.Consumer.Placeholder {
				continue
			}
			h, ok := b.holdingOf(key, c)
			if !ok || seen[pod+"\x00"+h.HWID] {
				continue
			}
			seen[pod+"\x00"+h.HWID] = true
			b.ix.holdings[pod] = append(b.ix.holdings[pod], h)
		}
	}
	for _, hs := range b.ix.holdings {
		slices.SortFunc(hs, func(a, b Holding) int { return strings.Compare(a.HWID, b.HWID) })
	}
}

// podOfConsumer reads ns/pod from a Kubernetes consumer's id.
func podOfConsumer(c *Consumer) (string, bool) {
	if c == nil {
		return "", false
	}
	rest, ok := strings.CutPrefix(c.ID, "k8s/")
	if !ok {
		return "", false
	}
	parts := strings.SplitN(rest, "/", 3)
	if len(parts) < 2 {
		return "", false
	}
	return parts[0] + "/" + parts[1], true
}

// holdingOf names the device behind one claim key as its metrics do.
func (b *builder) holdingOf(key string, c *Copy) (Holding, bool) {
	h := Holding{PartitionType: c.PartitionType, PartitionID: c.PartitionID}
	switch {
	case strings.HasPrefix(key, "GPU-"):
		h.HWID, h.Parent = key, key
		if parent, gi, ok := strings.Cut(key, "/gi"); ok {
			h.Parent = parent
			h.PartitionType, h.PartitionID = accelschema.PartitionMIG, gi
		}
	case isMIGUUID(key):
		h.HWID = key
		h.PartitionType = accelschema.PartitionMIG
		if pos, ok := b.migPosition(key); ok {
			parent, gi, _ := strings.Cut(pos, "/gi")
			h.Parent, h.PartitionID = parent, gi
		}
	case strings.HasPrefix(key, "neuroncore:"):
		core, err := strconv.Atoi(strings.TrimPrefix(key, "neuroncore:"))
		if err != nil {
			return Holding{}, false
		}
		dev, ok := b.neuronDeviceOf(core)
		if !ok {
			return Holding{}, false
		}
		h.Parent = "neuron_device_" + strconv.Itoa(dev)
		h.HWID = h.Parent + "/neuroncore_" + strconv.Itoa(core)
		h.PartitionType, h.PartitionID = accelschema.PartitionNeuronCore, strconv.Itoa(core)
	case strings.HasPrefix(key, "neuron:"):
		h.HWID = "neuron_device_" + strings.TrimPrefix(key, "neuron:")
		h.Parent = h.HWID
	default:
		return Holding{}, false
	}
	return h, true
}

// neuronDeviceOf finds the Neuron device of a global core index, from the
// topology the receivers' per-core resources taught.
func (b *builder) neuronDeviceOf(core int) (int, bool) {
	for dev, cs := range b.topo.NeuronCores {
		if cs[core] {
			return dev, true
		}
	}
	return 0, false
}
