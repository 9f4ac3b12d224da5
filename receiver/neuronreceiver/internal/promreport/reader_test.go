package promreport

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-accel/otelcol-accel/receiver/neuronreceiver/internal/report"
)

// scrapeTime is the fake clock of the scrapes: one every 5 s.
var scrapeTime = time.Unix(1_748_779_200, 0)

func read(t *testing.T, r *Reader, page string) (*report.Report, []report.Problem) {
	t.Helper()
	p := Parse(page)
	require.Zero(t, p.Errors.Count, "%v", p.Errors.First)
	scrapeTime = scrapeTime.Add(5 * time.Second)
	rep, problems, err := r.Report(p, scrapeTime)
	require.NoError(t, err)
	return rep, problems
}

func fixture(t *testing.T, name string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "prometheus", name))
	require.NoError(t, err)
	return string(raw)
}

// The fixture page read into a report: what neuron-monitor's JSON would
// have said, as far as the page tells.
func TestFixturePage(t *testing.T) {
	rep, problems := read(t, NewReader(), fixture(t, "inf2-1.prom"))
	assert.Empty(t, problems)
	assert.Equal(t, &report.InstanceInfo{ID: "i-0d3e5b7a9c1f24680", Type: "inf2.xlarge", AvailabilityZone: "us-west-2c", Region: "us-west-2", SubnetID: "subnet-0a1b2c3d4e5f67890"}, rep.Instance)
	require.NotNil(t, rep.Hardware)
	assert.Equal(t, 1.0, *rep.Hardware.DeviceCount)
	assert.Equal(t, 2.0, *rep.Hardware.NeuronCorePerDevice)

	require.Len(t, rep.Runtimes, 2, "two runtimes at once")
	byTag := map[string]report.Runtime{}
	for _, rt := range rep.Runtimes {
		assert.Zero(t, rt.PID, "the script exports no pid")
		byTag[rt.Tag] = rt
	}
	llama := byTag["llama-inf2"]
	assert.Equal(t, 0.8901827638996558, *llama.NeuronCoreCounters.Cores[0].Utilization)
	assert.Equal(t, 0.0, *llama.NeuronCoreCounters.Cores[1].Utilization, "every runtime lists every core")
	assert.Nil(t, llama.NeuronCoreCounters.Cores[0].Flops)
	assert.Equal(t, map[string]float64{"constants": 61766864, "model_code": 1308832, "model_shared_scratchpad": 0, "runtime_memory": 43216, "tensors": 2097152}, llama.MemoryUsed.CoreMemory[0])
	assert.Equal(t, 1119887360.0, *llama.MemoryUsed.HostBytes)
	assert.Equal(t, 65216064.0, *llama.MemoryUsed.DeviceBytes)
	assert.Equal(t, 0.04, *llama.VCPUUsage.User)
	assert.Equal(t, 1250.0, llama.ExecutionStats.ExecutionSummary["completed"])
	assert.Equal(t, 2.0, llama.ExecutionStats.ErrorSummary["generic"])
	assert.Len(t, llama.ExecutionStats.LatencyStats.Total, 7, "p0 … p100, in whatever order the page has them")
	assert.Nil(t, llama.ExecutionStats.LatencyStats.Device, "the script exports total latency only")
	assert.Equal(t, 22049600.0, *byTag["31337"].MemoryUsed.DeviceBytes)

	require.NotNil(t, rep.System.HWCounters)
	require.Len(t, rep.System.HWCounters.Devices, 1)
	d := rep.System.HWCounters.Devices[0]
	assert.Equal(t, 0.0, *d.Index)
	assert.Equal(t, 3.0, *d.MemECCCorrected)
	assert.Equal(t, 0.0, *d.SRAMECCUncorrected)
}

const counterPage = `# HELP hardware_ecc_events_total Hardware ecc events total
# TYPE hardware_ecc_events_total counter
hardware_ecc_events_total{event_type="mem_ecc_corrected",neuron_device_index="0"} %s
# HELP hardware_ecc_events_created Hardware ecc events total
# TYPE hardware_ecc_events_created gauge
hardware_ecc_events_created{event_type="mem_ecc_corrected",neuron_device_index="0"} %s
`

func eccPage(value, created string) string {
	return strings.Replace(strings.Replace(counterPage, "%s", value, 1), "%s", created, 1)
}

func corrected(t *testing.T, r *Reader, page string) float64 {
	t.Helper()
	rep, problems := read(t, r, page)
	require.Empty(t, problems)
	return *rep.System.HWCounters.Devices[0].MemECCCorrected
}

// Cumulative counters become the per-period counts neuron-monitor reports.
func TestCountersBecomeCountsPerScrape(t *testing.T) {
	r := NewReader()
	assert.Equal(t, 4.0, corrected(t, r, eccPage("4.0", "1.7e+09")), "first sight: everything since the series was created")
	assert.Equal(t, 0.0, corrected(t, r, eccPage("4.0", "1.7e+09")))
	assert.Equal(t, 3.0, corrected(t, r, eccPage("7.0", "1.7e+09")))
	assert.Equal(t, 2.0, corrected(t, r, eccPage("2.0", "1.7e+09")), "went down: reset, all new")
	// The script clears every series when no runtime is left and counts
	// again from zero: same value, new _created.
	assert.Equal(t, 2.0, corrected(t, r, eccPage("2.0", "1.700000005e+09")), "new _created: reset")
	assert.Equal(t, 1.0, corrected(t, r, eccPage("3.0", "1.700000005e+09")))
}

