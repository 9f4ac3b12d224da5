package nvmlsource

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/model"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/nvmltest"
)

type recorder struct {
	mu       sync.Mutex
	statuses []error
	events   []model.Event
}

func (r *recorder) status(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.statuses = append(r.statuses, err)
}

func (r *recorder) event(e model.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) snapshot() ([]error, []model.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]error(nil), r.statuses...), append([]model.Event(nil), r.events...)
}

func startFake(t *testing.T, f *nvmltest.Fake, mutate func(*Settings)) (*Source, *recorder) {
	t.Helper()
	rec := &recorder{}
	set := Settings{
		Library:       func() nvml.Interface { return f.Server },
		HostName:      "gpu-node-1",
		Want:          Want{Processes: true, GPM: true},
		ReportStatus:  rec.status,
		OnEvent:       rec.event,
		RetryStart:    time.Millisecond,
		RetryMax:      10 * time.Millisecond,
		EventWait:     20 * time.Millisecond,
		WarningPeriod: time.Hour,
	}
	if mutate != nil {
		mutate(&set)
	}
	s := New(set)
	require.NoError(t, s.Start(context.Background(), nil))
	t.Cleanup(func() { require.NoError(t, s.Shutdown(context.Background())) })
	require.Eventually(t, s.Ready, 10*time.Second, time.Millisecond)
	return s, rec
}

func sampleOf(t *testing.T, snap *model.Snapshot, hwID string) model.Sample {
	t.Helper()
	for _, s := range snap.Samples {
		if s.HWID == hwID {
			return s
		}
	}
	t.Fatalf("no sample for %s", hwID)
	return model.Sample{}
}

// Without libnvidia-ml the source starts, says once what is missing, keeps
// retrying quietly, and scrapes nothing.
func TestMissingLibraryOneMessageAndRetries(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	rec := &recorder{}
	s := New(Settings{
		Library:      func() nvml.Interface { return nvml.New(nvml.WithLibraryPath("/nonexistent/libnvidia-ml.so.1")) },
		Logger:       zap.New(core),
		ReportStatus: rec.status,
		RetryStart:   time.Millisecond, RetryMax: 2 * time.Millisecond,
		WarningPeriod: time.Hour,
	})
	require.NoError(t, s.Start(context.Background(), nil))
	require.Eventually(t, func() bool {
		return logs.FilterMessage("NVML not available yet; retrying").Len() >= 5
	}, 10*time.Second, time.Millisecond)

	snap := s.Scrape(context.Background())
	assert.Empty(t, snap.Samples)
	require.NoError(t, s.Shutdown(context.Background()))

	warnings := logs.FilterLevelExact(zapcore.WarnLevel).All()
	require.Len(t, warnings, 1, "one message however many retries")
	assert.Equal(t, LibraryNotFoundMessage, warnings[0].Message)
	statuses, _ := rec.snapshot()
	require.Len(t, statuses, 1)
	assert.EqualError(t, statuses[0], LibraryNotFoundMessage)
	assert.False(t, s.Ready())
}

// A driver that appears later (the library is mounted, the module loaded)
// is picked up by the retries and reported OK.
func TestDriverAppearsLater(t *testing.T) {
	f, err := nvmltest.New(nvmltest.Options{})
	require.NoError(t, err)
	var mu sync.Mutex
	attempts := 0
	f.Server.InitFunc = func() nvml.Return {
		mu.Lock()
		defer mu.Unlock()
		attempts++
		if attempts < 3 {
			return nvml.ERROR_DRIVER_NOT_LOADED
		}
		return nvml.SUCCESS
	}
	core, logs := observer.New(zapcore.InfoLevel)
	s, rec := startFake(t, f, func(set *Settings) { set.Logger = zap.New(core) })
	assert.Len(t, s.Scrape(context.Background()).Samples, 8)
	statuses, _ := rec.snapshot()
	require.Len(t, statuses, 2)
	assert.ErrorContains(t, statuses[0], "NVIDIA kernel driver is not loaded")
	assert.NoError(t, statuses[1])
	assert.Equal(t, 1, logs.FilterLevelExact(zapcore.WarnLevel).Len())
	assert.Equal(t, 1, logs.FilterMessage("NVML opened").Len())
}

