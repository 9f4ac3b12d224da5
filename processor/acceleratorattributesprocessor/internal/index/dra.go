package index

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

// draClaims attributes devices allocated through DRA ResourceClaims: the
// claim's allocation results name driver/pool/device, the node's
// ResourceSlices say which GPU (uuid, parentUUID, profile) that is, and the
// claim's reservedFor says which pods share it.
func (b *builder) draClaims() {
	users := b.kubeletClaimUsers()
	k := b.in.Kube
	if k == nil || !k.DRA {
		// The kubelet names DRA devices, but without slices nothing says
		// which GPU they are: a device nobody seems to hold may be one of them.
		for driver := range users.drivers {
			b.markUnresolved(driver)
		}
		return
	}
	devices, problems := readSlices(k.Slices)
	b.ix.SliceProblems = problems
	podsByUID := indexPodsByUID(k.Pods)
	for _, c := range k.Claims {
		alloc := c.Status.Allocation
		if alloc == nil {
			continue
		}
		pods := claimPodsOnNode(c, podsByUID)
		if len(pods) == 0 {
			continue // not used on this node
		}
		for _, res := range alloc.Devices.Results {
			if res.AdminAccess != nil && *res.AdminAccess {
				continue // monitoring access: no one's workload, no share
			}
			partID := draDeviceKey(res.Driver, res.Pool, res.Device)
			dev := devices[partID]
			switch {
			case dev == nil || dev.kind == unusable:
				// Not published (yet), or published wrong: some device is
				// held, and nothing says which.
				b.markUnresolved(res.Driver)
				continue
			case dev.kind == notAccelerator:
				continue // a compute-domain channel beside the claim's GPUs
			case dev.kind == pendingMIG:
				// Held, but its MIG UUID and GPU instance are known only to
				// NVML: like a MIG device PodResources names and nothing places.
				for _, pod := range pods {
					b.noteUnplacedMIG(partID, pod.Namespace, pod.Name)
				}
				continue
			}
			uuid := dev.uuid
			if isMIGUUID(uuid) {
				for _, pod := range pods {
					b.checkMIGPosition(uuid, pod.Namespace, pod.Name)
				}
			}
			fraction := 1.0
			if res.ShareID != nil {
				fraction = consumedFraction(res, dev.device)
			}
			extra := []KV{
				Str(accelschema.AttrDRADriver, res.Driver),
				Str(accelschema.AttrDRAPool, res.Pool),
				Str(accelschema.AttrDRADevice, res.Device),
				Str(accelschema.AttrDRAClaimName, c.Name),
			}
			if res.ShareID != nil {
				partID += "/" + string(*res.ShareID)
				extra = append(extra, Str(accelschema.AttrDRAShareID, string(*res.ShareID)))
			}
			if dev.profile != "" {
				extra = append(extra, Str(accelschema.AttrPartitionProfile, dev.profile))
			}
			for _, pod := range pods {
				containers := users.containers(c.Namespace, c.Name, pod)
				w := fraction / float64(len(pods)) / float64(len(containers))
				for _, ctr := range containers {
					b.add(&claim{
						consumer: b.k8sConsumer(pod.Namespace, pod.Name, ctr),
						key:      uuid, source: srcKubernetes, mode: accelschema.PartitionDRA,
						weight: w, extra: extra, partID: partID, maxRep: -1,
					})
				}
			}
		}
	}
}

// markUnresolved notes that a driver's device is held but cannot be named,
// so that a miss for a device of its kind proves nothing.
func (b *builder) markUnresolved(driver string) {
	switch {
	case driver == draDriverComputeDomain:
		// IMEX channels and daemons: whatever is held, it is no GPU.
	case strings.Contains(driver, "neuron"):
		b.ix.unresolvedNeuron = true
	case strings.Contains(driver, "nvidia"):
		b.ix.unresolvedNVIDIA = true
	}
}

// consumedFraction is the largest share of any capacity the allocation
// consumes (memory, multiprocessors…), as for MIG profiles: what one share
// takes of the scarcest resource is what it denies the others. 1 when the
// result does not say.
func consumedFraction(res resourcev1.DeviceRequestAllocationResult, dev *resourcev1.Device) float64 {
	best := 0.0
	for name, used := range res.ConsumedCapacity {
		capacity, ok := dev.Capacity[name]
		if !ok {
			continue
		}
		total := capacity.Value.AsApproximateFloat64()
		if total <= 0 {
			continue
		}
		best = max(best, used.AsApproximateFloat64()/total)
	}
	if best <= 0 {
		return 1
	}
	return min(best, 1)
}

// claimUsers is which containers use which claim, from PodResources.
type claimUsers struct {
	byClaim map[string]map[string][]string // ns/claim → pod name → containers
	drivers map[string]bool
}

func (b *builder) kubeletClaimUsers() claimUsers {
	u := claimUsers{byClaim: map[string]map[string][]string{}, drivers: map[string]bool{}}
	if !b.in.PodResourcesOK {
		return u
	}
	for _, p := range b.in.PodResources {
		for _, c := range p.Containers {
			for _, cl := range c.Claims {
				ns := cl.Namespace
				if ns == "" {
					ns = p.Namespace
				}
				key := ns + "/" + cl.Name
				if u.byClaim[key] == nil {
					u.byClaim[key] = map[string][]string{}
				}
				u.byClaim[key][p.Name] = append(u.byClaim[key][p.Name], c.Name)
				for _, d := range cl.Devices {
					u.drivers[d.Driver] = true
				}
			}
		}
	}
	return u
}

// containers returns the containers of pod that use the claim: from
// PodResources when it reports dynamic resources, else from the pod spec,
// else [""] (the pod as a whole).
func (u claimUsers) containers(ns, claimName string, pod *corev1.Pod) []string {
	if cs := u.byClaim[ns+"/"+claimName][pod.Name]; len(cs) > 0 {
		return cs
	}
	podClaim := ""
	for _, rc := range pod.Spec.ResourceClaims {
		if rc.ResourceClaimName != nil && *rc.ResourceClaimName == claimName {
			podClaim = rc.Name
		}
	}
	for _, st := range pod.Status.ResourceClaimStatuses {
		if st.ResourceClaimName != nil && *st.ResourceClaimName == claimName {
			podClaim = st.Name
		}
	}
	var out []string
	if podClaim != "" {
		for _, c := range pod.Spec.Containers {
			for _, rc := range c.Resources.Claims {
				if rc.Name == podClaim {
					out = append(out, c.Name)
					break
				}
			}
		}
	}
	if len(out) == 0 {
		return []string{""}
	}
	return out
}

// indexPodsByUID indexes this node's pods for claimPodsOnNode.
func indexPodsByUID(pods []*corev1.Pod) map[string]*corev1.Pod {
	out := make(map[string]*corev1.Pod, len(pods))
	for _, p := range pods {
		out[string(p.UID)] = p
	}
	return out
}

// claimPodsOnNode lists the pods of this node a ResourceClaim is reserved
// for, in the claim's order; none means the claim is not used here.
func claimPodsOnNode(c *resourcev1.ResourceClaim, podsByUID map[string]*corev1.Pod) []*corev1.Pod {
	var pods []*corev1.Pod
	for _, ref := range c.Status.ReservedFor {
		if ref.Resource != "pods" || ref.APIGroup != "" {
			continue
		}
		if p, ok := podsByUID[string(ref.UID)]; ok {
			pods = append(pods, p)
		}
	}
	return pods
}
