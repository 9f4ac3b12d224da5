package kubeapi

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/catalog"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/detrand"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/fleet"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/scenario"
)

// Objects builds every API object of a fleet, in a stable order.
func Objects(f *fleet.Fleet) []runtime.Object {
	var out []runtime.Object
	for _, ns := range namespaces(f) {
		out = append(out, &corev1.Namespace{
			TypeMeta:   metav1.TypeMeta{Kind: "Namespace", APIVersion: "v1"},
			ObjectMeta: objectMeta(f, "", ns, "Namespace", map[string]string{"kubernetes.io/metadata.name": ns}),
			Status:     corev1.NamespaceStatus{Phase: corev1.NamespaceActive},
		})
	}
	for _, n := range f.Nodes {
		out = append(out, node(f, n))
	}
	out = append(out, controllers(f)...)
	for _, p := range f.Pods {
		out = append(out, pod(f, p))
	}
	if hasDRA(f) {
		out = append(out, deviceClasses(f)...)
		for _, n := range f.Nodes {
			if n.DRA {
				out = append(out, resourceSlice(f, n))
			}
		}
		for _, c := range f.Claims {
			out = append(out, resourceClaim(f, c))
		}
	}
	return out
}

func hasDRA(f *fleet.Fleet) bool {
	for _, n := range f.Nodes {
		if n.DRA {
			return true
		}
	}
	return false
}

func namespaces(f *fleet.Fleet) []string {
	set := map[string]bool{"default": true, "kube-system": true}
	for _, p := range f.Pods {
		set[p.Namespace] = true
	}
	for _, c := range f.Claims {
		set[c.Namespace] = true
	}
	out := make([]string, 0, len(set))
	for ns := range set {
		out = append(out, ns)
	}
	sort.Strings(out)
	return out
}

func objectMeta(f *fleet.Fleet, ns, name, kind string, labels map[string]string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name: name, Namespace: ns, Labels: labels,
		UID:               types.UID(detrand.UUID(f.Seed, "object", kind, ns, name)),
		CreationTimestamp: metav1.NewTime(fleet.Epoch),
	}
}

// node renders a Node with the labels EKS, Karpenter and GPU Feature
// Discovery (or the Neuron device plugin) put on it.
func node(f *fleet.Fleet, n *fleet.Node) *corev1.Node {
	labels := map[string]string{
		"kubernetes.io/hostname":           n.Name,
		"kubernetes.io/os":                 "linux",
		"kubernetes.io/arch":               "amd64",
		"node.kubernetes.io/instance-type": n.InstanceType,
		"beta.kubernetes.io/instance-type": n.InstanceType,
		"topology.kubernetes.io/region":    n.Region,
		"topology.kubernetes.io/zone":      n.Zone,
		"topology.k8s.aws/zone-id":         n.ZoneID,
		"eks.amazonaws.com/capacityType":   "ON_DEMAND",
	}
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewQuantity(int64(n.VCPUs), resource.DecimalSI),
		corev1.ResourceMemory:           *resource.NewQuantity(int64(n.MemoryGiB)<<30, resource.BinarySI),
		corev1.ResourcePods:             *resource.NewQuantity(110, resource.DecimalSI),
		corev1.ResourceEphemeralStorage: resource.MustParse("1000Gi"),
	}
	count := func(name string, v int) {
		if v > 0 {
			capacity[corev1.ResourceName(name)] = *resource.NewQuantity(int64(v), resource.DecimalSI)
		}
	}
	if n.Kind == catalog.KindNVIDIA {
		gfdLabels(n, labels)
		if !n.DRA {
			whole, migs := 0, map[string]int{}
			for _, g := range n.GPUs {
				if g.MIGEnabled() {
					for _, mi := range g.MIG {
						migs[n.MIGResourceName(mi.Profile.Name)]++
					}
					continue
				}
				whole++
			}
			if n.Replicas > 0 {
				count(n.SharedResourceName(), whole*n.Replicas)
			} else {
				migs[fleet.ResourceGPU] += whole
			}
			for name, v := range migs {
				count(name, v)
			}
		}
	} else {
		labels["karpenter.k8s.aws/instance-accelerator-name"] = n.Shape.DeviceType
		labels["karpenter.k8s.aws/instance-accelerator-manufacturer"] = "aws"
		labels["karpenter.k8s.aws/instance-accelerator-count"] = strconv.Itoa(len(n.NeuronDevices))
		labels["aws.amazon.com/neuron.present"] = "true"
		count(fleet.ResourceNeuronDevice, len(n.NeuronDevices))
		count(fleet.ResourceNeuronCore, n.CoreCount())
	}
	for k, v := range n.Labels {
		labels[k] = v
	}
	ready := metav1.NewTime(fleet.Epoch)
	return &corev1.Node{
		TypeMeta:   metav1.TypeMeta{Kind: "Node", APIVersion: "v1"},
		ObjectMeta: objectMeta(f, "", n.Name, "Node", labels),
		Spec:       corev1.NodeSpec{ProviderID: fmt.Sprintf("aws:///%s/%s", n.Zone, n.InstanceID)},
		Status: corev1.NodeStatus{
			Capacity:    capacity,
			Allocatable: capacity.DeepCopy(),
			Phase:       corev1.NodeRunning,
			Conditions: []corev1.NodeCondition{{
				Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
				Message: "kubelet is posting ready status", LastHeartbeatTime: ready, LastTransitionTime: ready,
			}},
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: n.InternalIP},
				{Type: corev1.NodeHostName, Address: n.Name},
			},
			NodeInfo: corev1.NodeSystemInfo{
				MachineID: detrand.Hex(32, f.Seed, "machine", n.Name), SystemUUID: detrand.UUID(f.Seed, "sysuuid", n.Name),
				KernelVersion: "6.1.141-155.222.amzn2023.x86_64", OSImage: "Amazon Linux 2023.8.20250818",
				ContainerRuntimeVersion: "containerd://1.7.27", KubeletVersion: "v1.35.0-eks-3a10415",
				OperatingSystem: "linux", Architecture: "amd64",
			},
		},
	}
}