func TestScrapeH100(t *testing.T) {
	f, err := nvmltest.New(nvmltest.Options{Model: "h100"})
	require.NoError(t, err)
	f.Update(1, func(r *nvmltest.Readings) {
		r.MPS = []nvml.ProcessInfo{{Pid: 2001, UsedGpuMemory: 3 << 30, GpuInstanceId: 0xFFFFFFFF}, {Pid: 1001, UsedGpuMemory: 9 << 30, GpuInstanceId: 0xFFFFFFFF}}
		r.ThrottleMask = 0x40 | 0x1 // HW thermal slowdown, idle
		r.NVLinkCRCFlit, r.NVLinkCRCData = 2, 3
	})
	s, _ := startFake(t, f, nil)

	first := s.Scrape(context.Background())
	require.Len(t, first.Samples, 8)
	g0 := sampleOf(t, first, nvmltest.UUID(0))
	assert.False(t, g0.SMActive.OK, "GPM needs two samples: nothing on the first scrape")
	// The driver keeps taking per-process utilization samples.
	f.Update(1, func(r *nvmltest.Readings) {
		r.ProcessUtil = append(r.ProcessUtil,
			nvml.ProcessUtilizationSample{Pid: 1001, TimeStamp: 3_000_000, SmUtil: 30},
			nvml.ProcessUtilizationSample{Pid: 1001, TimeStamp: 4_000_000, SmUtil: 70})
	})

	snap := s.Scrape(context.Background())
	require.Len(t, snap.Samples, 8)
	g := sampleOf(t, snap, nvmltest.UUID(1))
	assert.Equal(t, 1, g.Index)
	assert.Equal(t, "NVIDIA H100 80GB HBM3", g.Model)
	assert.Equal(t, "550.54.15", g.DriverVersion)
	assert.Equal(t, "00000000:28:00.0", g.PCIBusID)
	assert.Equal(t, "gpu-node-1", g.HostName)
	assert.Equal(t, accelschema.PartitionNone, g.PartitionType)
	assert.Equal(t, 1.0, g.Share)
	assert.Equal(t, model.Of(0.51), g.GPUUtil)
	assert.Equal(t, model.Of(0.02), g.DecoderUtil)
	assert.Equal(t, model.Of(float64(11<<30)), g.MemUsed)
	assert.Equal(t, model.Of(float64(81920<<20)), g.MemTotal)
	assert.Equal(t, model.Of(301), g.Power, "mW→W")
	assert.Equal(t, model.Of(1_001_000), g.Energy, "mJ→J")
	assert.Equal(t, model.Of(41), g.TempGPU)
	assert.Equal(t, model.Of(46), g.TempMemory, "memory temperature from field values")
	assert.Equal(t, model.Of(1980e6), g.ClockSM)
	assert.Equal(t, model.Of(1), g.ThrottleActive[model.ThrottleThermal])
	assert.Equal(t, model.Of(1), g.ThrottleActive[model.ThrottleLowUtil])
	assert.Equal(t, model.Of(0), g.ThrottleActive[model.ThrottleSWPowerCap])
	assert.Equal(t, model.Of(2.5), g.ThrottleTime[model.ThrottlePower], "ns→s")
	assert.False(t, g.ThrottleTime[model.ThrottleSyncBoost].OK, "unsupported policy is absent")
	assert.Equal(t, model.Of(1), g.Errors[model.ErrECCCorrected])
	assert.Equal(t, model.Of(5), g.Errors[model.ErrNVLinkCRC], "flit + data CRC")
	assert.Equal(t, model.Of(1024*1024), g.LinkRate[model.LinkPCIe][model.DirTransmit], "KB/s→By/s")
	assert.Equal(t, model.Of(float64(1<<30)), g.LinkBytes[model.LinkPCIe][model.DirTransmit])
	assert.Equal(t, model.Of(float64(2<<30)), g.LinkBytes[model.LinkNVLink][model.DirReceive], "KiB counter→By")
	assert.Equal(t, model.Of(0), g.RemapPending)
	assert.False(t, g.RetirementPending.OK, "Hopper remaps rows instead of retiring pages")
	assert.False(t, g.RetiredPages[model.RetiredSingleBit].OK)
	assert.Equal(t, model.Of(0.6), g.GREngineActive, "GPM percent→ratio")
	assert.Equal(t, model.Of(0.55), g.SMActive)
	assert.Equal(t, model.Of(0.3), g.SMOccupancy)
	assert.Equal(t, model.Of(0.25), g.TensorActive)
	assert.Equal(t, model.Of(0.4), g.DRAMActive)
	require.Len(t, g.Processes, 2)
	assert.Equal(t, model.Process{PID: 1001, MemBytes: model.Of(float64(9 << 30)), SMUtil: model.Of(0.5)}, g.Processes[0],
		"a compute process that is also an MPS client counts once; SM utilization averages its samples")
	assert.Equal(t, model.Process{PID: 2001, MemBytes: model.Of(float64(3 << 30))}, g.Processes[1])

	// The third scrape reads only newer utilization samples: none here.
	snap = s.Scrape(context.Background())
	assert.False(t, sampleOf(t, snap, nvmltest.UUID(1)).Processes[0].SMUtil.OK)
}

