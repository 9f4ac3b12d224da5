// Package deviceid reads the device ids that device plugins hand to the
// kubelet (and that PodResources, Docker's NVIDIA_VISIBLE_DEVICES and mapping
// files repeat), and says which physical device, partition and replica each
// one names.
//
// Forms (reference/cost_k8s.md §1, §3; gpu_anchors.md §1.3):
//
//	GPU-<uuid>                 whole NVIDIA GPU
//	GPU-<uuid>::<n>            replica n of a time-sliced or MPS-shared GPU
//	MIG-<uuid>[::<n>]          MIG device (R470+ UUID), optionally a replica of it
//	MIG-GPU-<uuid>/<gi>/<ci>   MIG device, pre-R470 form: names parent and GPU instance
//	nvidia<N>                  GKE: GPU with index N
//	nvidia<N>/gi<M>            GKE: MIG GPU instance M of GPU N
//	nvidia<N>[/gi<M>]/vgpu<K>  GKE: time-shared replica K
//	<N>                        Neuron core or device index (by resource name)
package deviceid

import (
	"strconv"
	"strings"
)

// Form is the shape of a device id.
type Form uint8

const (
	// FormOther is an id of no known shape; it can only match an hw.id equal to it.
	FormOther Form = iota
	// FormGPU is a GPU UUID (GPU-…), possibly with a replica suffix.
	FormGPU
	// FormMIG is a MIG UUID (MIG-…), possibly with a replica suffix.
	FormMIG
	// FormMIGLegacy is MIG-GPU-<uuid>/<gi>/<ci>: Parent and GI are known, not the MIG UUID.
	FormMIGLegacy
	// FormGKE is nvidiaN[/giM][/vgpuK].
	FormGKE
	// FormIndex is a bare decimal index (Neuron device plugin).
	FormIndex
)

// ID is a parsed device id.
type ID struct {
	Raw  string
	Form Form
	// UUID is the device UUID without replica suffix (FormGPU, FormMIG), or
	// the parent GPU UUID (FormMIGLegacy).
	UUID string
	// Index is the GPU index (FormGKE) or the Neuron index (FormIndex), else -1.
	Index int
	// GI is the MIG GPU-instance id (FormGKE with /gi, FormMIGLegacy), else -1.
	GI int
	// Replica is the replica number (::n or /vgpuK), else -1.
	Replica int
}

// Shared reports whether the id names one replica of a shared device.
func (id ID) Shared() bool { return id.Replica >= 0 }

// maxIDLen bounds what is accepted as an id; real ones are under 64 bytes.
const maxIDLen = 256

// Parse reads one device id. It never fails: an id of unknown shape comes
// back as FormOther with its raw text.
func Parse(raw string) ID {
	id := ID{Raw: raw, Form: FormOther, Index: -1, GI: -1, Replica: -1}
	if raw == "" || len(raw) > maxIDLen || strings.ContainsAny(raw, " \t\r\n") {
		return id
	}
	switch {
	case strings.HasPrefix(raw, "MIG-GPU-"):
		return parseLegacyMIG(id)
	case strings.HasPrefix(raw, "GPU-"), strings.HasPrefix(raw, "MIG-"):
		return parseUUID(id)
	case strings.HasPrefix(raw, "nvidia"):
		return parseGKE(id)
	}
	if n, ok := atoi(raw); ok {
		id.Form, id.Index = FormIndex, n
	}
	return id
}

func parseUUID(id ID) ID {
	uuid, replica, hasReplica := strings.Cut(id.Raw, "::")
	if len(uuid) <= len("GPU-") || strings.ContainsAny(uuid, "/:") {
		return id
	}
	if hasReplica {
		n, ok := atoi(replica)
		if !ok {
			return id
		}
		id.Replica = n
	}
	id.UUID = uuid
	id.Form = FormGPU
	if strings.HasPrefix(uuid, "MIG-") {
		id.Form = FormMIG
	}
	return id
}

// parseLegacyMIG reads MIG-GPU-<uuid>/<gi>/<ci>.
func parseLegacyMIG(id ID) ID {
	parts := strings.Split(strings.TrimPrefix(id.Raw, "MIG-"), "/")
	if len(parts) != 3 || len(parts[0]) <= len("GPU-") {
		return id
	}
	gi, ok1 := atoi(parts[1])
	_, ok2 := atoi(parts[2])
	if !ok1 || !ok2 {
		return id
	}
	id.Form, id.UUID, id.GI = FormMIGLegacy, parts[0], gi
	return id
}

// parseGKE reads nvidiaN, nvidiaN/giM, nvidiaN/vgpuK, nvidiaN/giM/vgpuK.
func parseGKE(id ID) ID {
	parts := strings.Split(id.Raw, "/")
	if len(parts) > 3 {
		return id
	}
	n, ok := atoi(strings.TrimPrefix(parts[0], "nvidia"))
	if !ok {
		return id
	}
	out := id
	out.Index = n
	for _, p := range parts[1:] {
		switch {
		case strings.HasPrefix(p, "gi") && out.GI < 0 && out.Replica < 0:
			gi, ok := atoi(p[2:])
			if !ok {
				return id
			}
			out.GI = gi
		case strings.HasPrefix(p, "vgpu") && out.Replica < 0:
			k, ok := atoi(p[4:])
			if !ok {
				return id
			}
			out.Replica = k
		default:
			return id
		}
	}
	out.Form = FormGKE
	return out
}

// atoi accepts only plain non-negative decimals of sane length (no sign, no
// spaces), so that odd ids fall through to FormOther instead of aliasing.
func atoi(s string) (int, bool) {
	if s == "" || len(s) > 9 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}
