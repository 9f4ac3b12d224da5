package model

import (
	"fmt"
	"strconv"
	"strings"
)

// DeviceFilter selects GPUs by nvidia-smi index or by UUID (GPU or MIG). A
// MIG instance is selected when it or its GPU is.
type DeviceFilter struct {
	indexes map[int]bool
	ids     map[string]bool
}

// ParseDeviceFilter reads the `devices` setting; an empty list selects all.
func ParseDeviceFilter(entries []string) (DeviceFilter, error) {
	f := DeviceFilter{}
	for _, e := range entries {
		e = strings.TrimSpace(e)
		switch {
		case e == "":
			return DeviceFilter{}, fmt.Errorf("devices: empty entry")
		case strings.HasPrefix(e, "GPU-") || strings.HasPrefix(e, "MIG-"):
			if f.ids == nil {
				f.ids = map[string]bool{}
			}
			f.ids[e] = true
		default:
			i, err := strconv.Atoi(e)
			if err != nil || i < 0 {
				return DeviceFilter{}, fmt.Errorf("devices: %q is neither a GPU index (0, 1, …) nor a UUID (GPU-…, MIG-…)", e)
			}
			if f.indexes == nil {
				f.indexes = map[int]bool{}
			}
			f.indexes[i] = true
		}
	}
	return f, nil
}

// All reports whether the filter selects every device.
func (f DeviceFilter) All() bool { return len(f.indexes) == 0 && len(f.ids) == 0 }

// Match reports whether a device with this index and these ids (its UUID,
// its parent's UUID) is selected.
func (f DeviceFilter) Match(index int, ids ...string) bool {
	if f.All() {
		return true
	}
	if index >= 0 && f.indexes[index] {
		return true
	}
	for _, id := range ids {
		if id != "" && f.ids[id] {
			return true
		}
	}
	return false
}
