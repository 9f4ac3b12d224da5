package podresources

import (
	v1 "k8s.io/kubelet/pkg/apis/podresources/v1"
)

// Pod is the devices the kubelet assigned to one pod's containers.
type Pod struct {
	Namespace  string
	Name       string
	Containers []Container
}

// Container is one container's device-plugin devices and DRA claim results.
type Container struct {
	Name    string
	Devices []Devices
	// Claims lists the DRA claims the container uses, with the devices
	// allocated to each. Empty on kubelets without dynamic resources
	// (before 1.27, or 1.27–1.33 without the KubeletPodResourcesDynamicResources gate).
	Claims []Claim
}

// Devices is one extended resource's device ids, e.g. nvidia.com/gpu →
// ["GPU-8f3c…"] or aws.amazon.com/neuroncore → ["4", "5"].
type Devices struct {
	ResourceName string
	IDs          []string
	// NUMANodes the devices are attached to, when the kubelet reports it.
	NUMANodes []int64
}

// Claim is one DRA ResourceClaim as a container sees it.
type Claim struct {
	Name      string
	Namespace string
	Devices   []ClaimDevice
}

// ClaimDevice is one allocated DRA device: the same driver/pool/device
// (and share id) key as ResourceClaim.status.allocation.devices.results[].
type ClaimDevice struct {
	Driver  string
	Pool    string
	Device  string
	ShareID string // empty unless the device allows multiple allocations
	// CDIDevices are fully qualified CDI names, e.g. k8s.gpu.nvidia.com/device=gpu-0.
	CDIDevices []string
}

func podFromProto(p *v1.PodResources) Pod {
	out := Pod{Namespace: p.GetNamespace(), Name: p.GetName()}
	if n := len(p.GetContainers()); n > 0 {
		out.Containers = make([]Container, 0, n)
	}
	for _, c := range p.GetContainers() {
		out.Containers = append(out.Containers, containerFromProto(c))
	}
	return out
}

func containerFromProto(c *v1.ContainerResources) Container {
	out := Container{Name: c.GetName()}
	for _, d := range c.GetDevices() {
		out.Devices = append(out.Devices, devicesFromProto(d))
	}
	for _, dr := range c.GetDynamicResources() {
		claim := Claim{Name: dr.GetClaimName(), Namespace: dr.GetClaimNamespace()}
		for _, cr := range dr.GetClaimResources() {
			cd := ClaimDevice{
				Driver:  cr.GetDriverName(),
				Pool:    cr.GetPoolName(),
				Device:  cr.GetDeviceName(),
				ShareID: cr.GetShareId(),
			}
			for _, cdi := range cr.GetCdiDevices() {
				cd.CDIDevices = append(cd.CDIDevices, cdi.GetName())
			}
			claim.Devices = append(claim.Devices, cd)
		}
		out.Claims = append(out.Claims, claim)
	}
	return out
}

func devicesFromProto(d *v1.ContainerDevices) Devices {
	out := Devices{ResourceName: d.GetResourceName(), IDs: append([]string(nil), d.GetDeviceIds()...)}
	for _, n := range d.GetTopology().GetNodes() {
		out.NUMANodes = append(out.NUMANodes, n.GetID())
	}
	return out
}
