package exportersource

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/model"
)

// quirkPages are the receiver's fixtures of what real dcgm-exporters print
// beyond one row per GPU.
var quirkPages = []string{
	"dcgm-exporter-3.x-a100-mig-rows.txt", "dcgm-exporter-3.x-8xa800-timesliced.txt", "dcgm-exporter-4.5-virtual-gpus.txt",
	"dcgm-exporter-4.x-label-order.txt", "dcgm-exporter-4.x-xid-window.txt", "dcgm-exporter-4.x-dra.txt",
}

// reversed writes a page with its families, and the rows of each family,
// in reverse order.
func reversed(page []byte) []byte {
	var blocks [][][]byte
	for _, line := range bytes.Split(bytes.TrimRight(page, "\n"), []byte("\n")) {
		if bytes.HasPrefix(line, []byte("# HELP")) || len(blocks) == 0 {
			blocks = append(blocks, nil)
		}
		blocks[len(blocks)-1] = append(blocks[len(blocks)-1], line)
	}
	var out []byte
	for i := len(blocks) - 1; i >= 0; i-- {
		b := blocks[i]
		head := 0
		for head < len(b) && bytes.HasPrefix(b[head], []byte("#")) {
			head++
		}
		rows := slices.Clone(b[head:])
		slices.Reverse(rows)
		for _, l := range append(slices.Clone(b[:head]), rows...) {
			out = append(append(out, l...), '\n')
		}
	}
	return out
}

// Which row a value is taken from is decided by rank, not by where it is
// on the page: a page read backwards gives the same samples.
func TestPageOrderDoesNotMatter(t *testing.T) {
	for _, name := range append([]string{"dcgm-exporter-2.x.txt", "dcgm-exporter-3.x.txt", "dcgm-exporter-4.x-8xh100.txt"}, quirkPages...) {
		for _, perPod := range []bool{false, true} {
			page, err := os.ReadFile(filepath.Join("..", "..", "testdata", "exporter", name))
			require.NoError(t, err)
			d := &Decoder{ViolationUnit: ViolationUnitAuto, PerPodUsage: perPod}
			forward, backward := d.Decode(bytes.NewReader(page)), d.Decode(bytes.NewReader(reversed(page)))
			require.Equal(t, forward.Skipped, backward.Skipped, "%s: %v", name, backward.LineErrors)
			require.Equal(t, forward.Samples, backward.Samples, "%s per_pod_usage=%v", name, perPod)
		}
	}
}

func TestCopiesAndMIGRowsGiveOneValue(t *testing.T) {
	text := strings.Join([]string{
		// A GPU's own row and a MIG instance's row of a GPU family: the GPU's.
		`DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="GPU-a",GPU_I_ID="2",GPU_I_PROFILE="1g.10gb"} 101`,
		`DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="GPU-a"} 100`,
		// MIG rows only: the lowest GPU-instance id, as a number (10 > 9).
		`DCGM_FI_DEV_GPU_TEMP{gpu="0",UUID="GPU-a",GPU_I_ID="10",GPU_I_PROFILE="1g.10gb"} 50`,
		`DCGM_FI_DEV_GPU_TEMP{gpu="0",UUID="GPU-a",GPU_I_ID="9",GPU_I_PROFILE="1g.10gb"} 49`,
		`DCGM_FI_DEV_GPU_TEMP{gpu="0",UUID="GPU-a",GPU_I_ID="2",GPU_I_PROFILE="1g.10gb"} 48`,
		// Per-pod copies: the row without a holder, else the first holder
		// by namespace, pod, container.
		`DCGM_FI_DEV_POWER_USAGE{gpu="1",UUID="GPU-b",namespace="b",pod="p",container="c"} 31`,
		`DCGM_FI_DEV_POWER_USAGE{gpu="1",UUID="GPU-b",namespace="a",pod="z",container="c"} 30`,
		`DCGM_FI_DEV_GPU_TEMP{gpu="1",UUID="GPU-b",namespace="a",pod="z",container="c"} 41`,
		`DCGM_FI_DEV_GPU_TEMP{gpu="1",UUID="GPU-b",namespace="",pod="",container=""} 40`,
	}, "\n")
	res := (&Decoder{}).Decode(strings.NewReader(text))
	require.Zero(t, res.Skipped, "%v", res.LineErrors)
	a := byID(t, res, "GPU-a")
	assert.Equal(t, model.Of(100), a.Power)
	assert.Equal(t, model.Of(48), a.TempGPU)
	b := byID(t, res, "GPU-b")
	assert.Equal(t, model.Of(30), b.Power)
	assert.Equal(t, model.Of(40), b.TempGPU)
	assert.Empty(t, b.Pod, "two pods hold GPU-b")
	require.Len(t, res.Samples, 5, "two GPUs, three instances")
}

