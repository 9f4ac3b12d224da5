package index

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
)

// DRA drivers whose devices this package reads by name.
const (
	// draDriverNVIDIAGPU publishes whole GPUs (type gpu), MIG devices (type
	// mig) and passthrough GPUs (type vfio).
	draDriverNVIDIAGPU = "gpu.nvidia.com"
	// draDriverComputeDomain publishes IMEX channels and daemons for
	// multi-node NVLink: no GPU, no capacity, no uuid.
	draDriverComputeDomain = "compute-domain.nvidia.com"
)

// sliceDeviceKind says what a published device is to attribution.
type sliceDeviceKind uint8

const (
	// notAccelerator: a compute-domain channel or daemon, a NIC: a claim on
	// it holds no GPU, and nothing is wrong with it.
	notAccelerator sliceDeviceKind = iota
	// acceleratorDevice: a GPU or a MIG device that exists, found by uuid.
	acceleratorDevice
	// pendingMIG: a MIG device the driver creates only when a claim on it is
	// prepared (DynamicMIG); the slice names its parent and profile, and the
	// MIG UUID exists nowhere in the API.
	pendingMIG
	// unusable: published with a problem (see SliceProblem); a claim on it
	// holds some device nobody can name.
	unusable
)

// sliceDevice is what the node's ResourceSlices say about one device.
type sliceDevice struct {
	device  *resourcev1.Device
	kind    sliceDeviceKind
	uuid    string // GPU-… or MIG-…, as NVML prints it; "" unless acceleratorDevice
	profile string // MIG profile (1g.10gb), "" for whole GPUs
	slice   string // the ResourceSlice that published it
}

// SliceProblem is one published device that cannot be tied to a GPU. Claims
// on it are left unattributed; every other device is read as usual.
type SliceProblem struct {
	Slice  string // ResourceSlice name
	Driver string
	Pool   string
	Device string
	Reason string
}

func (p SliceProblem) String() string {
	return fmt.Sprintf("ResourceSlice %s (driver %s, pool %s), device %s: %s", p.Slice, p.Driver, p.Pool, p.Device, p.Reason)
}

// draDeviceKey is how allocation results and PodResources name a device.
func draDeviceKey(driver, pool, device string) string {
	return driver + "/" + pool + "/" + device
}

// readSlices indexes the devices of the node's ResourceSlices by
// driver/pool/device. The order of slices and of devices in them means
// nothing (the driver publishes them as its maps iterate, gpu-3 before
// gpu-0), and a device's name is not its NVML index: the NVIDIA driver names
// GPUs by minor number. Only the uuid says which GPU a device is; PCI bus ids
// are not unique (vGPUs of one board share one).
func readSlices(list []*resourcev1.ResourceSlice) (map[string]*sliceDevice, []SliceProblem) {
	// While a driver republishes a pool (MIG reconfigured, driver restarted)
	// the slices of the previous generation linger, and may give a device
	// name that was recreated its old UUID. Only the newest generation counts.
	newest := map[string]int64{}
	for _, s := range list {
		pool := s.Spec.Driver + "/" + s.Spec.Pool.Name
		if g, ok := newest[pool]; !ok || s.Spec.Pool.Generation > g {
			newest[pool] = s.Spec.Pool.Generation
		}
	}
	// By name, so that which copy of a duplicated device is reported first
	// does not depend on the informer's order.
	ordered := slices.Clone(list)
	slices.SortFunc(ordered, func(a, b *resourcev1.ResourceSlice) int { return cmp.Compare(a.Name, b.Name) })

	devices := map[string]*sliceDevice{}
	var problems []SliceProblem
	for _, s := range ordered {
		driver, pool := s.Spec.Driver, s.Spec.Pool.Name
		if s.Spec.Pool.Generation < newest[driver+"/"+pool] {
			continue
		}
		for i := range s.Spec.Devices {
			d := &s.Spec.Devices[i]
			key := draDeviceKey(driver, pool, d.Name)
			sd, reason := readDevice(driver, d)
			sd.slice = s.Name
			report := func(reason string) {
				problems = append(problems, SliceProblem{Slice: s.Name, Driver: driver, Pool: pool, Device: d.Name, Reason: reason})
			}
			if prev, dup := devices[key]; dup {
				// A pool may span slices, but each device name is published once.
				if prev.kind == sd.kind && prev.uuid == sd.uuid {
					continue
				}
				report(fmt.Sprintf("also published by ResourceSlice %s as a different device (uuid %q here, %q there); neither is used", prev.slice, sd.uuid, prev.uuid))
				devices[key] = &sliceDevice{device: d, kind: unusable, slice: s.Name}
				continue
			}
			if reason != "" {
				report(reason)
			}
			devices[key] = sd
		}
	}
	return devices, problems
}

// readDevice classifies one device; reason says what is wrong with an
// unusable one.
func readDevice(driver string, d *resourcev1.Device) (*sliceDevice, string) {
	sd := &sliceDevice{device: d, kind: unusable}
	typ := attrString(d, driver, "type")
	nvidia := driver == draDriverNVIDIAGPU
	uuid, hasUUID := deviceAttr(d, driver, "uuid")
	switch {
	case hasUUID && uuid.StringValue == nil:
		return sd, "attribute uuid is not a string"
	case hasUUID && *uuid.StringValue == "":
		return sd, "attribute uuid is empty"
	case hasUUID:
		sd.uuid = *uuid.StringValue
		// NVML prints GPU-… and MIG-…; a bare UUID would match no
		// resource. Passthrough (vfio) devices have bare UUIDs and no NVML
		// on this host, so only gpu and mig are checked.
		if want := nvidiaUUIDPrefix[typ]; nvidia && want != "" && !strings.HasPrefix(sd.uuid, want) {
			return sd, fmt.Sprintf("type %s but uuid %q does not start with %q", typ, sd.uuid, want)
		}
		sd.kind = acceleratorDevice
		sd.profile = attrString(d, driver, "profile")
		return sd, ""
	case nvidia && typ == "mig":
		if attrString(d, driver, "parentUUID") == "" {
			return sd, "type mig with neither uuid nor parentUUID"
		}
		sd.kind = pendingMIG
		sd.profile = attrString(d, driver, "profile")
		return sd, ""
	case nvidia && typ == "gpu":
		return sd, "type gpu but no uuid attribute"
	default:
		sd.kind = notAccelerator
		return sd, ""
	}
}

// nvidiaUUIDPrefix is how NVML prints the UUID of each device type of the
// NVIDIA GPU driver.
var nvidiaUUIDPrefix = map[string]string{"gpu": "GPU-", "mig": "MIG-"}

// deviceAttr finds a device attribute by its short name or its name
// qualified with the driver's domain (gpu.nvidia.com/uuid): both address the
// same attribute.
func deviceAttr(d *resourcev1.Device, driver, name string) (resourcev1.DeviceAttribute, bool) {
	for _, k := range []resourcev1.QualifiedName{resourcev1.QualifiedName(name), resourcev1.QualifiedName(driver + "/" + name)} {
		if a, ok := d.Attributes[k]; ok {
			return a, true
		}
	}
	return resourcev1.DeviceAttribute{}, false
}

// attrString is a string attribute's value, "" when absent or not a string.
func attrString(d *resourcev1.Device, driver, name string) string {
	if a, ok := deviceAttr(d, driver, name); ok && a.StringValue != nil {
		return *a.StringValue
	}
	return ""
}
