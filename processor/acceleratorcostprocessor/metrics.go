package acceleratorcostprocessor

import (
	"context"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-accel/otelcol-accel/internal/pricing"
)

// observation is one device or partition resource of the batch.
type observation struct {
	rm    pmetric.ResourceMetrics
	id    identity
	sg    signals
	row   pricing.Row
	match pricing.Match
	// device: for a consumer copy of a shared device, the signals of the
	// device's own resource in the batch (joinDevices); nil otherwise.
	device *signals
}

// processMetrics adds price, cost, waste and findings counts to every device
// or partition resource of the batch. It never fails the batch: a resource
// it cannot price passes through unchanged.
func (p *costProcessor) processMetrics(ctx context.Context, md pmetric.Metrics) (pmetric.Metrics, error) {
	w := p.prices.Load()
	if w == nil {
		return md, nil
	}
	table := w.Table()
	now := p.now()
	var out []finding

	p.mu.Lock()
	p.batch++
	obs := p.scratch[:0]
	rms := md.ResourceMetrics()
	n := rms.Len()
	// Pass 1: what every resource is, the partition layout of every device
	// and the serving pods' signals, so that pass 2 sees the whole batch.
	for i := 0; i < n; i++ {
		rm := rms.At(i)
		sg := readSignals(rm)
		if sg.costed {
			continue
		}
		id := p.readIdentity(rm.Resource().Attributes())
		if id.hwID == "" {
			if sg.t == 0 {
				sg.t = pcommon.NewTimestampFromTime(now)
			}
			if sg.hasKV || sg.hasWaiting || sg.hasRunning {
				p.recordPod(id, sg, now)
			}
			continue
		}
		row, match := table.Lookup(id.hostType, id.region, id.model)
		obs = append(obs, observation{rm: rm, id: id, sg: sg, row: row, match: match})
	}
	p.joinDevices(obs)
	for i := range obs {
		if obs[i].sg.t == 0 {
			obs[i].sg.t = pcommon.NewTimestampFromTime(now)
		}
		p.recordDevice(&obs[i], now)
	}
	// Pass 2: accrue and emit.
	for i := range obs {
		out = p.accrue(&obs[i], table, now, out)
	}
	p.emitRemainders(md, now)
	p.expire(now)
	clear(obs)
	p.scratch = obs[:0]
	p.touched = p.touched[:0]
	p.mu.Unlock()

	p.deliver(ctx, out, now)
	return md, nil
}
