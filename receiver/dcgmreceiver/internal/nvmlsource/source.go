// Package nvmlsource reads NVIDIA GPUs in-process through NVML (go-nvml):
// every GPU and MIG instance, GPM profiling metrics on Hopper and newer,
// per-process memory and utilization, and XIDs from NVML's event set.
//
// It never fails to start: without the driver library it reports a
// recoverable status, logs one message naming what is missing, retries with
// backoff and returns empty scrapes until NVML can be opened.
//
// NVML is reached only through nvml.Interface (and the nvml.Device handles it
// returns), so tests run against go-nvml's mock servers.
package nvmlsource

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.opentelemetry.io/collector/component"
	"go.uber.org/zap"

	"github.com/otelcol-accel/otelcol-accel/internal/backoff"
	"github.com/otelcol-accel/otelcol-accel/internal/componenthealth"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/model"
)

// LibraryNotFoundMessage is logged once when libnvidia-ml cannot be loaded.
const LibraryNotFoundMessage = "NVIDIA driver library libnvidia-ml.so.1 not found: mount the driver's libraries into the container or use source: dcgm_exporter"

// Want says which optional, costlier reads the enabled metrics need.
type Want struct {
	Processes bool
	GPM       bool
}

// Settings configure the source.
type Settings struct {
	// Library returns the NVML entry point: nvml.New() in production, a mock
	// server in tests.
	Library  func() nvml.Interface
	Filter   model.DeviceFilter
	HostName string
	Want     Want
	Logger   *zap.Logger
	// ReportStatus receives nil when NVML is usable and the reason when not.
	ReportStatus func(error)
	// ScrapeFailed is called for each scrape while NVML is not open.
	ScrapeFailed func(context.Context)
	// OnEvent receives XIDs and other driver events as they happen.
	OnEvent func(model.Event)
	// RetryStart and RetryMax space out attempts to open NVML.
	RetryStart, RetryMax time.Duration
	// EventWait is how long one wait on the event set blocks; it bounds how
	// long Shutdown waits for the event goroutine.
	EventWait     time.Duration
	WarningPeriod time.Duration
	Now           func() time.Time
}

// Source is one NVML session.
type Source struct {
	set    Settings
	lib    nvml.Interface
	logger *zap.Logger
	warn   *componenthealth.Logger

	mu       sync.Mutex
	ready    bool
	driver   string
	gpus     []*gpu
	byHandle map[nvml.Device]*gpu
	events   nvml.EventSet
	metrics  nvml.GpmMetricsGetType // reused: it is 19 KiB

	initErr string // the last init failure that was logged
	retry   *backoff.Backoff

	stop chan struct{}
	wg   sync.WaitGroup
}

// New returns a source; Start opens NVML in the background.
func New(set Settings) *Source {
	if set.Library == nil {
		set.Library = func() nvml.Interface { return nvml.New() }
	}
	if set.Now == nil {
		set.Now = time.Now
	}
	if set.ReportStatus == nil {
		set.ReportStatus = func(error) {}
	}
	if set.ScrapeFailed == nil {
		set.ScrapeFailed = func(context.Context) {}
	}
	if set.OnEvent == nil {
		set.OnEvent = func(model.Event) {}
	}
	if set.EventWait <= 0 {
		set.EventWait = 500 * time.Millisecond
	}
	if set.Logger == nil {
		set.Logger = zap.NewNop()
	}
	warn := componenthealth.NewLogger(set.Logger, set.WarningPeriod)
	warn.SetClock(set.Now)
	return &Source{
		set:    set,
		logger: set.Logger,
		warn:   warn,
		retry:  backoff.New(set.RetryStart, set.RetryMax),
		stop:   make(chan struct{}),
	}
}

// Start opens NVML in the background and returns at once.
func (s *Source) Start(context.Context, component.Host) error {
	s.lib = s.set.Library()
	s.wg.Add(1)
	go s.run()
	return nil
}

