package kernellog

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// PCITopology says which PCI ports and bridges a device sits behind and
// which devices a driver has bound, from sysfs: /sys/bus/pci/devices/<bdf>
// links to the device's place in the tree,
// /sys/devices/pci0000:00/0000:00:03.0/0000:03:00.0, whose path names every
// port above it. An AER error the kernel reports on a root port is then
// an error on the accelerators behind it. sysfs is the host's in a
// container (Kubernetes mounts it read-only), so the agent reads it as is.
type PCITopology struct {
	// SysPath is sysfs's mount point, /sys unless set (tests point it at a
	// tree of their own with the kernel's layout).
	SysPath string

	mu       sync.Mutex
	upstream map[string][]string
}

func (p *PCITopology) sys() string {
	if p.SysPath == "" {
		return "/sys"
	}
	return p.SysPath
}

// Upstream returns the ports and bridges above the device at bus (in
// canonical form), the root port first; nil when sysfs does not know the
// device. Answers are kept: a device's place does not change while it is
// present.
func (p *PCITopology) Upstream(bus string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if up, ok := p.upstream[bus]; ok {
		return up
	}
	target, err := os.Readlink(filepath.Join(p.sys(), "bus", "pci", "devices", bus))
	if err != nil {
		return nil // not kept: the device may appear (hot plug, a driver reload)
	}
	var up []string
	for part := range strings.SplitSeq(filepath.ToSlash(target), "/") {
		if b, ok := canonicalBus(part); ok && strings.Count(part, ":") == 2 && b != bus {
			up = append(up, b)
		}
	}
	if p.upstream == nil {
		p.upstream = map[string][]string{}
	}
	if len(p.upstream) < 4096 {
		p.upstream[bus] = up
	}
	return up
}

// Behind reports whether the device at bus sits behind port.
func (p *PCITopology) Behind(bus, port string) bool {
	return slices.Contains(p.Upstream(bus), port)
}

// Bound lists the devices a driver has bound (/sys/bus/pci/drivers/<driver>),
// in canonical form.
func (p *PCITopology) Bound(driver string) []string {
	entries, err := os.ReadDir(filepath.Join(p.sys(), "bus", "pci", "drivers", driver))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if b, ok := canonicalBus(e.Name()); ok && strings.Count(e.Name(), ":") == 2 {
			out = append(out, b)
		}
	}
	return out
}

// SameSlot reports whether two functions are of one device: the audio
// function 0000:03:00.1 of the GPU at 0000:03:00.0.
func SameSlot(a, b string) bool {
	i, j := strings.LastIndexByte(a, '.'), strings.LastIndexByte(b, '.')
	return i > 0 && j > 0 && a[:i] == b[:j]
}
