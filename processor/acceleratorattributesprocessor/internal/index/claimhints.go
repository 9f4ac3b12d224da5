package index

import "github.com/otelcol-accel/otelcol-accel/internal/accelschema"

// claimHolders records who holds each allocated DRA claim with pods on this
// node, without the ResourceSlices: dcgm-exporter names the claim (and its
// driver, pool and device) on the devices it holds, so a device the slices
// cannot resolve can still be given its claim's pods. Nothing here says
// what fraction of the device a shared result consumes (that needs the
// slice's capacities), so the claim's pods split the whole device equally,
// as draClaims does for an exclusive result.
func (b *builder) claimHolders() {
	k := b.in.Kube
	if k == nil || !k.DRA {
		return
	}
	podsByUID := indexPodsByUID(k.Pods)
	for _, c := range k.Claims {
		alloc := c.Status.Allocation
		if alloc == nil {
			continue
		}
		var consumers []*Consumer
		for _, p := range claimPodsOnNode(c, podsByUID) {
			consumers = append(consumers, b.k8sConsumer(p.Namespace, p.Name, ""))
		}
		if len(consumers) == 0 {
			continue // not used on this node
		}
		claimKey := c.Namespace + "/" + c.Name
		results := 0
		var only *Entry
		for _, res := range alloc.Devices.Results {
			if res.AdminAccess != nil && *res.AdminAccess {
				continue // monitoring access: no one's workload
			}
			device := res.Driver + "/" + res.Pool + "/" + res.Device
			e := &Entry{State: accelschema.AllocationAllocated, InPlace: len(consumers) == 1}
			extra := []KV{
				Str(accelschema.AttrDRADriver, res.Driver),
				Str(accelschema.AttrDRAPool, res.Pool),
				Str(accelschema.AttrDRADevice, res.Device),
				Str(accelschema.AttrDRAClaimName, c.Name),
				Str(accelschema.AttrDRAClaimNamespace, c.Namespace),
			}
			for _, cons := range consumers {
				e.Copies = append(e.Copies, Copy{
					Consumer: cons, Share: 1 / float64(len(consumers)),
					PartitionType: accelschema.PartitionDRA, PartitionID: device, Extra: extra,
				})
			}
			b.ix.claimHolders[claimKey+"/"+device] = e
			results++
			only = e
		}
		if results == 1 {
			// A hint without driver, pool and device still names one device.
			b.ix.claimHolders[claimKey] = only
		}
	}
}

// ClaimHolders finds the holders of the DRA claim namespace/name for its
// allocation result device ("driver/pool/device"; "" when the hint does not
// say, which only resolves a claim with a single result). ok is false when
// the claim has no pods on this node, is not known, or has no such result.
func (ix *Index) ClaimHolders(namespace, name, device string) (*Entry, bool) {
	key := namespace + "/" + name
	if device != "" {
		key += "/" + device
	}
	e, ok := ix.claimHolders[key]
	return e, ok
}
