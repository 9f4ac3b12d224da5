//go:build gpucheck

// Command gpucheck exercises the real NVML path on a machine with an NVIDIA
// GPU: it opens the driver, enumerates GPUs, MIG mode and instances, GPM
// support and values, processes and event support, then runs the dcgm
// receiver (source: nvml) for two scrapes and prints what it emits. It exits
// non-zero when a check fails. Run it with `make gpu-check`
// (scripts/gpu-check.sh); see docs/gpu-check.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/zap"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/accelschema/countcheck"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/metadata"
)

type checker struct{ failures []string }

func (c *checker) fail(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	c.failures = append(c.failures, msg)
	fmt.Println("FAIL:", msg)
}

func (c *checker) ok(format string, args ...any) { fmt.Println("ok:  ", fmt.Sprintf(format, args...)) }

func main() {
	interval := flag.Duration("interval", 3*time.Second, "collection interval of the receiver run")
	flag.Parse()
	c := &checker{}
	gpus := probeNVML(c)
	runReceiver(c, gpus, *interval)
	fmt.Println()
	if len(c.failures) > 0 {
		fmt.Printf("gpu-check FAILED (%d):\n  %s\n", len(c.failures), strings.Join(c.failures, "\n  "))
		os.Exit(1)
	}
	fmt.Println("gpu-check passed")
}

type gpuInfo struct {
	uuid     string
	hopper   bool
	gpm      bool
	migMode  bool
	migUUIDs []string
}

// probeNVML talks to the driver directly, to know what the receiver should
// report.
func probeNVML(c *checker) []gpuInfo {
	fmt.Println("== NVML")
	lib := nvml.New()
	if ret := lib.Init(); ret != nvml.SUCCESS {
		c.fail("nvml.Init: %v", ret)
		fmt.Println("gpu-check needs the NVIDIA driver (libnvidia-ml.so.1) and a GPU")
		os.Exit(2)
	}
	defer lib.Shutdown()
	driver, _ := lib.SystemGetDriverVersion()
	nvmlVersion, _ := lib.SystemGetNVMLVersion()
	cuda, _ := lib.SystemGetCudaDriverVersion()
	fmt.Printf("driver %s, NVML %s, CUDA driver %d.%d\n", driver, nvmlVersion, cuda/1000, cuda%1000/10)
	if out, err := exec.Command("nvidia-smi", "-L").Output(); err == nil {
		fmt.Print("nvidia-smi -L:\n", indent(string(out)))
	}
	n, ret := lib.DeviceGetCount()
	if ret != nvml.SUCCESS || n == 0 {
		c.fail("DeviceGetCount: %d, %v", n, ret)
		return nil
	}
	c.ok("%d GPU(s)", n)
	var out []gpuInfo
	for i := 0; i < n; i++ {
		d, ret := lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			c.fail("GPU %d handle: %v", i, ret)
			continue
		}
		info := gpuInfo{}
		info.uuid, _ = d.GetUUID()
		name, _ := d.GetName()
		arch, _ := d.GetArchitecture()
		info.hopper = arch >= nvml.DEVICE_ARCH_HOPPER
		pci, _ := d.GetPciInfo()
		mem, mret := d.GetMemoryInfo()
		power, pret := d.GetPowerUsage()
		temp, tret := d.GetTemperature(nvml.TEMPERATURE_GPU)
		util, uret := d.GetUtilizationRates()
		sm, _ := d.GetClockInfo(nvml.CLOCK_SM)
		reasons, _ := d.GetCurrentClocksEventReasons()
		fmt.Printf("\nGPU %d %s %s bus %s arch %d\n", i, info.uuid, name, busID(pci), arch)
		fmt.Printf("  memory %d/%d MiB (%v), power %.1f W (%v), temperature %d C (%v), utilization %d%% (%v), SM clock %d MHz, clock event reasons %#x\n",
			mem.Used>>20, mem.Total>>20, mret, float64(power)/1000, pret, temp, tret, util.Gpu, uret, sm, reasons)
		corr, unc, pending, failed, rret := d.GetRemappedRows()
		fmt.Printf("  remapped rows: correctable %d uncorrectable %d pending %v failed %v (%v)\n", corr, unc, pending, failed, rret)
		cur, pend, ret := d.GetMigMode()
		fmt.Printf("  MIG mode: current %d pending %d (%v)\n", cur, pend, ret)
		if ret == nvml.SUCCESS && cur == nvml.DEVICE_MIG_ENABLE {
			info.migMode = true
			max, _ := d.GetMaxMigDeviceCount()
			for j := 0; j < max; j++ {
				m, ret := d.GetMigDeviceHandleByIndex(j)
				if ret != nvml.SUCCESS {
					continue
				}
				u, _ := m.GetUUID()
				mn, _ := m.GetName()
				gi, _ := m.GetGpuInstanceId()
				ci, _ := m.GetComputeInstanceId()
				mm, _ := m.GetMemoryInfo()
				fmt.Printf("    MIG %s %q GI %d CI %d memory %d/%d MiB\n", u, mn, gi, ci, mm.Used>>20, mm.Total>>20)
				info.migUUIDs = append(info.migUUIDs, u)
			}
		}
		if sup, ret := d.GpmQueryDeviceSupport(); ret == nvml.SUCCESS && sup.IsSupportedDevice != 0 {
			info.gpm = true
			probeGPM(c, lib, d, i)
		} else {
			fmt.Printf("  GPM: not supported (%v)\n", ret)
			if info.hopper {
				c.fail("GPU %d is Hopper or newer but GPM is not supported (%v): driver too old?", i, ret)
			}
		}
		compute, cret := d.GetComputeRunningProcesses()
		mps, mret2 := d.GetMPSComputeRunningProcesses()
		fmt.Printf("  processes: %d compute (%v), %d MPS (%v)\n", len(compute), cret, len(mps), mret2)
		for _, p := range append(compute, mps...) {
			fmt.Printf("    pid %d %d MiB GI %d CI %d\n", p.Pid, p.UsedGpuMemory>>20, int32(p.GpuInstanceId), int32(p.ComputeInstanceId))
		}
		samples, sret := d.GetProcessUtilization(0)
		fmt.Printf("  process utilization samples: %d (%v)\n", len(samples), sret)
		events, eret := d.GetSupportedEventTypes()
		fmt.Printf("  supported events %#x (%v): XID %v\n", events, eret, events&nvml.EventTypeXidCriticalError != 0)
		out = append(out, info)
	}
	return out
}