func TestMIGInstancesAreResources(t *testing.T) {
	f, err := nvmltest.New(nvmltest.Options{Model: "h100", MIG: map[int][]string{0: {"3g.40gb", "1g.10gb", "1g.10gb"}}})
	require.NoError(t, err)
	insts := f.MIG(0)
	require.Len(t, insts, 3)
	// Each instance lists its own processes; the third one's driver does
	// not answer on MIG handles, so the GPU's list (with GPU-instance ids)
	// is split instead.
	f.UpdateMIG(0, insts[0].GI, func(r *nvmltest.Readings) {
		r.Compute = []nvml.ProcessInfo{{Pid: 7002, UsedGpuMemory: 2 << 30, GpuInstanceId: uint32(insts[0].GI), ComputeInstanceId: 0}}
	})
	f.UpdateMIG(0, insts[1].GI, func(r *nvmltest.Readings) {
		r.MPS = []nvml.ProcessInfo{{Pid: 7001, UsedGpuMemory: 1 << 30, GpuInstanceId: uint32(insts[1].GI), ComputeInstanceId: 0}}
	})
	f.UpdateMIG(0, insts[2].GI, func(r *nvmltest.Readings) { r.ProcessesUnsupported = true })
	f.Update(0, func(r *nvmltest.Readings) {
		r.Compute = []nvml.ProcessInfo{
			{Pid: 7001, UsedGpuMemory: 1 << 30, GpuInstanceId: uint32(insts[1].GI), ComputeInstanceId: 0},
			{Pid: 7002, UsedGpuMemory: 2 << 30, GpuInstanceId: uint32(insts[0].GI), ComputeInstanceId: 0},
			{Pid: 7003, UsedGpuMemory: 3 << 30, GpuInstanceId: uint32(insts[2].GI), ComputeInstanceId: 0},
		}
	})
	s, _ := startFake(t, f, nil)
	s.Scrape(context.Background())
	snap := s.Scrape(context.Background())
	require.Len(t, snap.Samples, 8+3)

	p := sampleOf(t, snap, nvmltest.UUID(0))
	assert.False(t, p.GPUUtil.OK, "utilization counters are not available with MIG on")
	assert.False(t, p.SMActive.OK, "GPM is read per instance with MIG on")
	assert.Empty(t, p.Processes, "processes go to their instance")
	assert.True(t, p.Power.OK, "device-level readings stay on the GPU")
	assert.True(t, p.Partitioned)
	assert.False(t, p.MemUsed.OK, "memory use is the instances': the GPU does not repeat it")
	assert.False(t, p.MemUtil.OK)
	assert.Equal(t, model.Of(float64(f.Devices[0].MemoryInfo.Total)), p.MemTotal, "the GPU's own memory size stays")

	big := sampleOf(t, snap, insts[0].UUID)
	assert.Equal(t, accelschema.PartitionMIG, big.PartitionType)
	assert.Equal(t, nvmltest.UUID(0), big.Parent)
	assert.Equal(t, "3g.40gb", big.Profile)
	assert.Equal(t, insts[0].GI, big.GPUInstanceID)
	assert.Equal(t, insts[0].CI, big.ComputeInstanceID)
	assert.Equal(t, "0", big.PartitionID)
	assert.InDelta(t, 0.5, big.Share, 1e-12)
	assert.Equal(t, model.Of(float64(40960<<20)), big.MemTotal)
	assert.Equal(t, model.Of(0.7), big.GREngineActive)
	assert.Equal(t, []model.Process{{PID: 7002, MemBytes: model.Of(float64(2 << 30))}}, big.Processes)
	assert.Equal(t, 0, big.Index, "the index of its GPU")
	assert.False(t, big.Power.OK || big.TempGPU.OK || big.Errors[model.ErrECCCorrected].OK, "no device reading on an instance")

	small := sampleOf(t, snap, insts[1].UUID)
	assert.InDelta(t, 1.0/7, small.Share, 1e-12)
	assert.Equal(t, []model.Process{{PID: 7001, MemBytes: model.Of(float64(1 << 30))}}, small.Processes, "MPS clients count")
	assert.Equal(t, []model.Process{{PID: 7003, MemBytes: model.Of(float64(3 << 30))}}, sampleOf(t, snap, insts[2].UUID).Processes,
		"from the GPU's list, by GPU-instance id")

	// MIG layout changes at run time: a destroyed instance disappears.
	f.Update(0, func(*nvmltest.Readings) {})
	destroyMIG(t, f, 0, 2)
	snap = s.Scrape(context.Background())
	assert.Len(t, snap.Samples, 8+2)
}

