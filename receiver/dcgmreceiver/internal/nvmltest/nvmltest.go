// Package nvmltest builds fake NVIDIA hosts for tests on go-nvml's own mock
// servers (mock/dgxh100, mock/dgxa100): it fills the mock devices' Func
// hooks with readings a test can change between scrapes, creates MIG GPU and
// compute instances through the mock's MIG implementation, serves processes
// and GPM samples, and delivers injected XIDs through a mock event set. Only
// the outside world (the driver) is faked; the receiver's code runs as is.
package nvmltest

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
)

// Readings are what one fake GPU (or MIG instance, for the fields that
// apply) reports. Tests change them through Fake.Update.
type Readings struct {
	Lost bool

	UtilPct, EncPct, DecPct uint32
	MemUsed                 uint64
	PowerMW                 uint32
	EnergyMJ                uint64
	TempC, MemTempC         uint32
	SMClockMHz, MemClockMHz uint32
	ThrottleMask            uint64
	// ViolationNS by nvml.PerfPolicyType.
	ViolationNS map[nvml.PerfPolicyType]uint64

	ECCCorrected, ECCUncorrected uint64
	PCIeReplay                   int
	PCIeTxKBs, PCIeRxKBs         uint32
	PCIeTxBytes, PCIeRxBytes     uint64
	NVLinkTxKiB, NVLinkRxKiB     uint64
	NVLinkCRCFlit, NVLinkCRCData uint64
	NVLinkReplay, NVLinkRecovery uint64

	// PageRetirement is true for GPUs that retire pages (before Ampere);
	// newer ones answer "not supported" and remap rows instead.
	PageRetirement         bool
	RetiredSBE, RetiredDBE int
	RetiredPending         bool
	RowsCorrectable        int
	RowsUncorrectable      int
	RemapPending           bool
	RemapFailed            bool

	Compute, MPS []nvml.ProcessInfo
	ProcessUtil  []nvml.ProcessUtilizationSample
	// ProcessesUnsupported makes a MIG instance refuse process queries, as
	// some drivers do; the parent GPU's list then applies.
	ProcessesUnsupported bool

	// GPMPct by GPM metric id (percent); set on GPUs and MIG instances.
	GPMPct map[nvml.GpmMetricId]float64
}

// MIGInstance is one MIG instance the fake created.
type MIGInstance struct {
	UUID    string
	Profile string
	GI, CI  int
	Device  *mock.Device
	Reading *Readings
}

// Fake is a fake NVIDIA host.
type Fake struct {
	Server  *server.Server
	Devices []*server.Device

	mu       sync.Mutex
	readings []*Readings
	migs     [][]*MIGInstance
	events   chan nvml.EventData
	gpmTick  int
	gpmOK    bool
	// Registered records the event mask each GPU registered for.
	registered []uint64
	// EventSetFreed is set when the receiver frees the event set.
	eventSetFreed bool
	inits         int
	shutdowns     int
}

// Options describe the host.
type Options struct {
	// Model is "h100" (GPM supported) or "a100" (no GPM).
	Model string
	// MIG lists, per GPU index, the MIG profiles to create (one compute
	// instance each), e.g. {0: {"1g.10gb", "3g.40gb"}}.
	MIG map[int][]string
}

// UUID is the fake's deterministic GPU UUID for an index.
func UUID(i int) string { return fmt.Sprintf("GPU-00000000-0000-4000-8000-0000000000%02d", i) }

// MIGUUID is the fake's MIG UUID for a GPU index and GPU-instance id.
func MIGUUID(gpu, gi int) string {
	return fmt.Sprintf("MIG-00000000-0000-4000-9000-00000000%02d%02d", gpu, gi)
}

