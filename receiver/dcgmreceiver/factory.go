package dcgmreceiver

import (
	"context"
	"os"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/receiver"

	"github.com/otelcol-accel/otelcol-accel/internal/sharedcomponent"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/metadata"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/mps"
)

// outside is the boundary to the world the receiver observes: tests replace
// it with go-nvml's mock servers, a fake MPS control client and a fixed
// clock.
type outside struct {
	// nvml opens the NVML library, from libraryPath when it is set.
	nvml     func(libraryPath string) nvml.Interface
	mpsRun   mps.Runner
	hostname func() (string, error)
	getenv   func(string) string
	now      func() time.Time
	// retryStart is the first wait before opening NVML again.
	retryStart time.Duration
}

func realWorld() outside {
	return outside{
		nvml:       openNVML,
		mpsRun:     mps.ExecRunner,
		hostname:   os.Hostname,
		getenv:     os.Getenv,
		now:        time.Now,
		retryStart: 5 * time.Second,
	}
}

// openNVML loads libnvidia-ml by its soname, or from an absolute path: in a
// container the host's driver library is mounted somewhere the loader does
// not search, and LD_LIBRARY_PATH would also swap in the host's libc.
func openNVML(libraryPath string) nvml.Interface {
	if libraryPath == "" {
		return nvml.New()
	}
	return nvml.New(nvml.WithLibraryPath(libraryPath))
}

// NewFactory returns the dcgm receiver's factory.
func NewFactory() receiver.Factory {
	return newFactory(realWorld())
}

func newFactory(w outside) receiver.Factory {
	instances := sharedcomponent.NewMap[*dcgmReceiver]()
	get := func(set receiver.Settings, cfg component.Config) (*sharedcomponent.Component[*dcgmReceiver], error) {
		return instances.LoadOrStore(set.ID, func() (*dcgmReceiver, error) {
			return newReceiver(set, cfg.(*Config), w)
		})
	}
	return receiver.NewFactory(
		metadata.Type,
		func() component.Config { return createDefaultConfig() },
		receiver.WithMetrics(func(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Metrics) (receiver.Metrics, error) {
			c, err := get(set, cfg)
			if err != nil {
				return nil, err
			}
			c.Unwrap().setMetrics(next)
			return c, nil
		}, metadata.MetricsStability),
		receiver.WithLogs(func(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Logs) (receiver.Logs, error) {
			c, err := get(set, cfg)
			if err != nil {
				return nil, err
			}
			c.Unwrap().setLogs(next)
			return c, nil
		}, metadata.LogsStability),
	)
}