// destroyMIG makes the fake forget a MIG instance, as nvidia-smi mig -dgi
// would.
func destroyMIG(t *testing.T, f *nvmltest.Fake, gpu, index int) {
	t.Helper()
	f.RemoveMIG(gpu, index)
}

func TestA100HasNoGPM(t *testing.T) {
	f, err := nvmltest.New(nvmltest.Options{Model: "a100", MIG: map[int][]string{2: {"1g.5gb"}}})
	require.NoError(t, err)
	s, _ := startFake(t, f, nil)
	s.Scrape(context.Background())
	snap := s.Scrape(context.Background())
	require.Len(t, snap.Samples, 9)
	for _, smp := range snap.Samples {
		assert.False(t, smp.SMActive.OK, smp.HWID)
	}
	inst := sampleOf(t, snap, f.MIG(2)[0].UUID)
	assert.Equal(t, "1g.5gb", inst.Profile)
	assert.InDelta(t, 1.0/7, inst.Share, 1e-12)
	assert.Equal(t, f.Devices[2].Config.Name, inst.Model, "a MIG instance carries its GPU's model")
}

func TestLostGPU(t *testing.T) {
	f, err := nvmltest.New(nvmltest.Options{})
	require.NoError(t, err)
	s, _ := startFake(t, f, nil)
	f.Update(3, func(r *nvmltest.Readings) { r.Lost = true })
	snap := s.Scrape(context.Background())
	require.Len(t, snap.Samples, 8)
	lost := sampleOf(t, snap, nvmltest.UUID(3))
	assert.True(t, lost.Lost)
	assert.False(t, lost.Power.OK)
	assert.Equal(t, 3, lost.Index, "identity survives")
	assert.False(t, sampleOf(t, snap, nvmltest.UUID(2)).Lost)
}

func TestEventsReachTheirDevice(t *testing.T) {
	f, err := nvmltest.New(nvmltest.Options{MIG: map[int][]string{5: {"2g.20gb"}}})
	require.NoError(t, err)
	s, rec := startFake(t, f, nil)
	s.Scrape(context.Background()) // learns the MIG instances
	assert.Equal(t, uint64(watchedEvents), f.Registered(0))

	gi := f.MIG(5)[0].GI
	f.InjectXID(2, 79, -1)
	f.InjectXID(5, 31, gi)
	f.InjectRecoveryAction(4, 1)
	require.Eventually(t, func() bool { _, ev := rec.snapshot(); return len(ev) == 3 }, 10*time.Second, time.Millisecond)
	_, events := rec.snapshot()
	assert.Equal(t, model.EventXID, events[0].Kind)
	assert.Equal(t, 79, events[0].Code)
	assert.Equal(t, nvmltest.UUID(2), events[0].Device.HWID)
	assert.Equal(t, f.MIG(5)[0].UUID, events[1].Device.HWID, "an XID in a MIG instance belongs to that instance")
	assert.Equal(t, 31, events[1].Code)
	assert.Equal(t, model.EventRecoveryAction, events[2].Kind)
	assert.Equal(t, 1, events[2].Code)
}

