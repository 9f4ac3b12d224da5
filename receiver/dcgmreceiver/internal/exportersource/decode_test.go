package exportersource

import (
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/model"
)

func decodeFile(t testing.TB, name string, d Decoder) Result {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "testdata", "exporter", name))
	require.NoError(t, err)
	defer f.Close()
	return d.Decode(f)
}

func byID(t *testing.T, res Result, hwID string) model.Sample {
	t.Helper()
	for _, s := range res.Samples {
		if s.HWID == hwID {
			return s
		}
	}
	t.Fatalf("no sample for %s", hwID)
	return model.Sample{}
}

const mibF = 1 << 20 // bytes in a MiB

func TestDecode2xOldNamespace(t *testing.T) {
	res := decodeFile(t, "dcgm-exporter-2.x.txt", Decoder{ViolationUnit: ViolationUnitAuto})
	require.Len(t, res.Samples, 2)
	require.NoError(t, res.ReadErr)

	// The T4's memory temperature is "ERROR - FAILED TO CONVERT TO STRING":
	// that line alone is skipped, with its line number.
	require.Equal(t, 1, res.Skipped)
	require.Len(t, res.LineErrors, 1)
	assert.Equal(t, 12, res.LineErrors[0].Line)
	assert.ErrorIs(t, res.LineErrors[0].Err, errConvert)
	assert.Equal(t, 183, res.LineErrors[0].Column, "where the value should be")
	assert.Contains(t, res.LineErrors[0].Error(), `line 12, column 183: dcgm-exporter could not read the field ("ERROR - FAILED TO CONVERT TO STRING"): "DCGM_FI_DEV_MEMORY_TEMP{`)

	g0 := byID(t, res, "GPU-8c16e996-bd76-aa91-17e7-b48bcd0208ba")
	assert.Equal(t, 0, g0.Index)
	assert.Equal(t, accelschema.PartitionNone, g0.PartitionType)
	assert.Equal(t, 1.0, g0.Share)
	assert.Equal(t, "dcgm-exporter-7xq2p", g0.HostName)
	assert.Equal(t, "resnet-train-0", g0.Pod, "pod_name (old namespace) is a pod hint")
	assert.Equal(t, "ml", g0.Namespace)
	assert.Equal(t, "trainer", g0.Container)
	assert.Equal(t, model.Of(1530e6), g0.ClockSM, "MHz→Hz")
	assert.Equal(t, model.Of(0.97), g0.GPUUtil, "%→ratio")
	assert.Equal(t, model.Of(12950*mibF), g0.MemUsed, "MiB→By")
	assert.Equal(t, model.Of((12950+3210)*mibF), g0.MemTotal, "used+free")
	assert.InDelta(t, 12950.0/(12950+3210), g0.MemUtil.V, 1e-12)
	assert.InDelta(t, 98035686.671, g0.Energy.V, 1e-6, "mJ→J")
	assert.InDelta(t, 1.52, g0.ThrottleTime[model.ThrottlePower].V, 1e-12, "HELP says (in us): µs→s")
	assert.Equal(t, model.Of(38), g0.TempMemory)
	assert.Equal(t, model.Of(8599590*1024), g0.LinkRate[model.LinkPCIe][model.DirTransmit], "KB/s→By/s")
	assert.Equal(t, model.Of(2), g0.Errors[model.ErrECCCorrected])
	assert.Equal(t, model.Of(1), g0.RetiredPages[model.RetiredSingleBit])
	assert.Equal(t, model.Of(0), g0.RetirementPending)
	assert.Equal(t, model.Of(0), g0.LastXID)

	g1 := byID(t, res, "GPU-2f4b3e5d-9c1a-4e07-b0c4-71d5e3a8f6c2")
	assert.False(t, g1.TempMemory.OK, "the unreadable value is absent, not zero")
	assert.Equal(t, model.Of(31), g1.TempGPU)
	assert.Empty(t, g1.Pod, "empty pod labels are no hint")
	assert.InDelta(t, 250.0, g1.ThrottleTime[model.ThrottleLowUtil].V, 1e-9)
}

