package dcgmreceiver

import (
	"context"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// consumerFunc adapts the receiver's forwarding function to
// consumer.Metrics: the scraper controller needs its consumer when it is
// built, before the metrics pipeline (if any) has handed the receiver one.
func consumerFunc(f func(context.Context, pmetric.Metrics) error) consumer.Metrics {
	c, _ := consumer.NewMetrics(f)
	return c
}