func TestFilterAndWants(t *testing.T) {
	f, err := nvmltest.New(nvmltest.Options{MIG: map[int][]string{6: {"1g.10gb", "1g.10gb"}}})
	require.NoError(t, err)
	filter, err := model.ParseDeviceFilter([]string{"1", nvmltest.UUID(4), nvmltest.MIGUUID(6, f.MIG(6)[1].GI)})
	require.NoError(t, err)
	s, _ := startFake(t, f, func(set *Settings) {
		set.Filter = filter
		set.Want = Want{}
	})
	s.Scrape(context.Background())
	snap := s.Scrape(context.Background())
	var got []string
	for _, smp := range snap.Samples {
		got = append(got, smp.HWID)
		assert.Empty(t, smp.Processes, "process metrics disabled: not read")
		assert.False(t, smp.SMActive.OK, "GPM metrics disabled: not read")
	}
	assert.Equal(t, []string{nvmltest.UUID(1), nvmltest.UUID(4), nvmltest.MIGUUID(6, f.MIG(6)[1].GI)}, got)
}

func TestShutdownClosesNVML(t *testing.T) {
	f, err := nvmltest.New(nvmltest.Options{})
	require.NoError(t, err)
	s := New(Settings{Library: func() nvml.Interface { return f.Server }, Want: Want{GPM: true}, EventWait: 10 * time.Millisecond})
	require.NoError(t, s.Start(context.Background(), nil))
	require.Eventually(t, s.Ready, 10*time.Second, time.Millisecond)
	s.Scrape(context.Background())
	require.NoError(t, s.Shutdown(context.Background()))
	inits, shutdowns, freed := f.Sessions()
	assert.Equal(t, 1, inits)
	assert.Equal(t, 1, shutdowns)
	assert.True(t, freed, "event set freed")
	assert.Empty(t, s.Scrape(context.Background()).Samples)
	require.NoError(t, s.Shutdown(context.Background()), "idempotent")
}

func TestFieldValueDecoding(t *testing.T) {
	var v nvml.FieldValue
	v.ValueType = uint32(nvml.VALUE_TYPE_SIGNED_INT)
	v.Value = [8]byte{0xfe, 0xff, 0xff, 0xff}
	got, ok := FieldValueFloat(v)
	assert.True(t, ok)
	assert.Equal(t, -2.0, got)
	v.ValueType = uint32(nvml.VALUE_TYPE_COUNT)
	_, ok = FieldValueFloat(v)
	assert.False(t, ok)
}

// MIG mode on with no GPU instance created: the GPU is still one resource
// with what the board measures and its memory size; the memory use and
// utilization NVML has no instance to give stay absent rather than being
// counted on the GPU.
func TestMIGModeWithoutInstances(t *testing.T) {
	f, err := nvmltest.New(nvmltest.Options{Model: "a100", MIG: map[int][]string{3: {}}})
	require.NoError(t, err)
	s, _ := startFake(t, f, nil)
	snap := s.Scrape(context.Background())
	require.Len(t, snap.Samples, 8, "no instance, no instance resource")
	g := sampleOf(t, snap, nvmltest.UUID(3))
	assert.True(t, g.Partitioned)
	assert.True(t, g.Power.OK)
	assert.True(t, g.MemTotal.OK)
	assert.False(t, g.MemUsed.OK)
	assert.False(t, g.GPUUtil.OK)
	whole := sampleOf(t, snap, nvmltest.UUID(2))
	assert.False(t, whole.Partitioned)
	assert.True(t, whole.MemUsed.OK, "a whole GPU keeps its memory use")
}