func TestDecode3xMIG(t *testing.T) {
	res := decodeFile(t, "dcgm-exporter-3.x.txt", Decoder{ViolationUnit: ViolationUnitAuto})
	require.Zero(t, res.Skipped, "%v", res.LineErrors)
	require.Len(t, res.Samples, 4)
	parent := "GPU-5f2e1c9a-3b7d-4e8f-a1c2-9d0e6b4f7a31"
	// GPU 0, then its MIG instances by GPU-instance id, then GPU 1.
	var order []string
	for _, s := range res.Samples {
		order = append(order, s.HWID)
	}
	assert.Equal(t, []string{parent, parent + "/gi1", parent + "/gi7", "GPU-a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d"}, order)

	p := byID(t, res, parent)
	assert.True(t, p.Partitioned, "its MIG instances are on the page")
	assert.False(t, p.MemUsed.OK, "memory use is the instances'")
	assert.False(t, p.GPUUtil.OK)
	assert.Equal(t, model.Of(182.431), p.Power, "the GPU's own row")
	assert.Equal(t, "NVIDIA A100-SXM4-40GB", p.Model)
	assert.Equal(t, "535.129.03", p.DriverVersion, "DCGM_FI_DRIVER_VERSION label")
	assert.Equal(t, "00000000:07:00.0", p.PCIBusID)
	assert.Equal(t, "gpu-node-a1", p.HostName)
	assert.Equal(t, model.Of((31402+8547+561)*mibF), p.MemTotal, "used+free+reserved")

	gi1 := byID(t, res, parent+"/gi1")
	assert.Equal(t, accelschema.PartitionMIG, gi1.PartitionType)
	assert.Equal(t, parent, gi1.Parent)
	assert.Equal(t, "1", gi1.PartitionID)
	assert.Equal(t, 1, gi1.GPUInstanceID)
	assert.Equal(t, -1, gi1.ComputeInstanceID)
	assert.Equal(t, "3g.20gb", gi1.Profile)
	assert.InDelta(t, 0.5, gi1.Share, 1e-12, "3g.20gb holds half the memory of a 40 GB A100")
	assert.Equal(t, "llm-serve-0", gi1.Pod)
	assert.Equal(t, model.Of(0.87441), gi1.GREngineActive)
	assert.Equal(t, model.Of(12992*mibF), gi1.MemUsed)
	assert.Equal(t, model.Of((12992+6820)*mibF), gi1.MemTotal)

	assert.False(t, gi1.Power.OK, "an instance carries no device reading")
	assert.Equal(t, "inference", gi1.Namespace)

	gi7 := byID(t, res, parent+"/gi7")
	assert.Equal(t, "1g.5gb", gi7.Profile)
	assert.InDelta(t, 1.0/7, gi7.Share, 1e-12, "1g.5gb: one of seven compute slices")

	g1 := byID(t, res, "GPU-a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d")
	assert.Equal(t, model.Of(3), g1.Errors[model.ErrPCIeReplay])
	assert.Equal(t, model.Of(2), g1.RemappedCorrectable)
	assert.Equal(t, model.Of(0), g1.RemapFailed)
	assert.Equal(t, model.Of(2741263), g1.LinkRate[model.LinkPCIe][model.DirTransmit], "PROF_PCIE_TX_BYTES is a rate")
}

func TestDecode4x(t *testing.T) {
	res := decodeFile(t, "dcgm-exporter-4.x-8xh100.txt", Decoder{ViolationUnit: ViolationUnitAuto})
	require.Zero(t, res.Skipped, "%v", res.LineErrors)
	require.Len(t, res.Samples, 8)
	for i, s := range res.Samples {
		assert.Equal(t, i, s.Index)
		assert.Equal(t, "p5-node-17", s.HostName, "lowercase hostname label")
		assert.Equal(t, "570.124.06", s.DriverVersion)
	}
	s := res.Samples[2]
	assert.InDelta(t, 12.002, s.ThrottleTime[model.ThrottlePower].V, 1e-9, "ns→s")
	assert.Equal(t, model.Of(1), s.ThrottleActive[model.ThrottleSWPowerCap], "clock event reasons bit 0x4")
	assert.Equal(t, model.Of(0), s.ThrottleActive[model.ThrottleThermal])
	assert.Equal(t, model.Of(0.42), s.SMOccupancy)
	assert.Equal(t, model.Of(171798691840+2), s.LinkRate[model.LinkNVLink][model.DirTransmit])
	assert.Equal(t, model.Of(0), s.RemapPending)
}

