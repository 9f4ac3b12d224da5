package fleet

import s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"

// Charts are the device page's series, in the order the page draws them.
var Charts = []ChartMetric{
	{"utilization", s.MetricGPUUtilization, s.UnitRatio},
	{"memory_used", s.MetricGPUMemoryUsage, s.UnitBytes},
	{"memory_utilization", s.MetricGPUMemoryUtilization, s.UnitRatio},
	{"power", s.MetricPower, s.UnitWatts},
	{"temperature", s.MetricTemperature, s.UnitCelsius},
	{"sm_active", s.MetricSMActive, s.UnitRatio},
	{"sm_occupancy", s.MetricSMOccupancy, s.UnitRatio},
	{"tensor_active", s.MetricTensorActive, s.UnitRatio},
	{"dram_active", s.MetricDRAMActive, s.UnitRatio},
	{"gr_engine_active", s.MetricGREngineActive, s.UnitRatio},
}

// HoursPerMonth turns a rate per hour into one per month (365×24/12).
const HoursPerMonth = 730