// New builds a fake 8-GPU host.
func New(opts Options) (*Fake, error) {
	var s *server.Server
	gpm := false
	switch opts.Model {
	case "", "h100":
		s, gpm = dgxh100.New(), true
	case "a100":
		s = dgxa100.New()
	default:
		return nil, fmt.Errorf("unknown model %q", opts.Model)
	}
	f := &Fake{Server: s, events: make(chan nvml.EventData, 64), gpmOK: gpm}
	for i, d := range s.Devices {
		dev := d.(*server.Device)
		dev.UUID = UUID(i)
		dev.PciBusID = fmt.Sprintf("00000000:%02X:00.0", 0x18+i*0x10)
		f.Devices = append(f.Devices, dev)
		f.readings = append(f.readings, DefaultReadings(i))
		f.migs = append(f.migs, nil)
		f.registered = append(f.registered, 0)
	}
	f.hookServer()
	for i, dev := range f.Devices {
		f.hookDevice(i, dev)
	}
	for i, profiles := range opts.MIG {
		if err := f.createMIG(i, profiles); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// DefaultReadings are a busy, healthy GPU; values differ per index so that
// golden files show each device's own numbers.
func DefaultReadings(i int) *Readings {
	u := uint32(i)
	return &Readings{
		UtilPct: 50 + u, EncPct: 0, DecPct: 2,
		MemUsed:  uint64(10+i) << 30,
		PowerMW:  300000 + 1000*u,
		EnergyMJ: 1_000_000_000 + uint64(i)*1_000_000,
		TempC:    40 + u, MemTempC: 45 + u,
		SMClockMHz: 1980, MemClockMHz: 2619,
		ThrottleMask: 0x4, // software power cap
		ViolationNS: map[nvml.PerfPolicyType]uint64{
			nvml.PERF_POLICY_POWER:   2_500_000_000,
			nvml.PERF_POLICY_THERMAL: 0,
		},
		ECCCorrected: uint64(i), PCIeReplay: 0,
		PCIeTxKBs: 1024, PCIeRxKBs: 2048,
		PCIeTxBytes: 1 << 30, PCIeRxBytes: 2 << 30,
		NVLinkTxKiB: 1 << 20, NVLinkRxKiB: 2 << 20,
		RowsCorrectable: 0, RowsUncorrectable: 0,
		Compute: []nvml.ProcessInfo{{Pid: uint32(1000 + i), UsedGpuMemory: 8 << 30, GpuInstanceId: 0xFFFFFFFF, ComputeInstanceId: 0xFFFFFFFF}},
		ProcessUtil: []nvml.ProcessUtilizationSample{
			{Pid: uint32(1000 + i), TimeStamp: 1_000_000, SmUtil: 40},
			{Pid: uint32(1000 + i), TimeStamp: 2_000_000, SmUtil: 60},
		},
		GPMPct: map[nvml.GpmMetricId]float64{
			nvml.GPM_METRIC_GRAPHICS_UTIL:   60,
			nvml.GPM_METRIC_SM_UTIL:         55,
			nvml.GPM_METRIC_SM_OCCUPANCY:    30,
			nvml.GPM_METRIC_ANY_TENSOR_UTIL: 25,
			nvml.GPM_METRIC_DRAM_BW_UTIL:    40,
		},
	}
}

// Update changes a GPU's readings under the fake's lock.
func (f *Fake) Update(gpu int, change func(r *Readings)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	change(f.readings[gpu])
}

// UpdateMIG changes a MIG instance's readings.
func (f *Fake) UpdateMIG(gpu, gi int, change func(r *Readings)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, m := range f.migs[gpu] {
		if m.GI == gi {
			change(m.Reading)
		}
	}
}

// MIG returns the MIG instances created on a GPU.
func (f *Fake) MIG(gpu int) []*MIGInstance {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*MIGInstance(nil), f.migs[gpu]...)
}

// InjectXID delivers an XID through the event set, for a MIG instance when
// gi >= 0.
func (f *Fake) InjectXID(gpu, xid, gi int) {
	f.inject(gpu, nvml.EventTypeXidCriticalError, uint64(xid), gi)
}

// InjectRecoveryAction delivers a GPU recovery action event.
func (f *Fake) InjectRecoveryAction(gpu, action int) {
	f.inject(gpu, nvml.EventTypeGpuRecoveryAction, uint64(action), -1)
}

func (f *Fake) inject(gpu int, kind, data uint64, gi int) {
	e := nvml.EventData{Device: f.Devices[gpu], EventType: kind, EventData: data, GpuInstanceId: 0xFFFFFFFF, ComputeInstanceId: 0xFFFFFFFF}
	if gi >= 0 {
		e.GpuInstanceId, e.ComputeInstanceId = uint32(gi), 0
	}
	f.events <- e
}

// Registered returns the event mask a GPU registered for.
func (f *Fake) Registered(gpu int) uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.registered[gpu]
}