func TestViolationUnitOverride(t *testing.T) {
	text := "# HELP DCGM_FI_DEV_POWER_VIOLATION Throttling duration due to power constraints (in us).\n" +
		`DCGM_FI_DEV_POWER_VIOLATION{gpu="0",UUID="GPU-a"} 3000000` + "\n"
	for unit, want := range map[string]float64{ViolationUnitAuto: 3, ViolationUnitUS: 3, ViolationUnitNS: 0.003} {
		res := (&Decoder{ViolationUnit: unit}).Decode(strings.NewReader(text))
		require.Len(t, res.Samples, 1, unit)
		assert.InDelta(t, want, res.Samples[0].ThrottleTime[model.ThrottlePower].V, 1e-12, unit)
	}
	// Without HELP text, auto means ns (DCGM 3 and later).
	res := (&Decoder{ViolationUnit: ViolationUnitAuto}).Decode(strings.NewReader(`DCGM_FI_DEV_THERMAL_VIOLATION{UUID="GPU-a"} 5000000000` + "\n"))
	assert.InDelta(t, 5.0, res.Samples[0].ThrottleTime[model.ThrottleThermal].V, 1e-12)
}

func TestDeviceFilter(t *testing.T) {
	f, err := model.ParseDeviceFilter([]string{"1", "GPU-5f2e1c9a-3b7d-4e8f-a1c2-9d0e6b4f7a31/gi7"})
	require.NoError(t, err)
	res := decodeFile(t, "dcgm-exporter-3.x.txt", Decoder{Filter: f})
	var got []string
	for _, s := range res.Samples {
		got = append(got, s.HWID)
	}
	assert.Equal(t, []string{"GPU-5f2e1c9a-3b7d-4e8f-a1c2-9d0e6b4f7a31/gi7", "GPU-a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d"}, got,
		"an exporter MIG instance is selected by its hw.id, a GPU by its index")

	f, err = model.ParseDeviceFilter([]string{"GPU-5f2e1c9a-3b7d-4e8f-a1c2-9d0e6b4f7a31"})
	require.NoError(t, err)
	res = decodeFile(t, "dcgm-exporter-3.x.txt", Decoder{Filter: f})
	assert.Len(t, res.Samples, 3, "a GPU selects its MIG instances too")
}

// Every kind of broken line is skipped with a reason, and the good lines
// around it are kept.
func TestMalformedLines(t *testing.T) {
	good := `DCGM_FI_DEV_GPU_TEMP{gpu="0",UUID="GPU-a"} 40`
	cases := map[string]string{
		"convert error":       `DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-a"} ERROR - FAILED TO CONVERT TO STRING`,
		"not a number":        `DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-a"} 12abc`,
		"NaN":                 `DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-a"} NaN`,
		"+Inf":                `DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-a"} +Inf`,
		"no value":            `DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-a"}`,
		"unclosed labels":     `DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-a" 12`,
		"unclosed quote":      `DCGM_FI_DEV_GPU_UTIL{gpu="0,UUID="GPU-a"} 12`,
		"unquoted value":      `DCGM_FI_DEV_GPU_UTIL{gpu=0,UUID="GPU-a"} 12`,
		"no equals":           `DCGM_FI_DEV_GPU_UTIL{gpu,UUID="GPU-a"} 12`,
		"bad escape":          `DCGM_FI_DEV_GPU_UTIL{gpu="0\q",UUID="GPU-a"} 12`,
		"garbage after value": `DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-a"} 12 13 14`,
		"no uuid":             `DCGM_FI_DEV_GPU_UTIL{gpu="0"} 12`,
		"bad gpu index":       `DCGM_FI_DEV_GPU_UTIL{gpu="zero",UUID="GPU-a"} 12`,
		"bad gi":              `DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-a",GPU_I_ID="x"} 12`,
		"truncated":           `DCGM_FI_DEV_GPU_UTIL{gpu="0",UU`,
	}
	for name, bad := range cases {
		t.Run(name, func(t *testing.T) {
			res := (&Decoder{}).Decode(strings.NewReader(good + "\n" + bad + "\n" + good + "\n"))
			require.Equal(t, 1, res.Skipped, "%v", res.LineErrors)
			require.Len(t, res.LineErrors, 1)
			assert.Equal(t, 2, res.LineErrors[0].Line)
			assert.Contains(t, res.LineErrors[0].Error(), "DCGM_FI_DEV_GPU_UTIL")
			require.Len(t, res.Samples, 1)
			assert.Equal(t, model.Of(40), res.Samples[0].TempGPU)
			assert.False(t, res.Samples[0].GPUUtil.OK)
		})
	}
}

