package dcgmreceiver

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/accelschema/countcheck"
)

// quirkFixtures are pages with what real dcgm-exporters print beyond one
// row per GPU: MIG rows only, per-pod copies, per-pod measurements, label
// order, XID windows, DRA claims. Every golden test checks its output with
// countcheck (compareMetricsGolden); the values asserted here were worked
// out by hand from the pages.
var quirkFixtures = []string{
	"dcgm-exporter-3.x-a100-mig-rows.txt",
	"dcgm-exporter-3.x-8xa800-timesliced.txt",
	"dcgm-exporter-4.5-virtual-gpus.txt",
	"dcgm-exporter-4.x-label-order.txt",
	"dcgm-exporter-4.x-xid-window.txt",
	"dcgm-exporter-4.x-dra.txt",
}

const mibF = 1 << 20

func scrapeFixture(t *testing.T, name string, tune func(*Config)) pmetric.Metrics {
	t.Helper()
	body := fixture(t, name)
	srv := serveText(t, func() []byte { return body })
	cfg := exporterConfig(srv.URL)
	if tune != nil {
		tune(cfg)
	}
	return start(t, cfg, testWorld(t, nil)).scrape(t)
}

// A GPU in MIG mode is printed only through its instances' rows, each
// repeating the GPU's power, energy, temperatures… read at slightly
// different moments. The GPU gets one resource with those, from the row of
// its lowest GPU-instance id (3 here, the second row of each family); the
// instances keep only what they measure.
func TestExporterMIGRowsOnly(t *testing.T) {
	md := scrapeFixture(t, "dcgm-exporter-3.x-a100-mig-rows.txt", nil)
	compareMetricsGolden(t, "dcgm-exporter-3.x-a100-mig-rows.yaml", md)
	require.Equal(t, 6, md.ResourceMetrics().Len(), "two GPUs, four MIG instances")

	gpu := "GPU-8e1f4c2a-5b3d-4f6e-9a7c-2d1b0e3f5a68"
	assert.Equal(t, accelschema.PartitionNone, attr(t, md, gpu, accelschema.AttrPartitionType))
	assert.Equal(t, "00000000:07:00.0", attr(t, md, gpu, accelschema.AttrPCIBusID))
	assert.Equal(t, "NVIDIA A100-SXM4-40GB", attr(t, md, gpu, accelschema.AttrHWModel))
	assert.Equal(t, "535.161.08", attr(t, md, gpu, accelschema.AttrHWDriverVersion))
	assert.Equal(t, "0", attr(t, md, gpu, accelschema.AttrDeviceIndex))
	assert.Empty(t, attr(t, md, gpu, accelschema.AttrK8sPodName), "the instances are held, not the GPU")
	assert.InDelta(t, 87.355, value(t, md, gpu, accelschema.MetricPower), 1e-9, "gi3's row; gi5's (87.412) comes first on the page")
	assert.InDelta(t, 9182731.120, value(t, md, gpu, accelschema.MetricEnergy), 1e-6)
	assert.Equal(t, 47.0, value(t, md, gpu, accelschema.MetricTemperature, "hw.sensor_location", "memory"), "gi4 says 48")
	assert.Equal(t, 41.0, value(t, md, gpu, accelschema.MetricTemperature, "hw.sensor_location", "gpu"), "gi13 says 42")
	assert.Equal(t, 48199862.0, value(t, md, gpu, accelschema.MetricLinkThroughput, "accelerator.link.type", "pcie", "hw.direction", "transmit"))
	assert.Equal(t, 1.0, value(t, md, gpu, accelschema.MetricRemappedRows, "accelerator.memory.remap.type", "correctable"))
	assert.Equal(t, 1.0, value(t, md, gpu, accelschema.MetricStatus, "hw.state", "ok"))
	assert.NotContains(t, metricNames(t, md, gpu), accelschema.MetricGPUMemoryLimit,
		"the GPU's own memory size is not on the page, and it is not the sum of its instances'")
	for _, m := range []string{accelschema.MetricGPUMemoryUsage, accelschema.MetricGPUUtilization, accelschema.MetricGREngineActive} {
		assert.NotContains(t, metricNames(t, md, gpu), m, "the instances report it")
	}

	gi3 := gpu + "/gi3"
	assert.Equal(t, gpu, attr(t, md, gi3, accelschema.AttrHWParent))
	assert.Equal(t, "2g.10gb", attr(t, md, gi3, accelschema.AttrPartitionProfile))
	assert.Equal(t, "llm-serve-7d9f8c6b5-q2w4r", attr(t, md, gi3, accelschema.AttrK8sPodName))
	assert.Equal(t, "vllm", attr(t, md, gi3, accelschema.AttrK8sContainerName))
	assert.Equal(t, 6144.0*mibF, value(t, md, gi3, accelschema.MetricGPUMemoryUsage))
	assert.Equal(t, (6144.0+3584)*mibF, value(t, md, gi3, accelschema.MetricPartitionMemoryLimit))
	assert.InDelta(t, 6144.0/9728, value(t, md, gi3, accelschema.MetricGPUMemoryUtilization), 1e-12)
	assert.Equal(t, 0.932871, value(t, md, gi3, accelschema.MetricGREngineActive))
	assert.Equal(t, []string{
		accelschema.MetricDRAMActive, accelschema.MetricGREngineActive, accelschema.MetricPartitionMemoryLimit,
		accelschema.MetricTensorActive, accelschema.MetricGPUMemoryUsage, accelschema.MetricGPUMemoryUtilization,
	}, metricNames(t, md, gi3), "an instance carries only what it measures: no power, no hw.status")
	assert.Equal(t, "0.2857142857142857", attr(t, md, gi3, accelschema.AttrPartitionShare), "2g.10gb: two of seven compute slices")
	assert.Equal(t, "0.14285714285714285", attr(t, md, gpu+"/gi13", accelschema.AttrPartitionShare))
	assert.Empty(t, attr(t, md, gpu+"/gi4", accelschema.AttrK8sPodName), "an instance nobody holds")

	// MIG mode on, no GPU instance created: the GPU's own rows, with no
	// memory or utilization families, and nothing is made up for them.
	empty := "GPU-c47a9e03-6d2b-4e15-8f90-3b7a1c5d2e94"
	assert.InDelta(t, 54.218, value(t, md, empty, accelschema.MetricPower), 1e-9)
	for _, m := range []string{accelschema.MetricGPUMemoryUsage, accelschema.MetricGPUMemoryLimit, accelschema.MetricGPUUtilization, accelschema.MetricGREngineActive} {
		assert.NotContains(t, metricNames(t, md, empty), m)
	}
}