// Sessions returns how many times NVML was initialized and shut down.
func (f *Fake) Sessions() (inits, shutdowns int, eventSetFreed bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.inits, f.shutdowns, f.eventSetFreed
}

func (f *Fake) hookServer() {
	s := f.Server
	s.InitFunc = func() nvml.Return {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.inits++
		return nvml.SUCCESS
	}
	s.ShutdownFunc = func() nvml.Return {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.shutdowns++
		return nvml.SUCCESS
	}
	set := &mock.EventSet{}
	set.WaitFunc = func(timeoutMs uint32) (nvml.EventData, nvml.Return) {
		t := time.NewTimer(time.Duration(timeoutMs) * time.Millisecond)
		defer t.Stop()
		select {
		case e := <-f.events:
			return e, nvml.SUCCESS
		case <-t.C:
			return nvml.EventData{}, nvml.ERROR_TIMEOUT
		}
	}
	set.FreeFunc = func() nvml.Return {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.eventSetFreed = true
		return nvml.SUCCESS
	}
	s.EventSetCreateFunc = func() (nvml.EventSet, nvml.Return) { return set, nvml.SUCCESS }
	s.GpmSampleAllocFunc = func() (nvml.GpmSample, nvml.Return) {
		smp := &gpmSample{}
		smp.FreeFunc = func() nvml.Return { return nvml.SUCCESS }
		return smp, nvml.SUCCESS
	}
	s.GpmMetricsGetFunc = f.gpmMetricsGet
}

// gpmSample remembers which device (and GPU instance) it was taken on and
// when, so that GpmMetricsGet can insist on two samples of the same device
// in order, as NVML does.
type gpmSample struct {
	mock.GpmSample
	gpu, gi int
	tick    int
}

func (f *Fake) gpmMetricsGet(m *nvml.GpmMetricsGetType) nvml.Return {
	f.mu.Lock()
	defer f.mu.Unlock()
	s1, ok1 := m.Sample1.(*gpmSample)
	s2, ok2 := m.Sample2.(*gpmSample)
	if !ok1 || !ok2 || s1.tick == 0 || s2.tick <= s1.tick || s1.gpu != s2.gpu || s1.gi != s2.gi {
		return nvml.ERROR_INVALID_ARGUMENT
	}
	r := f.readings[s2.gpu]
	if s2.gi >= 0 {
		r = nil
		for _, mi := range f.migs[s2.gpu] {
			if mi.GI == s2.gi {
				r = mi.Reading
			}
		}
		if r == nil {
			return nvml.ERROR_NOT_FOUND
		}
	}
	for i := 0; i < int(m.NumMetrics); i++ {
		pct, ok := r.GPMPct[nvml.GpmMetricId(m.Metrics[i].MetricId)]
		if !ok {
			m.Metrics[i].NvmlReturn = uint32(nvml.ERROR_NOT_SUPPORTED)
			continue
		}
		m.Metrics[i].Value, m.Metrics[i].NvmlReturn = pct, uint32(nvml.SUCCESS)
	}
	return nvml.SUCCESS
}

