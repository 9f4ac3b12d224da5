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
	nvml     func() nvml.Interface
	mpsRun   mps.Runner
	hostname func() (string, error)
	getenv   func(string) string
	now      func() time.Time
	// retryStart is the first wait before opening NVML again.
	retryStart time.Duration
}

func realWorld() outside {
	return outside{
		nvml:       func() nvml.Interface { return nvml.New() },
		mpsRun:     mps.ExecRunner,
		hostname:   os.Hostname,
		getenv:     os.Getenv,
		now:        time.Now,
		retryStart: 5 * time.Second,
	}
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