// A time-sliced GPU's families are printed once per pod (and vgpu); the
// copies are one DCGM sample. Each GPU is one resource with one value per
// family; pod hints are set only where exactly one pod holds the GPU.
func TestExporterPerPodCopies(t *testing.T) {
	md := scrapeFixture(t, "dcgm-exporter-3.x-8xa800-timesliced.txt", nil)
	compareMetricsGolden(t, "dcgm-exporter-3.x-8xa800-timesliced.yaml", md)
	require.Equal(t, 8, md.ResourceMetrics().Len())

	g0 := "GPU-6f1d2a8e-3c4b-5d7e-8f90-a1b2c3d4e5f0"
	assert.Equal(t, map[string]float64{"{}": 246.913}, points(t, md, g0, accelschema.MetricPower), "printed three times, counted once")
	assert.Equal(t, map[string]float64{"{hw.gpu.task=general}": 0.71}, points(t, md, g0, accelschema.MetricGPUUtilization))
	assert.Equal(t, 48942.0*mibF, value(t, md, g0, accelschema.MetricGPUMemoryUsage))
	assert.Equal(t, (48942.0+31218+1071)*mibF, value(t, md, g0, accelschema.MetricGPUMemoryLimit))
	for _, k := range []string{accelschema.AttrK8sPodName, accelschema.AttrK8sNamespaceName, accelschema.AttrK8sContainerName} {
		assert.Empty(t, attr(t, md, g0, k), "three pods share GPU 0: no single holder")
		assert.Empty(t, attr(t, md, "GPU-0b9e7c5a-1d3f-4a6b-8c2e-9f7d5b3a1c08", k), "two pods share GPU 1")
	}
	g2 := "GPU-d2c4e6f8-0a1b-4c3d-9e5f-7a8b6c4d2e1f"
	assert.Equal(t, "sft-llama-0", attr(t, md, g2, accelschema.AttrK8sPodName))
	assert.Equal(t, "training", attr(t, md, g2, accelschema.AttrK8sNamespaceName))
	assert.Equal(t, "trainer", attr(t, md, g2, accelschema.AttrK8sContainerName))
	assert.Empty(t, attr(t, md, "GPU-1c3e5a7b-9d1f-4b3d-8e5a-7c9e1b3d5f7a", accelschema.AttrK8sPodName))
}

