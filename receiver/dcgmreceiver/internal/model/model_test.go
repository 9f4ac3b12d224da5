package model

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDeviceFilter(t *testing.T) {
	all, err := ParseDeviceFilter(nil)
	require.NoError(t, err)
	assert.True(t, all.Match(5, "GPU-x"))

	f, err := ParseDeviceFilter([]string{" 2 ", "GPU-a", "MIG-b"})
	require.NoError(t, err)
	assert.True(t, f.Match(2))
	assert.True(t, f.Match(-1, "GPU-a"))
	assert.True(t, f.Match(7, "MIG-c", "GPU-a"), "selected through its GPU")
	assert.True(t, f.Match(-1, "MIG-b"))
	assert.False(t, f.Match(3, "GPU-z"))

	for _, bad := range [][]string{{""}, {"-1"}, {"gpu0"}} {
		_, err := ParseDeviceFilter(bad)
		assert.Error(t, err, bad)
	}
}

func TestThrottleReasons(t *testing.T) {
	var s Sample
	s.SetThrottleReasons(0x20 | 0x80 | 0x400)
	assert.Equal(t, Of(1), s.ThrottleActive[ThrottleThermal], "software thermal slowdown")
	assert.Equal(t, Of(1), s.ThrottleActive[ThrottlePower], "hardware power brake")
	assert.Equal(t, Of(1), s.ThrottleActive[ThrottleReliability])
	assert.Equal(t, Of(0), s.ThrottleActive[ThrottleSWPowerCap])
	for i, v := range s.ThrottleActive {
		assert.True(t, v.OK, ThrottleReasonNames[i])
	}
}

func TestDropNonFinite(t *testing.T) {
	var s Sample
	s.Power = Of(math.Inf(1))
	s.MemUtil = Of(math.NaN())
	s.LinkRate[LinkNVLink][DirReceive] = Of(math.Inf(-1))
	s.TempGPU = Of(40)
	assert.Equal(t, 3, s.DropNonFinite())
	assert.False(t, s.Power.OK)
	assert.Equal(t, Of(40), s.TempGPU)
}