func TestLabelForms(t *testing.T) {
	text := strings.Join([]string{
		// 2.x: spaces after commas, trailing comma, timestamp.
		`DCGM_FI_DEV_GPU_TEMP{gpu="3", UUID="GPU-x", device="nvidia3", pod="a\"b\\c\nd",} 41 1700000000000`,
		// Escapes in label values.
		`DCGM_FI_DEV_POWER_USAGE{gpu="3",UUID="GPU-x",pod="a\"b\\c\nd"} 100.5`,
		// Lines that are not DCGM fields, and unknown fields, are ignored.
		`go_goroutines 12`,
		`DCGM_FI_DEV_BRAND{gpu="3",UUID="GPU-x"} 1`,
		"",
		"   ",
	}, "\n")
	res := (&Decoder{}).Decode(strings.NewReader(text))
	require.Zero(t, res.Skipped, "%v", res.LineErrors)
	require.Len(t, res.Samples, 1)
	s := res.Samples[0]
	assert.Equal(t, 3, s.Index)
	assert.Equal(t, model.Of(41), s.TempGPU)
	assert.Equal(t, model.Of(100.5), s.Power)
	assert.Equal(t, "a\"b\\c\nd", s.Pod)
	assert.Equal(t, 4, res.Lines)
	assert.Equal(t, 3, res.DCGMLines)
}

type failingReader struct {
	data string
	err  error
}

