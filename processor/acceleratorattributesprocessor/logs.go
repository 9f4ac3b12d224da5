package acceleratorattributesprocessor

import (
	"context"

	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/index"
)

// processLogs enriches the resources of health events in place. A record
// about a shared device is not copied per holder (an XID is one event, and
// copying it would count it once per pod): it describes the device, as the
// device's own metrics resource does — the node and the device's
// allocation state (devicePart), no holder. A record that names a process
// gets that process's pod on the record itself (processPods).
func (p *attributesProcessor) processLogs(_ context.Context, ld plog.Logs) (plog.Logs, error) {
	ix := p.idx.Load()
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		rl := rls.At(i)
		attrs := rl.Resource().Attributes()
		id, isDevice := identityOf(attrs)
		if !isDevice {
			if !namesPod(attrs) {
				// The node's resource: an event for a bus id no source knows.
				p.processPods(ix, nil, rl)
			}
			p.enrichPodResource(ix, attrs)
			continue
		}
		e, outcome := ix.Lookup(id)
		if outcome == index.Unknown {
			if claim, ok := claimHint(ix, attrs); ok {
				e, outcome = claim, index.Held
			}
		}
		var holders *index.Entry
		if outcome == index.Held {
			holders = e
		}
		p.processPods(ix, holders, rl)
		if outcome == index.Held && e.Shared() {
			_, state := devicePart(e)
			clearHolder(attrs)
			attrs.PutStr(accelschema.AttrAllocationState, state)
			insertAll(attrs, ix.NodeAttrs)
			continue
		}
		p.enrichDevice(ix, attrs, id, e, outcome)
	}
	return ld, nil
}