func (f *Fake) hookDevice(i int, d *server.Device) {
	// read runs fn on the GPU's readings, or reports the GPU lost.
	read := func(fn func(r *Readings) nvml.Return) nvml.Return {
		f.mu.Lock()
		defer f.mu.Unlock()
		r := f.readings[i]
		if r.Lost {
			return nvml.ERROR_GPU_IS_LOST
		}
		return fn(r)
	}
	d.GetPciInfoFunc = func() (nvml.PciInfo, nvml.Return) {
		p := nvml.PciInfo{PciDeviceId: d.Config.PciDeviceId}
		for j, c := range []byte(d.PciBusID) {
			p.BusId[j] = int8(c)
		}
		return p, nvml.SUCCESS
	}
	d.GetMemoryInfoFunc = func() (m nvml.Memory, ret nvml.Return) {
		ret = read(func(r *Readings) nvml.Return {
			m = nvml.Memory{Total: d.MemoryInfo.Total, Used: r.MemUsed, Free: d.MemoryInfo.Total - r.MemUsed}
			return nvml.SUCCESS
		})
		return m, ret
	}
	d.GetUtilizationRatesFunc = func() (u nvml.Utilization, ret nvml.Return) {
		ret = read(func(r *Readings) nvml.Return {
			if d.MigMode == nvml.DEVICE_MIG_ENABLE {
				return nvml.ERROR_NOT_SUPPORTED
			}
			u = nvml.Utilization{Gpu: r.UtilPct, Memory: r.UtilPct / 2}
			return nvml.SUCCESS
		})
		return u, ret
	}
	d.GetEncoderUtilizationFunc = func() (v, p uint32, ret nvml.Return) {
		ret = read(func(r *Readings) nvml.Return { v, p = r.EncPct, 167000; return nvml.SUCCESS })
		return v, p, ret
	}
	d.GetDecoderUtilizationFunc = func() (v, p uint32, ret nvml.Return) {
		ret = read(func(r *Readings) nvml.Return { v, p = r.DecPct, 167000; return nvml.SUCCESS })
		return v, p, ret
	}
	d.GetPowerUsageFunc = func() (v uint32, ret nvml.Return) {
		ret = read(func(r *Readings) nvml.Return { v = r.PowerMW; return nvml.SUCCESS })
		return v, ret
	}
	d.GetTotalEnergyConsumptionFunc = func() (v uint64, ret nvml.Return) {
		ret = read(func(r *Readings) nvml.Return { v = r.EnergyMJ; return nvml.SUCCESS })
		return v, ret
	}
	d.GetTemperatureFunc = func(sensor nvml.TemperatureSensors) (v uint32, ret nvml.Return) {
		ret = read(func(r *Readings) nvml.Return { v = r.TempC; return nvml.SUCCESS })
		return v, ret
	}
	d.GetClockInfoFunc = func(ct nvml.ClockType) (v uint32, ret nvml.Return) {
		ret = read(func(r *Readings) nvml.Return {
			switch ct {
			case nvml.CLOCK_SM:
				v = r.SMClockMHz
			case nvml.CLOCK_MEM:
				v = r.MemClockMHz
			default:
				return nvml.ERROR_INVALID_ARGUMENT
			}
			return nvml.SUCCESS
		})
		return v, ret
	}
	d.GetCurrentClocksEventReasonsFunc = func() (v uint64, ret nvml.Return) {
		ret = read(func(r *Readings) nvml.Return { v = r.ThrottleMask; return nvml.SUCCESS })
		return v, ret
	}
	d.GetViolationStatusFunc = func(p nvml.PerfPolicyType) (v nvml.ViolationTime, ret nvml.Return) {
		ret = read(func(r *Readings) nvml.Return {
			ns, ok := r.ViolationNS[p]
			if !ok {
				return nvml.ERROR_NOT_SUPPORTED
			}
			v = nvml.ViolationTime{ReferenceTime: 1_700_000_000_000_000, ViolationTime: ns}
			return nvml.SUCCESS
		})
		return v, ret
	}
	d.GetTotalEccErrorsFunc = func(t nvml.MemoryErrorType, c nvml.EccCounterType) (v uint64, ret nvml.Return) {
		ret = read(func(r *Readings) nvml.Return {
			if c != nvml.VOLATILE_ECC {
				return nvml.ERROR_INVALID_ARGUMENT
			}
			if t == nvml.MEMORY_ERROR_TYPE_CORRECTED {
				v = r.ECCCorrected
			} else {
				v = r.ECCUncorrected
			}
			return nvml.SUCCESS
		})
		return v, ret
	}
	d.GetPcieReplayCounterFunc = func() (v int, ret nvml.Return) {
		ret = read(func(r *Readings) nvml.Return { v = r.PCIeReplay; return nvml.SUCCESS })
		return v, ret
	}
	d.GetPcieThroughputFunc = func(c nvml.PcieUtilCounter) (v uint32, ret nvml.Return) {
		ret = read(func(r *Readings) nvml.Return {
			if c == nvml.PCIE_UTIL_TX_BYTES {
				v = r.PCIeTxKBs
			} else {
				v = r.PCIeRxKBs
			}
			return nvml.SUCCESS
		})
		return v, ret
	}
	d.GetFieldValuesFunc = func(values []nvml.FieldValue) nvml.Return {
		return read(func(r *Readings) nvml.Return {
			for j := range values {
				fillField(&values[j], r)
			}
			return nvml.SUCCESS
		})
	}
	d.GetRetiredPagesFunc = func(cause nvml.PageRetirementCause) (pages []uint64, ret nvml.Return) {
		ret = read(func(r *Readings) nvml.Return {
			if !r.PageRetirement {
				return nvml.ERROR_NOT_SUPPORTED
			}
			n := r.RetiredSBE
			if cause == nvml.PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR {
				n = r.RetiredDBE
			}
			for p := 0; p < n; p++ {
				pages = append(pages, uint64(0x1000*(p+1)))
			}
			return nvml.SUCCESS
		})
		return pages, ret
	}
	d.GetRetiredPagesPendingStatusFunc = func() (v nvml.EnableState, ret nvml.Return) {
		ret = read(func(r *Readings) nvml.Return {
			if !r.PageRetirement {
				return nvml.ERROR_NOT_SUPPORTED
			}
			v = nvml.FEATURE_DISABLED
			if r.RetiredPending {
				v = nvml.FEATURE_ENABLED
			}
			return nvml.SUCCESS
		})
		return v, ret
	}
	d.GetRemappedRowsFunc = func() (corr, unc int, pending, failed bool, ret nvml.Return) {
		ret = read(func(r *Readings) nvml.Return {
			corr, unc, pending, failed = r.RowsCorrectable, r.RowsUncorrectable, r.RemapPending, r.RemapFailed
			return nvml.SUCCESS
		})
		return corr, unc, pending, failed, ret
	}
	d.GetComputeRunningProcessesFunc = func() (p []nvml.ProcessInfo, ret nvml.Return) {
		ret = read(func(r *Readings) nvml.Return { p = append(p, r.Compute...); return nvml.SUCCESS })
		return p, ret
	}
	d.GetMPSComputeRunningProcessesFunc = func() (p []nvml.ProcessInfo, ret nvml.Return) {
		ret = read(func(r *Readings) nvml.Return { p = append(p, r.MPS...); return nvml.SUCCESS })
		return p, ret
	}
	d.GetProcessUtilizationFunc = func(last uint64) (out []nvml.ProcessUtilizationSample, ret nvml.Return) {
		ret = read(func(r *Readings) nvml.Return {
			for _, s := range r.ProcessUtil {
				if s.TimeStamp > last {
					out = append(out, s)
				}
			}
			if len(out) == 0 {
				return nvml.ERROR_NOT_FOUND
			}
			return nvml.SUCCESS
		})
		return out, ret
	}
	d.GpmQueryDeviceSupportFunc = func() (nvml.GpmSupport, nvml.Return) {
		s := nvml.GpmSupport{Version: nvml.GPM_SUPPORT_VERSION}
		if f.gpmOK {
			s.IsSupportedDevice = 1
		}
		return s, nvml.SUCCESS
	}
	d.GpmSampleGetFunc = func(s nvml.GpmSample) nvml.Return {
		return f.takeGPM(i, -1, s)
	}
	d.GpmMigSampleGetFunc = func(gi int, s nvml.GpmSample) nvml.Return {
		return f.takeGPM(i, gi, s)
	}
	d.GetSupportedEventTypesFunc = func() (uint64, nvml.Return) { return nvml.EventTypeAll, nvml.SUCCESS }
	d.RegisterEventsFunc = func(mask uint64, _ nvml.EventSet) nvml.Return {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.registered[i] = mask
		return nvml.SUCCESS
	}
	d.GetMaxMigDeviceCountFunc = func() (int, nvml.Return) { return 7, nvml.SUCCESS }
	d.GetMigDeviceHandleByIndexFunc = func(idx int) (nvml.Device, nvml.Return) {
		f.mu.Lock()
		defer f.mu.Unlock()
		if d.MigMode != nvml.DEVICE_MIG_ENABLE {
			return nil, nvml.ERROR_INVALID_ARGUMENT
		}
		if idx < 0 || idx >= len(f.migs[i]) {
			return nil, nvml.ERROR_NOT_FOUND
		}
		return f.migs[i][idx].Device, nvml.SUCCESS
	}
}

