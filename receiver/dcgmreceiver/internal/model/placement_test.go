package model

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

func (s *Sample) deviceReadings() []*Value    { return s.appendDeviceReadings(nil) }
func (s *Sample) partitionReadings() []*Value { return s.appendPartitionReadings(nil) }

// valueAddresses finds every Value in a sample by reflection, so that a
// reading added to Sample without a place in the counted-once rule fails
// here rather than slipping onto the wrong resource.
func valueAddresses(s *Sample) map[*Value]string {
	out := map[*Value]string{}
	var walk func(v reflect.Value, path string)
	walk = func(v reflect.Value, path string) {
		switch {
		case v.Type() == reflect.TypeOf(Value{}):
			out[v.Addr().Interface().(*Value)] = path
		case v.Kind() == reflect.Array:
			for i := 0; i < v.Len(); i++ {
				walk(v.Index(i), path)
			}
		case v.Kind() == reflect.Struct:
			for i := 0; i < v.NumField(); i++ {
				if v.Type().Field(i).IsExported() {
					walk(v.Field(i), path+"."+v.Type().Field(i).Name)
				}
			}
		}
	}
	walk(reflect.ValueOf(s).Elem(), "Sample")
	return out
}

func TestEveryReadingHasExactlyOnePlace(t *testing.T) {
	var s Sample
	all := valueAddresses(&s)
	placed := map[*Value]int{}
	for _, v := range s.deviceReadings() {
		placed[v]++
	}
	for _, v := range s.partitionReadings() {
		placed[v]++
	}
	placed[&s.MemTotal]++ // the resource's own size: on both
	for v, path := range all {
		assert.Equal(t, 1, placed[v], "%s must be a device or a partition reading, once", path)
	}
	assert.Len(t, placed, len(all), "the lists name only Sample's readings")
	assert.Len(t, s.Readings(), len(all))
}

func fullSample(id Identity) Sample {
	s := Sample{Identity: id, Lost: true, Partitioned: true,
		Processes:  []Process{{PID: 7, MemBytes: Of(1)}},
		PodGPUUtil: []PodReading{{Pod: "ns/p", V: 0.5}}, PodMemUsed: []PodReading{{Pod: "ns/p", V: 1}},
		XIDWindow: []XIDWindowCount{{Code: 48, Count: 1}}}
	for _, v := range s.Readings() {
		*v = Of(1)
	}
	return s
}

func TestKeepOwn(t *testing.T) {
	inst := fullSample(Identity{HWID: "GPU-a/gi1", Parent: "GPU-a", PartitionType: accelschema.PartitionMIG})
	inst.KeepOwn()
	for _, v := range inst.deviceReadings() {
		require.False(t, v.OK, "a MIG instance carries no device reading")
	}
	for _, v := range inst.partitionReadings() {
		require.True(t, v.OK, "a MIG instance keeps what it measures")
	}
	assert.True(t, inst.MemTotal.OK, "its own memory size")
	assert.False(t, inst.Lost)
	assert.Nil(t, inst.XIDWindow)
	assert.NotEmpty(t, inst.Processes)

	parent := fullSample(Identity{HWID: "GPU-a", PartitionType: accelschema.PartitionNone})
	parent.KeepOwn()
	for _, v := range parent.partitionReadings() {
		require.False(t, v.OK, "a GPU in MIG mode leaves partition readings to its instances")
	}
	for _, v := range parent.deviceReadings() {
		require.True(t, v.OK)
	}
	assert.True(t, parent.MemTotal.OK, "the GPU's memory size")
	assert.Nil(t, parent.Processes)
	assert.Nil(t, parent.PodGPUUtil)
	assert.True(t, parent.Lost)

	whole := fullSample(Identity{HWID: "GPU-b", PartitionType: accelschema.PartitionNone})
	whole.Partitioned = false
	before := whole
	whole.KeepOwn()
	assert.Equal(t, before, whole, "a whole GPU keeps everything")
}

// The stack buffers of KeepOwn and DropNonFinite hold every reading (past
// readingsRoom they would allocate again on every sample).
func TestReadingsFitTheirBuffer(t *testing.T) {
	var s Sample
	assert.LessOrEqual(t, len(s.Readings()), readingsRoom)
}