func probeGPM(c *checker, lib nvml.Interface, d nvml.Device, i int) {
	s1, r1 := lib.GpmSampleAlloc()
	s2, r2 := lib.GpmSampleAlloc()
	if r1 != nvml.SUCCESS || r2 != nvml.SUCCESS {
		c.fail("GPU %d GpmSampleAlloc: %v %v", i, r1, r2)
		return
	}
	defer s1.Free()
	defer s2.Free()
	if ret := d.GpmSampleGet(s1); ret != nvml.SUCCESS {
		c.fail("GPU %d GpmSampleGet: %v", i, ret)
		return
	}
	time.Sleep(time.Second)
	if ret := d.GpmSampleGet(s2); ret != nvml.SUCCESS {
		c.fail("GPU %d GpmSampleGet: %v", i, ret)
		return
	}
	ids := []nvml.GpmMetricId{nvml.GPM_METRIC_GRAPHICS_UTIL, nvml.GPM_METRIC_SM_UTIL, nvml.GPM_METRIC_SM_OCCUPANCY, nvml.GPM_METRIC_ANY_TENSOR_UTIL, nvml.GPM_METRIC_DRAM_BW_UTIL}
	m := &nvml.GpmMetricsGetType{NumMetrics: uint32(len(ids)), Sample1: s1, Sample2: s2}
	for j, id := range ids {
		m.Metrics[j].MetricId = uint32(id)
	}
	if ret := lib.GpmMetricsGet(m); ret != nvml.SUCCESS {
		c.fail("GPU %d GpmMetricsGet: %v", i, ret)
		return
	}
	fmt.Printf("  GPM over 1 s:")
	for j := range ids {
		fmt.Printf(" %d=%.2f%% (%v)", ids[j], m.Metrics[j].Value, nvml.Return(m.Metrics[j].NvmlReturn))
	}
	fmt.Println()
	c.ok("GPU %d GPM metrics read", i)
}

func busID(p nvml.PciInfo) string {
	b := make([]byte, 0, len(p.BusId))
	for _, ch := range p.BusId {
		if ch == 0 {
			break
		}
		b = append(b, byte(ch))
	}
	return string(b)
}

type host struct{ statuses []*componentstatus.Event }

func (*host) GetExtensions() map[component.ID]component.Component { return nil }
func (h *host) Report(e *componentstatus.Event)                   { h.statuses = append(h.statuses, e) }

