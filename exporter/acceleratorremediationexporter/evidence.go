package acceleratorremediationexporter

import (
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/escalate"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/plan"
	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

// Bounds of what is kept for incident bundles: memory grows with devices,
// never with time.
const (
	eventsPerDevice  = 20
	changesPerDevice = 10
	maxDevices       = 10_000
)

// evidence keeps each device's recent health events and the changes seen
// on it (driver version), for the incident bundle.
type evidence struct {
	mu      sync.Mutex
	devices map[string]*deviceEvidence
}

type deviceEvidence struct {
	events  []escalate.Event
	changes []escalate.Change
	driver  string
}

func newEvidence() *evidence { return &evidence{devices: map[string]*deviceEvidence{}} }

func deviceKey(s plan.Subject) string { return s.Node + "|" + s.InstanceID + "|" + s.DeviceID }

func (ev *evidence) add(s plan.Subject, lr plog.LogRecord, name string) {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	key := deviceKey(s)
	d, ok := ev.devices[key]
	if !ok {
		if len(ev.devices) >= maxDevices {
			for k := range ev.devices { // drop any one: bounded, not ordered
				delete(ev.devices, k)
				break
			}
		}
		d = &deviceEvidence{}
		ev.devices[key] = d
	}
	at := lr.Timestamp().AsTime().UTC()
	d.events = append(d.events, escalate.Event{
		Time: at, Name: name,
		Description: str(lr.Attributes(), accelschema.AttrHealthDescription),
		FailureMode: str(lr.Attributes(), accelschema.AttrHealthFailureMode),
		Action:      str(lr.Attributes(), accelschema.AttrHealthAction),
		XID:         int(intOr(lr.Attributes(), accelschema.AttrXID, 0)),
	})
	if len(d.events) > eventsPerDevice {
		d.events = d.events[len(d.events)-eventsPerDevice:]
	}
	if s.Driver != "" && d.driver != "" && s.Driver != d.driver {
		d.changes = append(d.changes, escalate.Change{Time: at, What: accelschema.AttrHWDriverVersion, From: d.driver, To: s.Driver})
		if len(d.changes) > changesPerDevice {
			d.changes = d.changes[len(d.changes)-changesPerDevice:]
		}
	}
	if s.Driver != "" {
		d.driver = s.Driver
	}
}

func (ev *evidence) of(s plan.Subject, since time.Time) ([]escalate.Event, []escalate.Change) {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	d, ok := ev.devices[deviceKey(s)]
	if !ok {
		return nil, nil
	}
	var events []escalate.Event
	for _, e := range d.events {
		if !e.Time.Before(since) {
			events = append(events, e)
		}
	}
	return events, append([]escalate.Change(nil), d.changes...)
}