// gfdLabels adds GPU Feature Discovery's labels (k8s-device-plugin lm/*).
func gfdLabels(n *fleet.Node, l map[string]string) {
	m := n.Model
	product := m.GFDProduct
	strategy := "none"
	switch n.Sharing {
	case scenario.SharingTimeSlicing:
		strategy = "time-slicing"
	case scenario.SharingMPS:
		strategy = "mps"
	}
	replicas := 1
	if n.Replicas > 0 {
		replicas = n.Replicas
		if !n.RenameByDefault {
			product += "-SHARED"
		}
	}
	count := len(n.GPUs)
	memory := m.MemoryMiB
	migProfiles := map[string]int{}
	for _, g := range n.GPUs {
		for _, mi := range g.MIG {
			migProfiles[mi.Profile.Name]++
		}
	}
	if n.MIGStrategy == scenario.MIGSingle && len(migProfiles) == 1 {
		for p, c := range migProfiles {
			product = m.GFDProduct + "-MIG-" + p
			count = c
			prof, _ := m.MIGProfile(p)
			memory = prof.MemoryMiB
		}
	}
	driverMajor, rest, _ := strings.Cut(n.DriverVersion, ".")
	driverMinor, driverRev, _ := strings.Cut(rest, ".")
	cudaMajor, cudaMinor, _ := strings.Cut(n.CUDAVersion, ".")
	l["nvidia.com/gpu.present"] = "true"
	l["nvidia.com/gpu.product"] = product
	l["nvidia.com/gpu.count"] = strconv.Itoa(count)
	l["nvidia.com/gpu.replicas"] = strconv.Itoa(replicas)
	l["nvidia.com/gpu.sharing-strategy"] = strategy
	l["nvidia.com/gpu.memory"] = strconv.FormatInt(memory, 10)
	l["nvidia.com/gpu.family"] = m.Family
	l["nvidia.com/gpu.compute.major"] = strconv.Itoa(m.ComputeMajor)
	l["nvidia.com/gpu.compute.minor"] = strconv.Itoa(m.ComputeMinor)
	l["nvidia.com/gpu.machine"] = n.InstanceType
	l["nvidia.com/gpu.mode"] = "compute"
	l["nvidia.com/mig.capable"] = strconv.FormatBool(m.MIGCapable())
	l["nvidia.com/mps.capable"] = strconv.FormatBool(n.Sharing == scenario.SharingMPS)
	l["nvidia.com/vgpu.present"] = "false"
	l["nvidia.com/cuda.driver-version.full"] = n.DriverVersion
	l["nvidia.com/cuda.driver-version.major"] = driverMajor
	l["nvidia.com/cuda.driver-version.minor"] = driverMinor
	l["nvidia.com/cuda.driver-version.revision"] = driverRev
	l["nvidia.com/cuda.runtime-version.full"] = n.CUDAVersion
	l["nvidia.com/cuda.runtime-version.major"] = cudaMajor
	l["nvidia.com/cuda.runtime-version.minor"] = cudaMinor
	l["nvidia.com/gfd.timestamp"] = strconv.FormatInt(fleet.Epoch.Unix(), 10)
	l["karpenter.k8s.aws/instance-gpu-name"] = strings.ToLower(strings.SplitN(m.Key, "-", 2)[0])
	l["karpenter.k8s.aws/instance-gpu-manufacturer"] = "nvidia"
	l["karpenter.k8s.aws/instance-gpu-count"] = strconv.Itoa(len(n.GPUs))
	l["karpenter.k8s.aws/instance-gpu-memory"] = strconv.FormatInt(m.MemoryMiB, 10)
	if n.MIGStrategy != "" {
		l["nvidia.com/mig.strategy"] = n.MIGStrategy
		l["nvidia.com/mig.config"] = "custom"
		l["nvidia.com/mig.config.state"] = "success"
	}
	if n.MIGStrategy == scenario.MIGMixed {
		for p, c := range migProfiles {
			prof, _ := m.MIGProfile(p)
			base := "nvidia.com/mig-" + p
			l[base+".count"] = strconv.Itoa(c)
			l[base+".memory"] = strconv.FormatInt(prof.MemoryMiB, 10)
			l[base+".slices.gi"] = strconv.Itoa(prof.ComputeSlices)
			l[base+".slices.ci"] = strconv.Itoa(prof.ComputeSlices)
			l[base+".product"] = m.GFDProduct + "-MIG-" + p
			l[base+".replicas"] = "1"
			l[base+".sharing-strategy"] = "none"
		}
	}
	if n.DRA {
		l["nvidia.com/dra-kubelet-plugin"] = "true"
	}
}