// runReceiver runs the receiver as the collector would and checks what it
// emits against what NVML said.
func runReceiver(c *checker, gpus []gpuInfo, interval time.Duration) {
	fmt.Printf("\n== dcgm receiver (source: nvml, collection_interval %s)\n", interval)
	f := dcgmreceiver.NewFactory()
	cfg := f.CreateDefaultConfig().(*dcgmreceiver.Config)
	cfg.CollectionInterval = interval
	cfg.InitialDelay = 0
	set := receivertest.NewNopSettings(metadata.Type)
	logger, _ := zap.NewDevelopment()
	set.Logger = logger
	metrics, logs := new(consumertest.MetricsSink), new(consumertest.LogsSink)
	ctx := context.Background()
	mr, err := f.CreateMetrics(ctx, set, cfg, metrics)
	if err != nil {
		c.fail("create receiver: %v", err)
		return
	}
	lr, err := f.CreateLogs(ctx, set, cfg, logs)
	if err != nil {
		c.fail("create receiver: %v", err)
		return
	}
	h := &host{}
	for _, r := range []component.Component{mr, lr} {
		if err := r.Start(ctx, h); err != nil {
			c.fail("start receiver: %v", err)
			return
		}
	}
	// GPM values appear from the second scrape on.
	deadline := time.Now().Add(10*interval + 30*time.Second)
	var last pmetric.Metrics
	for time.Now().Before(deadline) {
		all := metrics.AllMetrics()
		nonEmpty := 0
		for _, md := range all {
			if md.DataPointCount() > 0 {
				nonEmpty++
				last = md
			}
		}
		if nonEmpty >= 2 {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, r := range []component.Component{mr, lr} {
		_ = r.Shutdown(ctx)
	}
	for _, st := range h.statuses {
		fmt.Printf("status: %v %v\n", st.Status(), st.Err())
	}
	if last.DataPointCount() == 0 {
		c.fail("the receiver emitted no data points within %s", 10*interval+30*time.Second)
		return
	}
	printMetrics(last)
	fmt.Printf("health events: %d log records\n", logs.LogRecordCount())
	checkEmitted(c, gpus, last)
}

func checkEmitted(c *checker, gpus []gpuInfo, md pmetric.Metrics) {
	byID := map[string]map[string]int{}
	status := map[string]int{}
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		rm := md.ResourceMetrics().At(i)
		id, ok := rm.Resource().Attributes().Get(accelschema.AttrHWID)
		if !ok {
			continue
		}
		names := map[string]int{}
		ms := rm.ScopeMetrics().At(0).Metrics()
		for j := 0; j < ms.Len(); j++ {
			names[ms.At(j).Name()]++
			if ms.At(j).Name() == accelschema.MetricStatus {
				dps := ms.At(j).Sum().DataPoints()
				for k := 0; k < dps.Len(); k++ {
					status[id.Str()] += int(dps.At(k).IntValue())
				}
			}
		}
		byID[id.Str()] = names
	}
	for _, g := range gpus {
		names, ok := byID[g.uuid]
		if !ok {
			c.fail("no resource for GPU %s", g.uuid)
			continue
		}
		if status[g.uuid] != 1 {
			c.fail("GPU %s: hw.status has %d states at 1, want exactly 1", g.uuid, status[g.uuid])
		}
		wants := []string{accelschema.MetricPower, accelschema.MetricGPUMemoryLimit, accelschema.MetricTemperature}
		if !g.migMode {
			// In MIG mode memory use is the instances', not the GPU's.
			wants = append(wants, accelschema.MetricGPUMemoryUsage)
		}
		for _, want := range wants {
			if names[want] == 0 {
				c.fail("GPU %s: no %s", g.uuid, want)
			}
		}
		if g.gpm && len(g.migUUIDs) == 0 && names[accelschema.MetricSMActive] == 0 {
			c.fail("GPU %s supports GPM but %s is missing", g.uuid, accelschema.MetricSMActive)
		}
		for _, m := range g.migUUIDs {
			if _, ok := byID[m]; !ok {
				c.fail("no resource for MIG instance %s", m)
			}
		}
		c.ok("GPU %s: %d metrics", g.uuid, len(names))
	}
	if v := countcheck.Violations(md); len(v) > 0 {
		c.fail("not every quantity is counted once:\n  %s", strings.Join(v, "\n  "))
	} else {
		c.ok("every quantity counted once (countcheck)")
	}
}

func printMetrics(md pmetric.Metrics) {
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		rm := md.ResourceMetrics().At(i)
		fmt.Printf("\nresource %s\n", attrs(rm.Resource().Attributes()))
		ms := rm.ScopeMetrics().At(0).Metrics()
		var lines []string
		for j := 0; j < ms.Len(); j++ {
			m := ms.At(j)
			var dps pmetric.NumberDataPointSlice
			switch m.Type() {
			case pmetric.MetricTypeGauge:
				dps = m.Gauge().DataPoints()
			case pmetric.MetricTypeSum:
				dps = m.Sum().DataPoints()
			default:
				continue
			}
			for k := 0; k < dps.Len(); k++ {
				dp := dps.At(k)
				v := fmt.Sprint(dp.IntValue())
				if dp.ValueType() == pmetric.NumberDataPointValueTypeDouble {
					v = fmt.Sprintf("%g", dp.DoubleValue())
				}
				lines = append(lines, fmt.Sprintf("  %s%s = %s %s", m.Name(), attrs(dp.Attributes()), v, m.Unit()))
			}
		}
		sort.Strings(lines)
		fmt.Println(strings.Join(lines, "\n"))
	}
}

func attrs(m pcommon.Map) string {
	if m.Len() == 0 {
		return ""
	}
	var parts []string
	m.Range(func(k string, v pcommon.Value) bool {
		parts = append(parts, k+"="+v.AsString())
		return true
	})
	sort.Strings(parts)
	return "{" + strings.Join(parts, ", ") + "}"
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ") + "\n"
}
