package kubeapi

import (
	"slices"
	"testing"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/fleet"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/simtest"
)

// The demo fleet's DRA node publishes its slice with the NVIDIA driver's
// quirks (devices out of index order, semver driverVersion) and the same
// devices as before: one per whole GPU, one per MIG instance.
func TestResourceSliceHasTheDriversQuirks(t *testing.T) {
	f := simtest.DemoFleet(t, 0)
	n, ok := f.Node("gpu-h200-a")
	if !ok || !n.DRA {
		t.Fatal("the demo fleet has no DRA node gpu-h200-a")
	}
	s := resourceSlice(f, n)

	var want, got []string
	for _, g := range n.GPUs {
		if !g.MIGEnabled() {
			want = append(want, g.DRAName())
		}
		for _, mi := range g.MIG {
			want = append(want, mi.DRAName())
		}
	}
	var indexes []int64
	for _, d := range s.Spec.Devices {
		got = append(got, d.Name)
		if *d.Attributes["type"].StringValue == "gpu" {
			indexes = append(indexes, *d.Attributes["index"].IntValue)
		}
		v := d.Attributes["driverVersion"]
		if n.DriverVersion != "550.90.07" || v.VersionValue == nil || *v.VersionValue != "550.90.7" || v.StringValue != nil {
			t.Errorf("%s: driverVersion %+v for NVML's %s, want the version 550.90.7", d.Name, v, n.DriverVersion)
		}
	}
	if slices.IsSorted(indexes) {
		t.Errorf("whole GPUs in index order %v; the driver publishes them in map order", indexes)
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(want, got) {
		t.Errorf("devices %v, want %v", got, want)
	}
	if s.Spec.Driver != fleet.DRADriverGPU || *s.Spec.NodeName != n.Name {
		t.Errorf("slice of %s for %s", s.Spec.Driver, *s.Spec.NodeName)
	}
}