func (f *Fake) takeGPM(gpu, gi int, s nvml.GpmSample) nvml.Return {
	f.mu.Lock()
	defer f.mu.Unlock()
	smp, ok := s.(*gpmSample)
	if !ok || !f.gpmOK {
		return nvml.ERROR_NOT_SUPPORTED
	}
	if f.readings[gpu].Lost {
		return nvml.ERROR_GPU_IS_LOST
	}
	f.gpmTick++
	smp.gpu, smp.gi, smp.tick = gpu, gi, f.gpmTick
	return nvml.SUCCESS
}

// fillField answers one nvmlDeviceGetFieldValues request as an unsigned
// long long, or "not supported" for fields the fake does not have.
func fillField(v *nvml.FieldValue, r *Readings) {
	var x uint64
	switch v.FieldId {
	case nvml.FI_DEV_MEMORY_TEMP:
		x = uint64(r.MemTempC)
	case nvml.FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL:
		x = r.NVLinkCRCFlit
	case nvml.FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL:
		x = r.NVLinkCRCData
	case nvml.FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL:
		x = r.NVLinkReplay
	case nvml.FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL:
		x = r.NVLinkRecovery
	case nvml.FI_DEV_PCIE_COUNT_TX_BYTES:
		x = r.PCIeTxBytes
	case nvml.FI_DEV_PCIE_COUNT_RX_BYTES:
		x = r.PCIeRxBytes
	case nvml.FI_DEV_NVLINK_THROUGHPUT_DATA_TX:
		if v.ScopeId != math.MaxUint32 {
			v.NvmlReturn = uint32(nvml.ERROR_INVALID_ARGUMENT)
			return
		}
		x = r.NVLinkTxKiB
	case nvml.FI_DEV_NVLINK_THROUGHPUT_DATA_RX:
		if v.ScopeId != math.MaxUint32 {
			v.NvmlReturn = uint32(nvml.ERROR_INVALID_ARGUMENT)
			return
		}
		x = r.NVLinkRxKiB
	default:
		v.NvmlReturn = uint32(nvml.ERROR_NOT_SUPPORTED)
		return
	}
	v.ValueType = uint32(nvml.VALUE_TYPE_UNSIGNED_LONG_LONG)
	binary.NativeEndian.PutUint64(v.Value[:], x)
	v.NvmlReturn = uint32(nvml.SUCCESS)
}