func (r *failingReader) Read(p []byte) (int, error) {
	if r.data == "" {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

func TestTruncatedBodyKeepsWhatWasRead(t *testing.T) {
	body := `DCGM_FI_DEV_GPU_TEMP{gpu="0",UUID="GPU-a"} 40` + "\n" + `DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="GPU-a"} 3`
	res := (&Decoder{}).Decode(&failingReader{data: body, err: io.ErrUnexpectedEOF})
	require.ErrorIs(t, res.ReadErr, io.ErrUnexpectedEOF)
	require.Len(t, res.Samples, 1)
	assert.Equal(t, model.Of(40), res.Samples[0].TempGPU)
	assert.False(t, res.Samples[0].Power.OK, "the cut line is not half-read")
}

func TestOverlongLine(t *testing.T) {
	long := `DCGM_FI_DEV_GPU_TEMP{gpu="0",UUID="GPU-a",x="` + strings.Repeat("y", maxLineBytes) + `"} 1`
	res := (&Decoder{}).Decode(strings.NewReader(long + "\n" + `DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="GPU-a"} 3` + "\n"))
	require.Equal(t, 1, res.Skipped)
	assert.Contains(t, res.LineErrors[0].Error(), "line is too long (more than 65536 bytes)")
	require.Len(t, res.Samples, 1)
	assert.Equal(t, model.Of(3), res.Samples[0].Power)
	assert.Equal(t, 2, res.LineErrors[0].Line+1)
}

// A 3g.40gb (half the memory) and a 4g.40gb (4/7 of the compute) fill an
// 80 GB H100: their own shares add up to 1.071, so they are fitted to the GPU.
func TestMIGSharesFitTheirGPU(t *testing.T) {
	text := `DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-h",modelName="NVIDIA H100 80GB HBM3"} 1000
DCGM_FI_DEV_FB_FREE{gpu="0",UUID="GPU-h",modelName="NVIDIA H100 80GB HBM3"} 80000
DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu="0",UUID="GPU-h",modelName="NVIDIA H100 80GB HBM3",GPU_I_PROFILE="3g.40gb",GPU_I_ID="1"} 0.5
DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu="0",UUID="GPU-h",modelName="NVIDIA H100 80GB HBM3",GPU_I_PROFILE="4g.40gb",GPU_I_ID="2"} 0.5
DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu="0",UUID="GPU-h",modelName="NVIDIA H100 80GB HBM3",GPU_I_PROFILE="4g.40gb",GPU_I_ID="2",pod="p2",namespace="ns",container="c"} 0.5
`
	res := (&Decoder{}).Decode(strings.NewReader(text))
	total := 1.0/2 + 4.0/7
	gi1, gi2 := byID(t, res, "GPU-h/gi1"), byID(t, res, "GPU-h/gi2")
	assert.InDelta(t, 0.5/total, gi1.Share, 1e-12)
	assert.InDelta(t, (4.0/7)/total, gi2.Share, 1e-12)
	assert.InDelta(t, 1, gi1.Share+gi2.Share, 1e-12, "the layout is exactly the GPU, and the per-pod repeat of gi2 counts once")
}

func TestMemoryUtilizationFallback(t *testing.T) {
	for text, want := range map[string]float64{
		`DCGM_FI_DEV_FB_USED_PERCENT{UUID="GPU-a"} 0.25`: 0.25,
		`DCGM_FI_DEV_FB_USED_PERCENT{UUID="GPU-a"} 25`:   0.25,
	} {
		res := (&Decoder{}).Decode(strings.NewReader(text))
		require.Len(t, res.Samples, 1)
		assert.InDelta(t, want, res.Samples[0].MemUtil.V, 1e-12, text)
	}
}

func TestMetricsURL(t *testing.T) {
	assert.Equal(t, "http://h:9400/metrics", MetricsURL("http://h:9400"))
	assert.Equal(t, "https://h:9400/custom", MetricsURL("https://h:9400/custom"))
	assert.Equal(t, "http://h:9400/", MetricsURL("http://h:9400/"))
}

// FuzzDecode feeds arbitrary text through the exporter mapping: it must not
// panic, every sample must have an identity, every value must be finite,
// and a line is either used, ignored, or counted as skipped.
func FuzzDecode(f *testing.F) {
	for _, name := range append([]string{"dcgm-exporter-2.x.txt", "dcgm-exporter-3.x.txt"}, quirkPages...) {
		b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "exporter", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add(`DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-a",GPU_I_ID="3",GPU_I_PROFILE="1g.10gb"} 5`)
	f.Add(`DCGM_FI_DEV_GPU_UTIL{gpu="0", uuid="GPU-a", pod="p\"q"} ERROR - FAILED TO CONVERT TO STRING`)
	f.Add("DCGM_FI_DEV_FB_USED{UUID=\"GPU-a\"} 1e308\nDCGM_FI_DEV_FB_FREE{UUID=\"GPU-a\"} 1e308")
	f.Fuzz(func(t *testing.T, text string) {
		res := (&Decoder{PerPodUsage: len(text)%2 == 0}).Decode(strings.NewReader(text))
		if res.ReadErr != nil && !errors.Is(res.ReadErr, io.EOF) {
			t.Fatalf("reading a string failed: %v", res.ReadErr)
		}
		if res.Skipped > res.DCGMLines {
			t.Fatalf("skipped %d of %d DCGM lines", res.Skipped, res.DCGMLines)
		}
		for _, s := range res.Samples {
			if s.HWID == "" {
				t.Fatalf("sample without identity: %+v", s.Identity)
			}
			if s.IsMIG() && (s.Parent == "" || (s.GPUInstanceID < 0 && !strings.HasPrefix(s.HWID, "MIG-"))) {
				t.Fatalf("MIG sample without parent or instance: %+v", s.Identity)
			}
			if s.IsMIG() && (s.Power.OK || s.Lost || s.LastXID.OK) {
				t.Fatalf("device reading on a MIG instance: %+v", s)
			}
			for _, v := range s.Readings() {
				if v.OK && (math.IsNaN(v.V) || math.IsInf(v.V, 0)) {
					t.Fatalf("non-finite value in %+v", s)
				}
			}
		}
	})
}
