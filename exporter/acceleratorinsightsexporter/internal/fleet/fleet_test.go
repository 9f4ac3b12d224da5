package fleet

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

// Quantile interpolates as Prometheus's histogram_quantile.
func TestQuantile(t *testing.T) {
	bounds := []float64{0.1, 0.5, 1}
	counts := []float64{10, 30, 50, 10} // cumulative 10, 40, 90, 100
	for q, want := range map[float64]float64{
		0.05: 0.05,                // first bucket from 0
		0.25: 0.1 + 0.4*15.0/30,   // inside (0.1, 0.5]
		0.9:  1,                   // exactly the cumulative count at 1
		0.95: 1,                   // +Inf: the highest finite bound
		0.5:  0.5 + 0.5*10.0/50.0, // inside (0.5, 1]
	} {
		got := Quantile(q, bounds, counts)
		require.NotNil(t, got)
		require.InDelta(t, want, *got, 1e-12, "q=%g", q)
	}
	require.Nil(t, Quantile(0.5, bounds, []float64{0, 0, 0, 0}))
	require.Nil(t, Quantile(0.5, bounds, []float64{1}))
}

func res(hwID, parent, ptype, pod string, share float64, alloc string, util float64) Resource {
	r := Resource{Identity: Identity{HWID: hwID, Parent: parent, PartitionType: ptype, Pod: pod, Namespace: "ns", Team: "t",
		Node: "n", Model: "m", Kind: s.KindNvidiaGPU, Index: 0, Share: share, Allocation: alloc}, Health: ""}
	if !math.IsNaN(util) {
		r.Utilization = &util
	}
	if parent == "" {
		r.Health = s.HWStateOK
	}
	p := 1.0 * share
	if math.IsNaN(share) {
		p = 1
	}
	r.PricePerHour = &p
	return r
}

// A shared device counts once: its own resource and its consumers' copies
// are one device; MIG instances without their device's resource still make
// one device; allocation adds up to the devices.
func TestCountedOnce(t *testing.T) {
	nan := math.NaN()
	snap := &Snapshot{Resources: []Resource{
		res("GPU-S", "", s.PartitionTimeSlicing, "", 0, s.AllocationAllocated, 0.5),
		res("GPU-S", "GPU-S", s.PartitionTimeSlicing, "a", 0.5, s.AllocationAllocated, nan),
		res("GPU-S", "GPU-S", s.PartitionTimeSlicing, "b", 0.5, s.AllocationAllocated, nan),
		res("GPU-M/gi1", "GPU-M", s.PartitionMIG, "c", 0.5, s.AllocationAllocated, 0.01),
		res("GPU-M/gi2", "GPU-M", s.PartitionMIG, "", 0.5, s.AllocationUnallocated, 0),
		res("GPU-W", "", s.PartitionNone, "", nan, "", nan),
	}}
	snap.Resources[1].PartitionID, snap.Resources[2].PartitionID = "GPU-S::0", "GPU-S::1"
	v := NewView(snap, nil, 0.05)
	f := v.Fleet(Filter{})
	require.Equal(t, 3, f.Devices.Total)
	require.Equal(t, 2, f.Devices.Partitions)
	require.Equal(t, Allocation{InUse: 1, Idle: 0.5, Unallocated: 1.5}, f.Allocation)
	require.InDelta(t, 3.0, f.Cost.PerHour, 1e-9) // each device paid once
	require.Equal(t, 1, f.Health["unknown"], "a device seen only through its MIG instances")

	teams := v.Teams(Filter{})
	require.Len(t, teams.Teams, 1)
	require.InDelta(t, 1.5, teams.Teams[0].DevicesHeld, 1e-9)
}

func TestReadingFolds(t *testing.T) {
	r := Reading{Chart: "utilization"}
	r.Add(0.7, true)
	r.Add(0.6, true)
	v, ok := r.Value()
	require.True(t, ok)
	require.Equal(t, 1.0, v, "per-process utilization adds up, at most 1")
	r.Add(0.4, false)
	v, _ = r.Value()
	require.Equal(t, 0.4, v, "the resource's own point wins")
	m := Reading{Chart: "memory_used"}
	m.Add(2, false)
	m.Add(3, false)
	v, _ = m.Value()
	require.Equal(t, 5.0, v)
	temp := Reading{Chart: "temperature"}
	temp.Add(60, false)
	temp.Add(70, false)
	v, _ = temp.Value()
	require.Equal(t, 70.0, v)
}