// dcgm-exporter 4.5+ with KUBERNETES_VIRTUAL_GPUS measures utilization and
// memory per pod on a shared GPU, and keeps the GPU's own row of both beside
// the pods' (NVIDIA/dcgm-exporter internal/pkg/transformation,
// createPerProcessMetrics: only GPU_UTIL and FB_USED; every other field is
// copied on each pod's row). With per_pod_usage they are points per pod,
// and the GPU has no total of them beside those; the GPU's own FB_USED row
// still gives its memory size.
func TestExporterPerPodUsage(t *testing.T) {
	md := scrapeFixture(t, "dcgm-exporter-4.5-virtual-gpus.txt", func(c *Config) { c.PerPodUsage = true })
	compareMetricsGolden(t, "dcgm-exporter-4.5-virtual-gpus.yaml", md)

	shared := "GPU-7a2b9c4d-1e3f-4a5b-8c6d-0e2f4a6b8c1d"
	// The pods' own compute utilization; the video encoder and decoder,
	// copied on every pod's row, are the GPU's and read once.
	assert.Equal(t, map[string]float64{
		"{accelerator.consumer.pod=chat/llama-8b-6d5c4b-q9w8e,hw.gpu.task=general}": 0.21,
		"{accelerator.consumer.pod=chat/llama-8b-6d5c4b-x1y2z,hw.gpu.task=general}": 0.37,
		"{accelerator.consumer.pod=eval/judge-runner-k3l4m,hw.gpu.task=general}":    0,
		"{hw.gpu.task=encoder}": 0.14,
		"{hw.gpu.task=decoder}": 0.06,
	}, points(t, md, shared, accelschema.MetricGPUUtilization))
	assert.Equal(t, map[string]float64{
		"{accelerator.consumer.pod=chat/llama-8b-6d5c4b-q9w8e}": 17920 * mibF,
		"{accelerator.consumer.pod=chat/llama-8b-6d5c4b-x1y2z}": 18432 * mibF,
		"{accelerator.consumer.pod=eval/judge-runner-k3l4m}":    0,
	}, points(t, md, shared, accelschema.MetricGPUMemoryUsage))
	assert.Equal(t, (36545.0+9024+530)*mibF, value(t, md, shared, accelschema.MetricGPUMemoryLimit),
		"the GPU's own FB_USED row, with free and reserved, is its size")
	assert.Equal(t, map[string]float64{"{}": 214.338}, points(t, md, shared, accelschema.MetricPower))
	assert.Empty(t, attr(t, md, shared, accelschema.AttrK8sPodName))

	alone := "GPU-e1f3a5b7-c9d1-4e3f-9a5b-7c1d3e5f7a9b"
	assert.Equal(t, map[string]float64{"{hw.gpu.task=general}": 0, "{hw.gpu.task=encoder}": 0, "{hw.gpu.task=decoder}": 0},
		points(t, md, alone, accelschema.MetricGPUUtilization), "a GPU nobody holds has its total")
	assert.Equal(t, (0.0+45569+530)*mibF, value(t, md, alone, accelschema.MetricGPUMemoryLimit))

	// Without per_pod_usage the rows are read as copies: one value.
	md = scrapeFixture(t, "dcgm-exporter-4.5-virtual-gpus.txt", nil)
	require.Empty(t, countcheck.Violations(md))
	assert.Equal(t, map[string]float64{"{hw.gpu.task=general}": 0.58, "{hw.gpu.task=encoder}": 0.14, "{hw.gpu.task=decoder}": 0.06},
		points(t, md, shared, accelschema.MetricGPUUtilization), "the GPU's own row, before any holder's")
	assert.Equal(t, (36545.0+9024+530)*mibF, value(t, md, shared, accelschema.MetricGPUMemoryLimit))
}