// controllers renders the ReplicaSets, Deployments, StatefulSets, Jobs and
// CronJobs that own the pods, so owner chains can be walked.
func controllers(f *fleet.Fleet) []runtime.Object {
	var out []runtime.Object
	seen := map[string]bool{}
	for _, p := range f.Pods {
		for i, o := range p.Owners {
			key := p.Namespace + "/" + o.Kind + "/" + o.Name
			if seen[key] {
				continue
			}
			seen[key] = true
			m := metav1.ObjectMeta{
				Name: o.Name, Namespace: p.Namespace, UID: types.UID(o.UID),
				CreationTimestamp: metav1.NewTime(fleet.Epoch),
				Labels:            map[string]string{fleet.LabelWorkload: p.Labels[fleet.LabelWorkload]},
			}
			if p.Team != "" {
				m.Labels[fleet.LabelTeam] = p.Team
			}
			if i+1 < len(p.Owners) {
				up := p.Owners[i+1]
				m.OwnerReferences = []metav1.OwnerReference{{APIVersion: up.APIVersion, Kind: up.Kind, Name: up.Name, UID: types.UID(up.UID), Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
			}
			switch o.Kind {
			case "ReplicaSet":
				out = append(out, &appsv1.ReplicaSet{TypeMeta: metav1.TypeMeta{Kind: "ReplicaSet", APIVersion: "apps/v1"}, ObjectMeta: m})
			case "Deployment":
				out = append(out, &appsv1.Deployment{TypeMeta: metav1.TypeMeta{Kind: "Deployment", APIVersion: "apps/v1"}, ObjectMeta: m})
			case "StatefulSet":
				out = append(out, &appsv1.StatefulSet{TypeMeta: metav1.TypeMeta{Kind: "StatefulSet", APIVersion: "apps/v1"}, ObjectMeta: m})
			case "Job":
				out = append(out, &batchv1.Job{TypeMeta: metav1.TypeMeta{Kind: "Job", APIVersion: "batch/v1"}, ObjectMeta: m})
			case "CronJob":
				out = append(out, &batchv1.CronJob{TypeMeta: metav1.TypeMeta{Kind: "CronJob", APIVersion: "batch/v1"}, ObjectMeta: m,
					Spec: batchv1.CronJobSpec{Schedule: "0 */6 * * *"}})
			}
		}
	}
	return out
}

// images are the container images of the simulated servers.
var images = map[string]string{
	scenario.ServerVLLM:   "vllm/vllm-openai:v0.11.0",
	scenario.ServerSGLang: "lmsysorg/sglang:v0.5.3-cu126",
}

func pod(f *fleet.Fleet, p *fleet.Pod) *corev1.Pod {
	m := objectMeta(f, p.Namespace, p.Name, "Pod", p.Labels)
	m.UID = types.UID(p.UID)
	m.CreationTimestamp = metav1.NewTime(p.Created)
	if len(p.Annotations) > 0 {
		m.Annotations = p.Annotations
	}
	if len(p.Owners) > 0 {
		o := p.Owners[0]
		m.OwnerReferences = []metav1.OwnerReference{{APIVersion: o.APIVersion, Kind: o.Kind, Name: o.Name, UID: types.UID(o.UID), Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
	}
	started := metav1.NewTime(p.Created.Add(40e9))
	spec := corev1.PodSpec{NodeName: p.Node.Name, RestartPolicy: corev1.RestartPolicyAlways, SchedulerName: "default-scheduler", ServiceAccountName: "default"}
	status := corev1.PodStatus{
		Phase: corev1.PodRunning, PodIP: p.IP, PodIPs: []corev1.PodIP{{IP: p.IP}}, HostIP: p.Node.InternalIP,
		StartTime: &started, QOSClass: corev1.PodQOSBurstable,
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(p.Created)},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: started},
		},
	}
	if len(p.Owners) > 0 && p.Owners[0].Kind == "Job" {
		spec.RestartPolicy = corev1.RestartPolicyNever
	}
	claimsSeen := map[string]bool{}
	for _, c := range p.Containers {
		image := "nvcr.io/nvidia/pytorch:25.08-py3"
		if p.Inference != nil && p.Inference.Container == c.Name {
			image = images[p.Inference.Server]
		} else if p.Node.Kind == catalog.KindNeuron {
			image = "public.ecr.aws/neuron/pytorch-training-neuronx:2.7.0-neuronx-py310-sdk2.25.0"
		}
		limits := corev1.ResourceList{}
		for _, d := range c.Devices {
			limits[corev1.ResourceName(d.Resource)] = *resource.NewQuantity(int64(len(d.IDs)), resource.DecimalSI)
		}
		ctr := corev1.Container{Name: c.Name, Image: image, Resources: corev1.ResourceRequirements{Limits: limits, Requests: limits.DeepCopy()}}
		if p.NeuronTag != "" {
			ctr.Env = append(ctr.Env, corev1.EnvVar{Name: "NEURON_PROCESS_TAG", Value: p.NeuronTag})
		}
		if p.Inference != nil && p.Inference.Container == c.Name {
			port := int32(8000)
			if p.Inference.Server == scenario.ServerSGLang {
				port = 30000
			}
			ctr.Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: port, Protocol: corev1.ProtocolTCP}}
		}
		for _, cl := range c.Claims {
			ctr.Resources.Claims = append(ctr.Resources.Claims, corev1.ResourceClaim{Name: cl.Name})
			if !claimsSeen[cl.Name] {
				claimsSeen[cl.Name] = true
				spec.ResourceClaims = append(spec.ResourceClaims, corev1.PodResourceClaim{Name: cl.Name, ResourceClaimName: ptr.To(cl.Name)})
				status.ResourceClaimStatuses = append(status.ResourceClaimStatuses, corev1.PodResourceClaimStatus{Name: cl.Name, ResourceClaimName: ptr.To(cl.Name)})
			}
		}
		spec.Containers = append(spec.Containers, ctr)
		status.ContainerStatuses = append(status.ContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Ready: true, Started: ptr.To(true), Image: image, ImageID: image,
			ContainerID: "containerd://" + detrand.Hex(64, f.Seed, "container", p.UID, c.Name),
			State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}},
		})
	}
	return &corev1.Pod{TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"}, ObjectMeta: m, Spec: spec, Status: status}
}