// createMIG enables MIG on a GPU and creates one GPU instance (with one
// compute instance) per profile through the mock's MIG implementation.
func (f *Fake) createMIG(gpu int, profiles []string) error {
	d := f.Devices[gpu]
	if ret, _ := d.SetMigMode(nvml.DEVICE_MIG_ENABLE); ret != nvml.SUCCESS {
		return fmt.Errorf("SetMigMode: %v", ret)
	}
	for _, name := range profiles {
		info, err := giProfile(d, name)
		if err != nil {
			return err
		}
		gi, ret := d.CreateGpuInstance(&info)
		if ret != nvml.SUCCESS {
			return fmt.Errorf("CreateGpuInstance(%s): %v", name, ret)
		}
		giInfo, _ := gi.GetInfo()
		ciProfile, ret := gi.GetComputeInstanceProfileInfo(ciProfileFor(info.SliceCount), nvml.COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
		if ret != nvml.SUCCESS {
			return fmt.Errorf("GetComputeInstanceProfileInfo(%s): %v", name, ret)
		}
		ci, ret := gi.CreateComputeInstance(&ciProfile)
		if ret != nvml.SUCCESS {
			return fmt.Errorf("CreateComputeInstance(%s): %v", name, ret)
		}
		ciInfo, _ := ci.GetInfo()
		f.addMIGDevice(gpu, d, name, int(giInfo.Id), int(ciInfo.Id), info.MemorySizeMB)
	}
	return nil
}

func (f *Fake) addMIGDevice(gpu int, parent *server.Device, profile string, gi, ci int, memMB uint64) {
	r := &Readings{
		MemUsed: memMB << 20 / 4,
		GPMPct: map[nvml.GpmMetricId]float64{
			nvml.GPM_METRIC_GRAPHICS_UTIL:   float64(70 + gi),
			nvml.GPM_METRIC_SM_UTIL:         float64(65 + gi),
			nvml.GPM_METRIC_SM_OCCUPANCY:    20,
			nvml.GPM_METRIC_ANY_TENSOR_UTIL: 10,
			nvml.GPM_METRIC_DRAM_BW_UTIL:    15,
		},
	}
	m := &MIGInstance{UUID: MIGUUID(gpu, gi), Profile: profile, GI: gi, CI: ci, Reading: r}
	md := &mock.Device{}
	md.GetUUIDFunc = func() (string, nvml.Return) { return m.UUID, nvml.SUCCESS }
	md.GetNameFunc = func() (string, nvml.Return) { return parent.Config.Name + " MIG " + profile, nvml.SUCCESS }
	md.GetGpuInstanceIdFunc = func() (int, nvml.Return) { return gi, nvml.SUCCESS }
	md.GetComputeInstanceIdFunc = func() (int, nvml.Return) { return ci, nvml.SUCCESS }
	md.IsMigDeviceHandleFunc = func() (bool, nvml.Return) { return true, nvml.SUCCESS }
	md.GetDeviceHandleFromMigDeviceHandleFunc = func() (nvml.Device, nvml.Return) { return parent, nvml.SUCCESS }
	md.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
		f.mu.Lock()
		defer f.mu.Unlock()
		if r.ProcessesUnsupported {
			return nil, nvml.ERROR_NOT_SUPPORTED
		}
		return append([]nvml.ProcessInfo(nil), r.Compute...), nvml.SUCCESS
	}
	md.GetMPSComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
		f.mu.Lock()
		defer f.mu.Unlock()
		if r.ProcessesUnsupported {
			return nil, nvml.ERROR_NOT_SUPPORTED
		}
		return append([]nvml.ProcessInfo(nil), r.MPS...), nvml.SUCCESS
	}
	md.GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) {
		f.mu.Lock()
		defer f.mu.Unlock()
		total := memMB << 20
		return nvml.Memory{Total: total, Used: r.MemUsed, Free: total - r.MemUsed}, nvml.SUCCESS
	}
	m.Device = md
	f.migs[gpu] = append(f.migs[gpu], m)
}