// Labels are read by name, whatever their order; a family mixes rows with
// and without holder or MIG labels; pod="" is nobody.
func TestExporterLabelOrder(t *testing.T) {
	md := scrapeFixture(t, "dcgm-exporter-4.x-label-order.txt", nil)
	compareMetricsGolden(t, "dcgm-exporter-4.x-label-order.yaml", md)
	require.Equal(t, 4, md.ResourceMetrics().Len(), "three GPUs, one MIG instance")

	g0 := "GPU-2d4f6a8c-0e1a-4c3e-8a5c-7e9a1c3e5a7c"
	assert.InDelta(t, 612.004, value(t, md, g0, accelschema.MetricPower), 1e-9, "UUID before gpu, pod before namespace")
	assert.Equal(t, map[string]float64{"{hw.sensor_location=gpu}": 44}, points(t, md, g0, accelschema.MetricTemperature))
	assert.Equal(t, "bert-ft-0", attr(t, md, g0, accelschema.AttrK8sPodName), "one holder, though not on every row")
	assert.Equal(t, "trainer", attr(t, md, g0, accelschema.AttrK8sContainerName))
	assert.Equal(t, (70113.0+10430+536)*mibF, value(t, md, g0, accelschema.MetricGPUMemoryLimit))
	assert.Equal(t, 0.0, value(t, md, g0, accelschema.MetricStatus, "hw.state", "failed"))

	g1 := "GPU-8b0d2f4a-6c8e-4a0c-9e2a-4c6e8a0c2e4a"
	assert.Empty(t, attr(t, md, g1, accelschema.AttrK8sPodName), `pod="" is no holder`)
	assert.Empty(t, attr(t, md, g1, accelschema.AttrK8sContainerName))

	g2 := "GPU-f5a7c9e1-3b5d-4f7a-8c1e-3a5c7e9b1d3f"
	assert.InDelta(t, 288.41, value(t, md, g2, accelschema.MetricPower), 1e-9, "the GPU's own row before its instance's (288.93)")
	assert.Equal(t, 39.0, value(t, md, g2, accelschema.MetricTemperature, "hw.sensor_location", "gpu"), "its instance's row says 40")
	assert.Equal(t, (35762.0+45265+552)*mibF, value(t, md, g2, accelschema.MetricGPUMemoryLimit))
	assert.NotContains(t, metricNames(t, md, g2), accelschema.MetricGPUMemoryUsage, "a GPU in MIG mode leaves memory use to its instances")
	inst := g2 + "/gi2"
	assert.Equal(t, 35210.0*mibF, value(t, md, inst, accelschema.MetricGPUMemoryUsage))
	assert.Equal(t, (35210.0+5318)*mibF, value(t, md, inst, accelschema.MetricPartitionMemoryLimit))
	assert.Equal(t, "mistral-7b-0", attr(t, md, inst, accelschema.AttrK8sPodName))
	assert.NotContains(t, metricNames(t, md, inst), accelschema.MetricPower)
}

// DCGM_EXP_XID_ERRORS_COUNT counts each XID over the exporter's window: XIDs
// that entered it since the last scrape count on the GPU and are announced;
// the first page is a baseline.
func TestExporterXIDWindow(t *testing.T) {
	first := string(fixture(t, "dcgm-exporter-4.x-xid-window.txt"))
	gpu0 := `window_size_in_ms="300000",xid="13"} `
	require.Contains(t, first, gpu0+"2")
	lastXID := `err_code="13",err_msg="Graphics Engine Exception",namespace="batch",pod="render-7c8d9-z5x6c"} 13`
	require.Contains(t, first, lastXID)
	xid48 := `DCGM_EXP_XID_ERRORS_COUNT{gpu="0",UUID="GPU-3e5a7c9b-1d3f-4b5d-8f7a-9c1e3a5b7d9f",pci_bus_id="00000000:1B:00.0",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",Hostname="nvidia-dcgm-exporter-q8r4w",DCGM_FI_DRIVER_VERSION="570.86.15",err_msg="Double Bit ECC Error",window_size_in_ms="300000",xid="48"} 1` + "\n"
	pages := []string{
		first,
		// One more XID 13 and a first XID 48 on GPU 0 (the last XID says 48).
		strings.Replace(strings.Replace(first, gpu0+"2", gpu0+"3", 1), lastXID, strings.ReplaceAll(lastXID, "13", "48"), 1) + xid48,
		// The window forgets: 13 drops to 1, 48 leaves it.
		strings.Replace(first, gpu0+"2", gpu0+"1", 1),
	}
	var page atomic.Int32
	srv := serveText(t, func() []byte { return []byte(pages[page.Load()]) })
	h := start(t, exporterConfig(srv.URL), testWorld(t, nil))

	h.scrape(t)
	assert.Zero(t, h.logs.LogRecordCount(), "the first window is a baseline of unknown age")
	page.Store(1)
	md := h.scrape(t)
	compareMetricsGolden(t, "dcgm-exporter-4.x-xid-window.yaml", md)
	require.Equal(t, 2, h.logs.LogRecordCount(), "XID 13 again and XID 48, once each")
	compareLogsGolden(t, "dcgm-exporter-4.x-xid-window-events.yaml", h.allLogs())
	status, xids := deviceMetrics(t, md, "GPU-3e5a7c9b-1d3f-4b5d-8f7a-9c1e3a5b7d9f")
	assert.Equal(t, map[int64]int64{13: 1, 48: 1}, xids, "not the last XID's change as well")
	assert.Equal(t, accelschema.HWStateFailed, status)
	_, xids = deviceMetrics(t, md, "GPU-b7d9f1a3-5c7e-4a9c-8e1b-3d5f7a9c1e3b")
	assert.Empty(t, xids, "GPU 1's XID 43 was in the first window")

	page.Store(2)
	md = h.scrape(t)
	assert.Equal(t, 2, h.logs.LogRecordCount(), "XIDs leaving the window are not new")
	_, xids = deviceMetrics(t, md, "GPU-3e5a7c9b-1d3f-4b5d-8f7a-9c1e3a5b7d9f")
	assert.Equal(t, map[int64]int64{13: 1, 48: 1}, xids, "counts since the receiver started")
}