func deviceClasses(f *fleet.Fleet) []runtime.Object {
	class := func(name, typ string) *resourcev1.DeviceClass {
		return &resourcev1.DeviceClass{
			TypeMeta:   metav1.TypeMeta{Kind: "DeviceClass", APIVersion: "resource.k8s.io/v1"},
			ObjectMeta: objectMeta(f, "", name, "DeviceClass", nil),
			Spec: resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{
				Expression: fmt.Sprintf("device.driver == '%s' && device.attributes['%s'].type == '%s'", fleet.DRADriverGPU, fleet.DRADriverGPU, typ),
			}}}},
		}
	}
	return []runtime.Object{class("gpu.nvidia.com", "gpu"), class("mig.nvidia.com", "mig")}
}

// semver turns "550.90.07" into the semantic version "550.90.7".
func semver(v string) string {
	parts := strings.Split(v, ".")
	for len(parts) < 3 {
		parts = append(parts, "0")
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err == nil {
			parts[i] = strconv.Itoa(n)
		}
	}
	return strings.Join(parts[:3], ".")
}

// resourceSlice renders the NVIDIA DRA driver's ResourceSlice of a node:
// whole GPUs, and the MIG devices of GPUs in MIG mode, in no particular
// order, with versions in semver form (driverVersion 550.90.7 where NVML
// prints 550.90.07), as the driver publishes them.
func resourceSlice(f *fleet.Fleet, n *fleet.Node) *resourcev1.ResourceSlice {
	m := n.Model
	str := func(s string) resourcev1.DeviceAttribute { return resourcev1.DeviceAttribute{StringValue: ptr.To(s)} }
	ver := func(s string) resourcev1.DeviceAttribute { return resourcev1.DeviceAttribute{VersionValue: ptr.To(s)} }
	num := func(i int) resourcev1.DeviceAttribute { return resourcev1.DeviceAttribute{IntValue: ptr.To(int64(i))} }
	common := func(g *fleet.GPU) map[resourcev1.QualifiedName]resourcev1.DeviceAttribute {
		return map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
			"productName":                      str(m.Name),
			"brand":                            str("Nvidia"),
			"architecture":                     str(m.Architecture),
			"cudaComputeCapability":            ver(fmt.Sprintf("%d.%d.0", m.ComputeMajor, m.ComputeMinor)),
			"driverVersion":                    ver(semver(n.DriverVersion)),
			"cudaDriverVersion":                ver(semver(n.CUDAVersion)),
			"resource.kubernetes.io/pciBusID":  str(strings.ToLower(g.PCIBusID[4:])),
			"resource.kubernetes.io/pcieRoot":  str(fmt.Sprintf("pci0000:%02x", g.Index*0x10)),
			"addressingMode":                   str("None"),
			resourcev1.QualifiedName("minor"):  num(g.Minor),
			resourcev1.QualifiedName("index"):  num(g.Index),
			resourcev1.QualifiedName("family"): str(m.Family),
		}
	}
	spec := resourcev1.ResourceSliceSpec{
		Driver:   fleet.DRADriverGPU,
		Pool:     resourcev1.ResourcePool{Name: n.Name, Generation: 1, ResourceSliceCount: 1},
		NodeName: ptr.To(n.Name),
	}
	for _, g := range n.GPUs {
		if !g.MIGEnabled() {
			attrs := common(g)
			attrs["type"] = str("gpu")
			attrs["uuid"] = str(g.UUID)
			spec.Devices = append(spec.Devices, resourcev1.Device{
				Name: g.DRAName(), Attributes: attrs,
				Capacity: map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{"memory": {Value: *resource.NewQuantity(m.MemoryMiB<<20, resource.BinarySI)}},
			})
			continue
		}
		for _, mi := range g.MIG {
			attrs := common(g)
			attrs["type"] = str("mig")
			attrs["uuid"] = str(mi.UUID)
			attrs["parentUUID"] = str(g.UUID)
			attrs["profile"] = str(mi.Profile.Name)
			capacity := map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{
				"memory":          {Value: *resource.NewQuantity(mi.Profile.MemoryMiB<<20, resource.BinarySI)},
				"multiprocessors": {Value: *resource.NewQuantity(int64(mi.Profile.ComputeSlices*16), resource.DecimalSI)},
			}
			for s := mi.Start; s < mi.Start+mi.Profile.MemorySlices; s++ {
				capacity[resourcev1.QualifiedName(fmt.Sprintf("memorySlice%d", s))] = resourcev1.DeviceCapacity{Value: *resource.NewQuantity(1, resource.DecimalSI)}
			}
			spec.Devices = append(spec.Devices, resourcev1.Device{Name: mi.DRAName(), Attributes: attrs, Capacity: capacity})
		}
	}
	// The driver appends devices as it ranges over a Go map, so gpu-3 may
	// come before gpu-0; a fixed shuffle per node keeps consumers from
	// relying on the order and the objects reproducible.
	order := func(d resourcev1.Device) uint64 { return detrand.Hash(f.Seed, "slice-order", n.Name, d.Name) }
	sort.SliceStable(spec.Devices, func(i, j int) bool { return order(spec.Devices[i]) < order(spec.Devices[j]) })
	name := fmt.Sprintf("%s-%s-%s", n.Name, fleet.DRADriverGPU, detrand.Pick(5, "bcdfghjklmnpqrstvwxz2456789", f.Seed, "slice", n.Name))
	return &resourcev1.ResourceSlice{
		TypeMeta:   metav1.TypeMeta{Kind: "ResourceSlice", APIVersion: "resource.k8s.io/v1"},
		ObjectMeta: objectMeta(f, "", name, "ResourceSlice", nil),
		Spec:       spec,
	}
}

