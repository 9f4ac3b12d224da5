package sharedcomponent

import (
	"context"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
)

// ConsumeLogsAll hands ld to every logs pipeline a shared processor emits
// into (its findings, raised in the metrics pipeline): each but the last
// gets its own copy, since a consumer may change what it is given. It
// returns how many refused them, with the last refusal, for the caller to
// report in its own words.
func ConsumeLogsAll(ctx context.Context, consumers []consumer.Logs, ld plog.Logs) (refused int, lastErr error) {
	for i, c := range consumers {
		data := ld
		if i < len(consumers)-1 {
			data = plog.NewLogs()
			ld.CopyTo(data)
		}
		if err := c.ConsumeLogs(ctx, data); err != nil {
			refused, lastErr = refused+1, err
		}
	}
	return refused, lastErr
}