// --kubernetes-enable-dra labels become DRA hints; a MIG instance without
// GPU_I labels is tied to its claim's MIG device UUID.
func TestExporterDRAClaims(t *testing.T) {
	md := scrapeFixture(t, "dcgm-exporter-4.x-dra.txt", nil)
	compareMetricsGolden(t, "dcgm-exporter-4.x-dra.yaml", md)
	require.Equal(t, 4, md.ResourceMetrics().Len(), "two GPUs, two MIG instances")

	g0 := "GPU-a4f34abc-7715-3560-dcea-7238b9611a45"
	assert.Equal(t, "shared-gh200", attr(t, md, g0, accelschema.AttrDRAClaimName), "one claim, shared by two pods")
	assert.Equal(t, "serving", attr(t, md, g0, accelschema.AttrDRAClaimNamespace))
	assert.Equal(t, "gpu.nvidia.com", attr(t, md, g0, accelschema.AttrDRADriver))
	assert.Equal(t, "sc-starwars-mab9-b00", attr(t, md, g0, accelschema.AttrDRAPool))
	assert.Equal(t, "gpu-0", attr(t, md, g0, accelschema.AttrDRADevice))
	assert.Empty(t, attr(t, md, g0, accelschema.AttrK8sPodName), "two pods: no single one")
	assert.Equal(t, map[string]float64{"{}": 402.555}, points(t, md, g0, accelschema.MetricPower))

	g1 := "GPU-5c8e1a3b-9d2f-4e6a-b1c3-d5e7f9a1b3c5"
	assert.InDelta(t, 211.87, value(t, md, g1, accelschema.MetricPower), 1e-9, "the instance with a GPU-instance id ranks first")
	assert.Empty(t, attr(t, md, g1, accelschema.AttrDRAClaimName), "the claims hold the instances")
	assert.NotContains(t, metricNames(t, md, g1), accelschema.MetricGPUMemoryUsage)

	a := g1 + "/gi9"
	assert.Equal(t, "pod-56dbf5cf44-xnfk5-mig-devices-rxspm", attr(t, md, a, accelschema.AttrDRAClaimName))
	assert.Equal(t, "gpu-1-mig-19-6-1", attr(t, md, a, accelschema.AttrDRADevice))
	assert.Equal(t, "pod-56dbf5cf44-xnfk5", attr(t, md, a, accelschema.AttrK8sPodName))
	assert.Equal(t, 9310.0*mibF, value(t, md, a, accelschema.MetricGPUMemoryUsage))

	b := "MIG-9d1b3f5a-7c2e-4a6b-8d0f-1e3a5c7b9d2f"
	assert.Equal(t, g1, attr(t, md, b, accelschema.AttrHWParent))
	assert.Equal(t, accelschema.PartitionMIG, attr(t, md, b, accelschema.AttrPartitionType))
	assert.Equal(t, "3g.48gb", attr(t, md, b, accelschema.AttrPartitionProfile), "from dra_mig_profile")
	assert.Empty(t, attr(t, md, b, accelschema.AttrPartitionID), "no GPU-instance id on its rows")
	assert.Equal(t, "gpu-1-mig-14-0-3", attr(t, md, b, accelschema.AttrDRADevice))
	assert.Equal(t, (30127.0+16470)*mibF, value(t, md, b, accelschema.MetricPartitionMemoryLimit))
	assert.Equal(t, "0.5", attr(t, md, b, accelschema.AttrPartitionShare), "3g.48gb holds half a 96 GB GH200's memory")
}
