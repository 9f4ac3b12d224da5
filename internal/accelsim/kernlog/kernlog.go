// Package kernlog writes a simulated node's kernel log: the lines the
// NVIDIA and Neuron drivers write for the scenario's failures, in the
// syslog format of /var/log/kern.log, at the wall time the simulated
// failure happens. The demo's agents follow the file (health.kernel_log
// source: file), so every failure reaches them from the kernel log as well
// as from dcgm-exporter or neuron-monitor, as on a real node.
package kernlog

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/fleet"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/scenario"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/sim"
)

// Entry is one kernel message at a simulated time since the start.
type Entry struct {
	At   time.Duration
	Text string
}

// Entries are the kernel messages of a node's failures, in time order.
func Entries(n *fleet.Node) []Entry {
	var out []Entry
	for _, g := range n.GPUs {
		bus := NVRMBus(g.PCIBusID)
		named := false
		for _, f := range g.Failures {
			if f.Throttle != "" {
				continue // clocks held down: no kernel message
			}
			if !named {
				// The driver names a GPU's UUID before its first XID.
				out = append(out, Entry{At: f.At, Text: fmt.Sprintf("NVRM: GPU at PCI:%s: %s", bus, g.UUID)})
				named = true
			}
			out = append(out, gpuLines(bus, g, f)...)
		}
	}
	for _, d := range n.NeuronDevices {
		for _, f := range d.Failures {
			var typ string
			switch f.ECC {
			case scenario.ECCMemUncorrected:
				typ = "HBM_UNCORRECTABLE_ERROR"
			case scenario.ECCSRAMUncorrected:
				typ = "SRAM_UNCORRECTABLE_ERROR"
			default:
				continue // the driver prints nothing for corrected errors
			}
			out = append(out, Entry{At: f.At, Text: fmt.Sprintf("NEURON_HW_ERR=%s instance-id=%s hostname=%s nd-id=%d action=TERMINATE_INSTANCE", typ, n.InstanceID, n.Name, d.Index)})
		}
	}
	slices.SortStableFunc(out, func(a, b Entry) int { return int(a.At - b.At) })
	return out
}

// NVRMBus is NVRM's form of a bus id: "00000000:3B:00.0" → "0000:3b:00".
func NVRMBus(pci string) string {
	parts := strings.Split(strings.ToLower(pci), ":")
	if len(parts) != 3 {
		return strings.ToLower(pci)
	}
	domain := parts[0]
	if len(domain) > 4 {
		domain = domain[len(domain)-4:]
	}
	dev, _, _ := strings.Cut(parts[2], ".")
	return domain + ":" + parts[1] + ":" + dev
}

func gpuLines(bus string, g *fleet.GPU, f fleet.Failure) []Entry {
	xidLine := func(code int, text string) Entry {
		return Entry{At: f.At, Text: fmt.Sprintf("NVRM: Xid (PCI:%s): %d, pid='<unknown>', name=<unknown>, %s", bus, code, text)}
	}
	switch f.RowRemap {
	case scenario.RowRemapPending:
		return []Entry{xidLine(63, "Row Remapper: New row (0x0000000000d1e2f0) Marked for Remapping, reset gpu to activate.")}
	case scenario.RowRemapFailed:
		return []Entry{xidLine(64, "Row Remapper: Failed to remap row (0x0000000000d1e2f0), the GPU must be reset and replaced if it recurs.")}
	}
	switch f.XID {
	case 79:
		return []Entry{
			xidLine(79, "GPU has fallen off the bus."),
			{At: f.At, Text: fmt.Sprintf("NVRM: GPU %s.0: GPU has fallen off the bus.", bus)},
		}
	case 48:
		return []Entry{xidLine(48, "An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 2, subpartition 1.")}
	}
	return []Entry{xidLine(f.XID, fmt.Sprintf("XID %d on %s", f.XID, g.UUID))}
}

// Run appends each entry to path when the timeline reaches its time, as
// "<RFC 3339 time> <node> kernel: <text>", until ctx is done.
func Run(ctx context.Context, path, node string, entries []Entry, tl sim.Timeline) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	for _, e := range entries {
		wall := tl.Start.Add(time.Duration(float64(e.At) / tl.Speed))
		if wait := time.Until(wall); wait > 0 {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(wait):
			}
		}
		if _, err := fmt.Fprintf(f, "%s %s kernel: %s\n", wall.UTC().Format(time.RFC3339Nano), node, e.Text); err != nil {
			return err
		}
	}
	<-ctx.Done()
	return nil
}