// The counts of a scrape are those of the time since the previous one.
func TestCountsCoverTheTimeSinceThePreviousScrape(t *testing.T) {
	r := NewReader()
	rep, _ := read(t, r, eccPage("1.0", "1.7e+09"))
	assert.Zero(t, rep.System.HWCounters.Period, "unknown on the first scrape")
	rep, _ = read(t, r, eccPage("1.0", "1.7e+09"))
	assert.Equal(t, 5.0, rep.System.HWCounters.Period)
}

func TestASeriesThatComesBackIsNew(t *testing.T) {
	r := NewReader()
	assert.Equal(t, 5.0, corrected(t, r, eccPage("5.0", "1.7e+09")))
	_, _, err := r.Report(Parse("# TYPE instance_info gauge\ninstance_info{instance_id=\"i-1\"} 1.0\n"), scrapeTime)
	require.NoError(t, err)
	assert.Equal(t, 5.0, corrected(t, r, eccPage("5.0", "1.7e+09")), "missing from one scrape: forgotten")
}

// Label values the script writes for Python's None, names from older
// releases, and a pid label where a variant of the script adds one.
func TestLabelsAndNames(t *testing.T) {
	page := `# TYPE inference_status_total counter
inference_status_total{runtime_tag="7",status_type="completed",pid="4242"} 9.0
# TYPE inference_latency_seconds gauge
inference_latency_seconds{runtime_tag="7",pid="4242",percentile="p50"} 0.5
# TYPE neuroncore_memory_usage_tensors gauge
neuroncore_memory_usage_tensors{memory_location="None",neuroncore="3",runtime_tag="7",pid="4242"} 10.0
# TYPE neuron_hardware_info gauge
neuron_hardware_info{instance_name="None",instance_id="i-9",neuron_device_count="2",neuroncore_per_device_count="None"} 1.0
`
	rep, problems := read(t, NewReader(), page)
	require.Len(t, problems, 1)
	assert.Equal(t, "prometheus/neuron_hardware_info", problems[0].Key)
	assert.Contains(t, problems[0].Error(), "no neuroncore_per_device_count label")
	assert.Equal(t, "i-9", rep.Instance.ID)
	assert.Empty(t, rep.Instance.Name, `"None" is no name`)
	assert.Equal(t, 2.0, *rep.Hardware.DeviceCount)
	assert.Nil(t, rep.Hardware.NeuronCorePerDevice)
	require.Len(t, rep.Runtimes, 1)
	rt := rep.Runtimes[0]
	assert.Equal(t, int64(4242), rt.PID)
	assert.Equal(t, map[string]float64{"completed": 9}, rt.ExecutionStats.ExecutionSummary)
	assert.Equal(t, map[string]float64{"p50": 0.5}, rt.ExecutionStats.LatencyStats.Total)
	assert.Equal(t, map[string]float64{"tensors": 10}, rt.MemoryUsed.CoreMemory[3])
}

// A sample that makes no sense costs that sample, with a problem naming it.
func TestBadSamplesAreNamed(t *testing.T) {
	page := `# TYPE neuroncore_utilization_ratio gauge
neuroncore_utilization_ratio{neuroncore="nc0",runtime_tag="a"} 0.5
neuroncore_utilization_ratio{neuroncore="1"} 0.5
neuroncore_utilization_ratio{neuroncore="2",runtime_tag="a"} 0.5
# TYPE hardware_ecc_events_total counter
hardware_ecc_events_total{event_type="dram_parity",neuron_device_index="0"} 1.0
`
	rep, problems := read(t, NewReader(), page)
	var msgs []string
	for _, p := range problems {
		msgs = append(msgs, p.Error())
	}
	assert.Len(t, msgs, 3, "%v", msgs)
	assert.Contains(t, strings.Join(msgs, "\n"), `neuroncore_utilization_ratio{neuroncore="nc0",runtime_tag="a"}: neuroncore "nc0" is not a non-negative integer; skipped`)
	assert.Contains(t, strings.Join(msgs, "\n"), "no runtime_tag; skipped")
	assert.Contains(t, strings.Join(msgs, "\n"), `unknown event_type "dram_parity"`)
	require.Len(t, rep.Runtimes, 1)
	assert.Equal(t, map[int]report.CoreCounters{2: {Utilization: ptr(0.5)}}, rep.Runtimes[0].NeuronCoreCounters.Cores)
}

func TestNotNeuronMonitor(t *testing.T) {
	_, _, err := NewReader().Report(Parse("# TYPE DCGM_FI_DEV_GPU_UTIL gauge\nDCGM_FI_DEV_GPU_UTIL{gpu=\"0\"} 3\n"), scrapeTime)
	assert.ErrorIs(t, err, ErrNotNeuronMonitor)
}

func ptr(f float64) *float64 { return &f }

// A value printed as Python's None is no value: the sample is left out
// without an error, and the rest of its family is read.
func TestNoneValueIsMissingNotAnError(t *testing.T) {
	p := Parse("# TYPE neuroncore_utilization_ratio gauge\n" +
		"neuroncore_utilization_ratio{neuroncore=\"0\",runtime_tag=\"a\"} None\n" +
		"neuroncore_utilization_ratio{neuroncore=\"1\",runtime_tag=\"a\"} 0.5\n")
	assert.Zero(t, p.Errors.Count, "%v", p.Errors.First)
	assert.Equal(t, 1, p.Absent)
	rep, problems, err := NewReader().Report(p, scrapeTime)
	require.NoError(t, err)
	assert.Empty(t, problems)
	require.Len(t, rep.Runtimes, 1)
	assert.Len(t, rep.Runtimes[0].NeuronCoreCounters.Cores, 1)
}