// giProfile finds the GPU-instance profile whose slices and memory match a
// profile name like "3g.40gb".
func giProfile(d *server.Device, name string) (nvml.GpuInstanceProfileInfo, error) {
	var slices, gb int
	if _, err := fmt.Sscanf(strings.TrimSuffix(name, "+me"), "%dg.%dgb", &slices, &gb); err != nil {
		return nvml.GpuInstanceProfileInfo{}, fmt.Errorf("MIG profile %q: %w", name, err)
	}
	media := strings.HasSuffix(name, "+me")
	for id := 0; id < nvml.GPU_INSTANCE_PROFILE_COUNT; id++ {
		info, ret := d.GetGpuInstanceProfileInfo(id)
		if ret != nvml.SUCCESS {
			continue
		}
		isMedia := id == nvml.GPU_INSTANCE_PROFILE_1_SLICE_REV1 || id == nvml.GPU_INSTANCE_PROFILE_2_SLICE_REV1
		if int(info.SliceCount) == slices && int(math.Round(float64(info.MemorySizeMB)/1024)) == gb && isMedia == media {
			return info, nil
		}
	}
	return nvml.GpuInstanceProfileInfo{}, fmt.Errorf("%s has no MIG profile %q", d.Config.Name, name)
}

func ciProfileFor(slices uint32) int {
	switch slices {
	case 1:
		return nvml.COMPUTE_INSTANCE_PROFILE_1_SLICE
	case 2:
		return nvml.COMPUTE_INSTANCE_PROFILE_2_SLICE
	case 3:
		return nvml.COMPUTE_INSTANCE_PROFILE_3_SLICE
	case 4:
		return nvml.COMPUTE_INSTANCE_PROFILE_4_SLICE
	}
	return nvml.COMPUTE_INSTANCE_PROFILE_7_SLICE
}

// RemoveMIG forgets the index-th MIG instance of a GPU, as destroying it
// with nvidia-smi would.
func (f *Fake) RemoveMIG(gpu, index int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.migs[gpu] = append(f.migs[gpu][:index:index], f.migs[gpu][index+1:]...)
}