func TestPerPodUsage(t *testing.T) {
	text := strings.Join([]string{
		`DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-a",namespace="ns",pod="q",container="c",vgpu="1"} 20`,
		`DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-a",namespace="ns",pod="q",container="c",vgpu="0"} 21`,
		`DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-a",namespace="ns",pod="p",container="c",vgpu="2"} 10`,
		`DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-a"} 33`,
		`DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-a",namespace="ns",pod="p",container="c",vgpu="2"} 100`,
		`DCGM_FI_DEV_FB_FREE{gpu="0",UUID="GPU-a",namespace="ns",pod="p",container="c",vgpu="2"} 900`,
		`DCGM_FI_DEV_ENC_UTIL{gpu="0",UUID="GPU-a",namespace="ns",pod="p",container="c",vgpu="2"} 5`,
	}, "\n")
	res := (&Decoder{PerPodUsage: true}).Decode(strings.NewReader(text))
	require.Len(t, res.Samples, 1)
	s := res.Samples[0]
	assert.Equal(t, []model.PodReading{{Pod: "ns/p", V: 0.10}, {Pod: "ns/q", V: 0.21}}, s.PodGPUUtil,
		"one point per pod, from its row with the lowest vgpu")
	assert.False(t, s.GPUUtil.OK, "no total beside the pods' points")
	assert.Equal(t, []model.PodReading{{Pod: "ns/p", V: 100 * mibF}}, s.PodMemUsed)
	assert.False(t, s.MemUsed.OK)
	assert.False(t, s.MemTotal.OK, "used + free needs the GPU's use, which the page does not have")
	assert.Equal(t, model.Of(0.05), s.EncoderUtil, "only GPU_UTIL and FB_USED are measured per pod")

	res = (&Decoder{}).Decode(strings.NewReader(text))
	s = res.Samples[0]
	assert.Equal(t, model.Of(0.33), s.GPUUtil, "without per_pod_usage: the row without a holder")
	assert.Nil(t, s.PodGPUUtil)
}

// dcgm-exporter's DRA mode names the MIG device a claim holds; a row with
// GPU_I_ID and the MIG UUID ties both to one instance.
func TestDRAMIGInstance(t *testing.T) {
	text := strings.Join([]string{
		`DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-a",GPU_I_ID="3",GPU_I_PROFILE="2g.20gb",dra_claim_name="c",dra_mig_device_uuid="MIG-x",dra_mig_profile="2g.20gb",pod="p",namespace="n"} 10`,
		`DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu="0",UUID="GPU-a",dra_claim_name="c",dra_mig_device_uuid="MIG-x",dra_mig_profile="2g.20gb",pod="p",namespace="n"} 0.5`,
		`DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu="0",UUID="GPU-a",dra_claim_name="d",dra_mig_device_uuid="MIG-y",dra_mig_profile="1g.10gb",pod="q",namespace="n"} 0.25`,
		`DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="GPU-a",dra_claim_name="d",dra_mig_device_uuid="MIG-y",dra_mig_profile="1g.10gb",pod="q",namespace="n"} 70`,
		// Not a MIG UUID: the row is the GPU's.
		`DCGM_FI_DEV_GPU_TEMP{gpu="0",UUID="GPU-a",dra_mig_device_uuid="GPU-a"} 45`,
	}, "\n")
	res := (&Decoder{}).Decode(strings.NewReader(text))
	require.Zero(t, res.Skipped, "%v", res.LineErrors)
	var ids []string
	for _, s := range res.Samples {
		ids = append(ids, s.HWID)
	}
	assert.Equal(t, []string{"GPU-a", "MIG-y", "GPU-a/gi3"}, ids)
	x := byID(t, res, "GPU-a/gi3")
	assert.Equal(t, model.Of(10*mibF), x.MemUsed)
	assert.Equal(t, model.Of(0.5), x.GREngineActive, "the row without GPU_I_ID, tied by its MIG UUID")
	assert.Equal(t, "c", x.DRA.ClaimName)
	y := byID(t, res, "MIG-y")
	assert.Equal(t, accelschema.PartitionMIG, y.PartitionType)
	assert.Equal(t, "GPU-a", y.Parent)
	assert.Equal(t, -1, y.GPUInstanceID)
	assert.Equal(t, "1g.10gb", y.Profile)
	assert.False(t, y.Power.OK)
	gpu := byID(t, res, "GPU-a")
	assert.Equal(t, model.Of(70), gpu.Power, "a GPU family on an instance's row is the GPU's")
	assert.Equal(t, model.Of(45), gpu.TempGPU)
	assert.Empty(t, gpu.DRA.ClaimName, "the claims hold instances, not the GPU")
}

func TestXIDWindow(t *testing.T) {
	text := strings.Join([]string{
		`DCGM_EXP_XID_ERRORS_COUNT{gpu="0",UUID="GPU-a",err_msg="Graphics Engine Exception",window_size_in_ms="300000",xid="13"} 2`,
		`DCGM_EXP_XID_ERRORS_COUNT{gpu="0",UUID="GPU-a",err_msg="Graphics Engine Exception",pod="p",namespace="n",window_size_in_ms="300000",xid="13"} 2`,
		`DCGM_EXP_XID_ERRORS_COUNT{gpu="0",UUID="GPU-a",GPU_I_ID="1",GPU_I_PROFILE="1g.10gb",err_msg="Double Bit ECC Error",window_size_in_ms="300000",xid="48"} 1`,
		`DCGM_EXP_XID_ERRORS_COUNT{gpu="0",UUID="GPU-a",err_msg="?",xid="thirteen"} 1`,
		`DCGM_EXP_XID_ERRORS_COUNT{gpu="0",UUID="GPU-a",err_msg="?"} 1`,
	}, "\n")
	res := (&Decoder{}).Decode(strings.NewReader(text))
	require.Equal(t, 2, res.Skipped)
	assert.Contains(t, res.LineErrors[0].Error(), `line 4: xid label "thirteen" is not an XID code: "DCGM_EXP_XID_ERRORS_COUNT{`)
	assert.Contains(t, res.LineErrors[1].Error(), `line 5: xid label "" is not an XID code: "DCGM_EXP_XID_ERRORS_COUNT{`)
	gpu := byID(t, res, "GPU-a")
	assert.Equal(t, []model.XIDWindowCount{{Code: 13, Count: 2}, {Code: 48, Count: 1}}, gpu.XIDWindow,
		"per code, once per GPU (a MIG instance's XIDs are the GPU's)")
	assert.Nil(t, byID(t, res, "GPU-a/gi1").XIDWindow)
}
