package exportersource

import (
	"bytes"

	"github.com/otelcol-accel/otelcol-accel/internal/promscrape"
)

// lineLabels are the labels of one line that say what it measures and who
// holds it. They are read by name: dcgm-exporter's label order varies
// between releases and within a family (4.x sorts err_code/err_msg in
// among the pod labels). The slices point into the parsed line.
type lineLabels struct {
	// The device, and the MIG instance when the row is one's.
	uuid, gi, profile, index, busID, model, host, driver []byte

	// The holder: Kubernetes pod (and, with KUBERNETES_VIRTUAL_GPUS, the
	// virtual GPU), DRA claim (--kubernetes-enable-dra).
	pod, namespace, container, vgpu                     []byte
	draClaim, draClaimNS, draDriver, draPool, draDevice []byte
	// draMIGProfile and draMIGUUID name the MIG instance a DRA claim holds.
	draMIGProfile, draMIGUUID []byte

	// xid is DCGM_EXP_XID_ERRORS_COUNT's code.
	xid []byte
}

func (l *lineLabels) read(pairs []promscrape.Label[[]byte]) {
	*l = lineLabels{}
	for _, p := range pairs {
		switch string(p.Name) {
		case "UUID", "uuid":
			l.uuid = p.Value
		case "GPU_I_ID":
			l.gi = p.Value
		case "GPU_I_PROFILE":
			l.profile = p.Value
		case "gpu":
			l.index = p.Value
		case "pci_bus_id":
			l.busID = p.Value
		case "modelName":
			l.model = p.Value
		case "Hostname", "hostname":
			l.host = p.Value
		case "DCGM_FI_DRIVER_VERSION":
			l.driver = p.Value
		case "pod", "pod_name":
			l.pod = p.Value
		case "namespace", "pod_namespace":
			l.namespace = p.Value
		case "container", "container_name":
			l.container = p.Value
		case "vgpu":
			l.vgpu = p.Value
		case "dra_claim_name":
			l.draClaim = p.Value
		case "dra_claim_namespace":
			l.draClaimNS = p.Value
		case "dra_driver_name":
			l.draDriver = p.Value
		case "dra_pool_name":
			l.draPool = p.Value
		case "dra_device_name":
			l.draDevice = p.Value
		case "dra_mig_profile":
			l.draMIGProfile = p.Value
		case "dra_mig_device_uuid":
			l.draMIGUUID = p.Value
		case "xid":
			l.xid = p.Value
		}
	}
}

// migInstanceUUID is the MIG instance a DRA claim names, when it is one
// (MIG UUIDs start with "MIG-"; anything else cannot be told from a GPU).
func (l *lineLabels) migInstanceUUID() []byte {
	if bytes.HasPrefix(l.draMIGUUID, []byte("MIG-")) {
		return l.draMIGUUID
	}
	return nil
}

// holder is who a row is attributed to. Rows of one device that differ
// only in their holder are dcgm-exporter's per-holder copies of one value
// (except the per-pod families under per_pod_usage).
type holder struct {
	namespace, pod, container, vgpu                     string
	draClaim, draClaimNS, draDriver, draPool, draDevice string
}

// nobody is the holder of rows without pod or claim labels, or with empty
// ones: pod="" namespace="" means no one holds the device.
const nobody = 0

// someone reports whether the labels name a holder.
func (l *lineLabels) someone() bool { return len(l.pod) > 0 || len(l.draClaim) > 0 }

// holderKey writes the holder labels as one lookup key.
func (l *lineLabels) holderKey(b []byte) []byte {
	for _, v := range [...][]byte{l.namespace, l.pod, l.container, l.vgpu, l.draClaim, l.draClaimNS, l.draDriver, l.draPool, l.draDevice} {
		b = append(append(b, v...), 0)
	}
	return b
}

func (l *lineLabels) holder() holder {
	return holder{
		namespace: string(l.namespace), pod: string(l.pod), container: string(l.container), vgpu: string(l.vgpu),
		draClaim: string(l.draClaim), draClaimNS: string(l.draClaimNS), draDriver: string(l.draDriver),
		draPool: string(l.draPool), draDevice: string(l.draDevice),
	}
}

// compare orders holders by their labels, so that which copy is taken does
// not depend on the order of the page.
func (h holder) compare(o holder) int {
	a := [...]string{h.namespace, h.pod, h.container, h.vgpu, h.draClaimNS, h.draClaim, h.draDriver, h.draPool, h.draDevice}
	b := [...]string{o.namespace, o.pod, o.container, o.vgpu, o.draClaimNS, o.draClaim, o.draDriver, o.draPool, o.draDevice}
	for i := range a {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

// podKey is the accelerator.consumer.pod value: "<namespace>/<pod>".
func (h holder) podKey() string { return h.namespace + "/" + h.pod }