// gpuConfig is the NVIDIA DRA driver's opaque GpuConfig for shared claims.
type gpuConfig struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Sharing    struct {
		Strategy          string         `json:"strategy"`
		MPSConfig         map[string]any `json:"mpsConfig,omitempty"`
		TimeSlicingConfig map[string]any `json:"timeSlicingConfig,omitempty"`
	} `json:"sharing"`
}

func resourceClaim(f *fleet.Fleet, c *fleet.Claim) *resourcev1.ResourceClaim {
	m := objectMeta(f, c.Namespace, c.Name, "ResourceClaim", nil)
	m.UID = types.UID(c.UID)
	var spec resourcev1.ResourceClaimSpec
	var results []resourcev1.DeviceRequestAllocationResult
	if len(c.GPUs) > 0 {
		spec.Devices.Requests = append(spec.Devices.Requests, resourcev1.DeviceRequest{Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{
			DeviceClassName: "gpu.nvidia.com", AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: int64(len(c.GPUs)),
		}})
		for _, g := range c.GPUs {
			results = append(results, resourcev1.DeviceRequestAllocationResult{Request: "gpu", Driver: fleet.DRADriverGPU, Pool: c.Node.Name, Device: g.DRAName()})
		}
	}
	if len(c.MIG) > 0 {
		spec.Devices.Requests = append(spec.Devices.Requests, resourcev1.DeviceRequest{Name: "mig", Exactly: &resourcev1.ExactDeviceRequest{
			DeviceClassName: "mig.nvidia.com", AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: int64(len(c.MIG)),
		}})
		for _, mi := range c.MIG {
			results = append(results, resourcev1.DeviceRequestAllocationResult{Request: "mig", Driver: fleet.DRADriverGPU, Pool: c.Node.Name, Device: mi.DRAName()})
		}
	}
	var allocConfig []resourcev1.DeviceAllocationConfiguration
	if c.Sharing != "" {
		var cfg gpuConfig
		cfg.APIVersion, cfg.Kind = "resource.nvidia.com/v1beta1", "GpuConfig"
		if c.Sharing == scenario.SharingMPS {
			cfg.Sharing.Strategy = "MPS"
			cfg.Sharing.MPSConfig = map[string]any{"defaultActiveThreadPercentage": 100 / max(1, len(c.Consumers))}
		} else {
			cfg.Sharing.Strategy = "TimeSlicing"
			cfg.Sharing.TimeSlicingConfig = map[string]any{"interval": "Default"}
		}
		raw, _ := json.Marshal(cfg)
		dc := resourcev1.DeviceConfiguration{Opaque: &resourcev1.OpaqueDeviceConfiguration{Driver: fleet.DRADriverGPU, Parameters: runtime.RawExtension{Raw: raw}}}
		spec.Devices.Config = []resourcev1.DeviceClaimConfiguration{{DeviceConfiguration: dc}}
		allocConfig = []resourcev1.DeviceAllocationConfiguration{{Source: resourcev1.AllocationConfigSourceClaim, DeviceConfiguration: dc}}
	}
	status := resourcev1.ResourceClaimStatus{Allocation: &resourcev1.AllocationResult{
		Devices: resourcev1.DeviceAllocationResult{Results: results, Config: allocConfig},
		NodeSelector: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{c.Node.Name}}},
		}}},
		AllocationTimestamp: ptr.To(metav1.NewTime(fleet.Epoch)),
	}}
	for _, p := range c.Consumers {
		status.ReservedFor = append(status.ReservedFor, resourcev1.ResourceClaimConsumerReference{Resource: "pods", Name: p.Name, UID: types.UID(p.UID)})
	}
	return &resourcev1.ResourceClaim{
		TypeMeta:   metav1.TypeMeta{Kind: "ResourceClaim", APIVersion: "resource.k8s.io/v1"},
		ObjectMeta: m, Spec: spec, Status: status,
	}
}