// Shutdown stops the background work and closes NVML.
func (s *Source) Shutdown(context.Context) error {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ready {
		return nil
	}
	s.ready = false
	for _, g := range s.gpus {
		g.free()
	}
	s.gpus, s.byHandle = nil, nil
	s.closeEvents()
	if ret := s.lib.Shutdown(); ret != nvml.SUCCESS {
		return fmt.Errorf("NVML shutdown: %v", ret)
	}
	return nil
}

// Ready reports whether NVML is open (tests, gpu-check).
func (s *Source) Ready() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ready
}

func (s *Source) run() {
	defer s.wg.Done()
	for !s.open() {
		wait := s.retry.Failed(s.set.Now())
		s.logger.Debug("NVML not available yet; retrying", zap.Duration("next_attempt_in", wait))
		t := time.NewTimer(wait)
		select {
		case <-s.stop:
			t.Stop()
			return
		case <-t.C:
		}
	}
	s.watchEvents()
}

// open initializes NVML and enumerates the GPUs; false means retry later.
func (s *Source) open() bool {
	if ret := s.lib.Init(); ret != nvml.SUCCESS {
		s.initFailed(ret)
		return false
	}
	s.mu.Lock()
	s.openEvents()
	err := s.enumerate()
	if err != nil {
		s.closeEvents()
		s.mu.Unlock()
		_ = s.lib.Shutdown()
		s.initFailedErr(err)
		return false
	}
	s.ready = true
	n, driver := len(s.gpus), s.driver
	s.mu.Unlock()

	s.retry.Succeeded()
	s.set.ReportStatus(nil)
	if n == 0 {
		s.logger.Warn("NVML is available but reports no NVIDIA GPUs; nothing to collect until one appears")
	} else {
		s.logger.Info("NVML opened", zap.Int("gpus", n), zap.String("driver_version", driver))
	}
	if s.initErr != "" {
		s.initErr = ""
	}
	return true
}

// initFailed turns an NVML init error into one actionable message, logged
// the first time it is seen (and again only if the reason changes).
func (s *Source) initFailed(ret nvml.Return) {
	var msg string
	switch ret {
	case nvml.ERROR_LIBRARY_NOT_FOUND:
		msg = LibraryNotFoundMessage
	case nvml.ERROR_DRIVER_NOT_LOADED:
		msg = "NVIDIA kernel driver is not loaded (NVML: " + ret.Error() + "): load the nvidia module on the host or use source: dcgm_exporter"
	case nvml.ERROR_NO_PERMISSION:
		msg = "no permission to open the NVIDIA devices (NVML: " + ret.Error() + "): give the collector access to /dev/nvidia* or use source: dcgm_exporter"
	default:
		msg = "NVML could not be initialized (" + ret.Error() + "): check the NVIDIA driver installation or use source: dcgm_exporter"
	}
	s.initFailedErr(fmt.Errorf("%s", msg))
}

func (s *Source) initFailedErr(err error) {
	if err.Error() == s.initErr {
		return
	}
	s.initErr = err.Error()
	s.logger.Warn(err.Error())
	s.set.ReportStatus(err)
}

// Scrape reads every selected GPU and MIG instance once. Before NVML is open
// the snapshot is empty.
func (s *Source) Scrape(ctx context.Context) *model.Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := &model.Snapshot{Time: s.set.Now()}
	if !s.ready {
		s.set.ScrapeFailed(ctx)
		return snap
	}
	if n, ret := s.lib.DeviceGetCount(); ret == nvml.SUCCESS && n != len(s.gpus) {
		s.logger.Info("number of GPUs changed; enumerating again", zap.Int("before", len(s.gpus)), zap.Int("now", n))
		if err := s.enumerate(); err != nil {
			s.warnf("enumerate", "enumerating GPUs failed: %v", err)
		}
	}
	for _, g := range s.gpus {
		s.sampleGPU(g, snap)
	}
	return snap
}

// warnf logs a rate-limited warning under key.
func (s *Source) warnf(key, format string, args ...any) {
	s.warn.Warn(key, fmt.Sprintf(format, args...))
}
