package model

// Clock event (throttle) reason bits, shared by NVML's
// nvmlDeviceGetCurrentClocksEventReasons and DCGM's CLOCKS_EVENT_REASONS
// (formerly CLOCK_THROTTLE_REASONS).
const (
	reasonGPUIdle      = 0x1
	reasonAppClocks    = 0x2
	reasonSWPowerCap   = 0x4
	reasonHWSlowdown   = 0x8
	reasonSyncBoost    = 0x10
	reasonSWThermal    = 0x20
	reasonHWThermal    = 0x40
	reasonHWPowerBrake = 0x80
	reasonBoardLimit   = 0x200
	reasonReliability  = 0x400
)

// SetThrottleReasons sets ThrottleActive from a clock event reason bitmask:
// thermal covers the software and hardware thermal slowdowns, power the
// hardware power brake. Every reason gets a value, so a reason that clears
// reads 0 rather than disappearing.
func (s *Sample) SetThrottleReasons(mask uint64) {
	set := func(reason int, bits uint64) { s.ThrottleActive[reason] = Bool(mask&bits != 0) }
	set(ThrottleLowUtil, reasonGPUIdle)
	set(ThrottleAppClocks, reasonAppClocks)
	set(ThrottleSWPowerCap, reasonSWPowerCap)
	set(ThrottleHWSlowdown, reasonHWSlowdown)
	set(ThrottleSyncBoost, reasonSyncBoost)
	set(ThrottleThermal, reasonSWThermal|reasonHWThermal)
	set(ThrottlePower, reasonHWPowerBrake)
	set(ThrottleBoardLimit, reasonBoardLimit)
	set(ThrottleReliability, reasonReliability)
}
