package mapping

import (
	"regexp"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/receiver/neuronreceiver/internal/metadata"
	"github.com/otelcol-accel/otelcol-accel/receiver/neuronreceiver/internal/report"
)

// host is what instance_info says about the machine.
type host struct {
	name, id, instanceType, region, zone string
}

func hostFrom(ii *report.InstanceInfo) host {
	if ii == nil {
		return host{}
	}
	h := host{name: ii.Name, id: ii.ID, instanceType: ii.Type, region: ii.Region, zone: ii.AvailabilityZone}
	if h.region == "" {
		// instance_region is missing on instances launched before
		// 2020-08-24; the zone name carries it.
		h.region = regionFromZone(h.zone)
	}
	return h
}

var zonePattern = regexp.MustCompile(`^([a-z]{2}(?:-[a-z]+)+-\d+)[a-z]$`)

// regionFromZone turns "us-east-2a" into "us-east-2". Local and Wavelength
// zones ("us-west-2-lax-1a") do not match and give "".
func regionFromZone(zone string) string {
	if m := zonePattern.FindStringSubmatch(zone); m != nil {
		return m[1]
	}
	return ""
}

func (h host) known() bool { return h.id != "" || h.instanceType != "" }

func (h host) set(rb *metadata.ResourceBuilder) {
	if h.name != "" {
		rb.SetHostName(h.name)
	}
	if h.id != "" {
		rb.SetHostID(h.id)
	}
	if h.instanceType != "" {
		rb.SetHostType(h.instanceType)
	}
	if h.region != "" {
		rb.SetCloudRegion(h.region)
	}
	if h.zone != "" {
		rb.SetCloudAvailabilityZone(h.zone)
	}
	if h.known() {
		rb.SetCloudProvider("aws")
	}
}

// hardware is what neuron_hardware_info says, with the last good values
// kept across reports: a report whose hardware info is missing or broken
// does not make the devices disappear.
type hardware struct {
	deviceCount    int
	coresPerDevice int
	memorySize     int64
	model          string
}

func (hw *hardware) update(hi *report.HardwareInfo, instanceType string) {
	if hi != nil {
		if n, ok := positive(hi.DeviceCount, 1<<10); ok {
			hw.deviceCount = int(n)
		}
		if n, ok := positive(hi.NeuronCorePerDevice, 1<<7); ok {
			hw.coresPerDevice = int(n)
		}
		if n, ok := positive(hi.DeviceMemorySize, 1<<50); ok {
			hw.memorySize = n
		}
		if hi.DeviceType != "" {
			hw.model = hi.DeviceType
		}
	}
	if hw.model == "" {
		hw.model = modelFromInstanceType(instanceType)
	}
}

func positive(v *float64, limit int64) (int64, bool) {
	if v == nil {
		return 0, false
	}
	n, ok := report.Integer(*v)
	return n, ok && n > 0 && n <= limit
}

// totalCores is the number of NeuronCores on the host, 0 when unknown.
func (hw *hardware) totalCores() int { return hw.deviceCount * hw.coresPerDevice }

// modelFromInstanceType names the device type of releases that do not
// print neuron_device_type.
func modelFromInstanceType(t string) string {
	family, _, _ := strings.Cut(t, ".")
	switch {
	case strings.HasPrefix(family, "inf1"):
		return "inferentia"
	case strings.HasPrefix(family, "inf2"):
		return "inferentia2"
	case strings.HasPrefix(family, "trn1"):
		return "trainium"
	case strings.HasPrefix(family, "trn2"):
		return "trainium2"
	case strings.HasPrefix(family, "trn3"):
		return "trainium3"
	}
	return ""
}

func deviceID(d int) string { return "neuron_device_" + strconv.Itoa(d) }

func coreID(d, c int) string { return deviceID(d) + "/neuroncore_" + strconv.Itoa(c) }

func (m *Mapper) common(rb *metadata.ResourceBuilder) {
	rb.SetAcceleratorKind(accelschema.KindAWSNeuron)
	rb.SetHwType(accelschema.HWTypeGPU)
	rb.SetHwVendor(accelschema.VendorAWS)
	if m.hw.model != "" {
		rb.SetHwModel(m.hw.model)
	}
	m.host.set(rb)
}

func (m *Mapper) deviceResource(d int) pcommon.Resource {
	rb := m.mb.NewResourceBuilder()
	m.common(rb)
	rb.SetHwID(deviceID(d))
	rb.SetAcceleratorDeviceIndex(int64(d))
	rb.SetAcceleratorPartitionType(accelschema.PartitionNone)
	rb.SetAcceleratorPartitionShare(1)
	return rb.Emit()
}

func (m *Mapper) coreResource(c int, tag string) pcommon.Resource {
	d := c / m.hw.coresPerDevice
	rb := m.mb.NewResourceBuilder()
	m.common(rb)
	rb.SetHwID(coreID(d, c))
	rb.SetHwParent(deviceID(d))
	rb.SetAcceleratorDeviceIndex(int64(d))
	rb.SetAcceleratorPartitionType(accelschema.PartitionNeuronCore)
	rb.SetAcceleratorPartitionID(strconv.Itoa(c))
	rb.SetAcceleratorPartitionShare(1 / float64(m.hw.coresPerDevice))
	rb.SetAcceleratorNeuroncoreIndex(int64(c))
	if tag != "" {
		rb.SetAwsNeuronRuntimeTag(tag)
	}
	return rb.Emit()
}

// runtimeResource carries the runtime-scoped metrics of a runtime that
// holds no NeuronCore yet (nothing loaded): the host and the tag, no hw.id.
func (m *Mapper) runtimeResource(tag string) pcommon.Resource {
	rb := m.mb.NewResourceBuilder()
	rb.SetAcceleratorKind(accelschema.KindAWSNeuron)
	rb.SetHwVendor(accelschema.VendorAWS)
	m.host.set(rb)
	rb.SetAwsNeuronRuntimeTag(tag)
	return rb.Emit()
}
