package acceleratorremediationexporter

import (
	"sort"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"

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
	// Readings: at most seriesPerDevice series of pointsPerSeries points
	// each (16 bytes a point), so 10,000 devices hold at most ~150 MiB,
	// and only when escalation is on.
	seriesPerDevice = 32
	pointsPerSeries = 30
)

// evidence keeps each device's recent health events and the changes seen
// on it (driver version), for the incident bundle.
type evidence struct {
	mu          sync.Mutex
	devices     map[string]*deviceEvidence
	keepMetrics bool
}

type deviceEvidence struct {
	events  []escalate.Event
	changes []escalate.Change
	driver  string
	series  map[string]*series
}

// series is one metric series' recent points, oldest first.
type series struct {
	metric string
	attrs  map[string]string
	points []reading
}

type reading struct {
	t int64 // unix nanoseconds
	v float64
}

// newEvidence keeps metric readings only when keepMetrics (an escalation
// webhook is configured: nothing else reads them).
func newEvidence(keepMetrics bool) *evidence {
	return &evidence{devices: map[string]*deviceEvidence{}, keepMetrics: keepMetrics}
}

// device returns the device's evidence, making room when needed. The
// caller holds ev.mu.
func (ev *evidence) device(s plan.Subject) *deviceEvidence {
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
	return d
}

// addMetrics keeps the recent number points of every device resource.
func (ev *evidence) addMetrics(md pmetric.Metrics) {
	if !ev.keepMetrics {
		return
	}
	ev.mu.Lock()
	defer ev.mu.Unlock()
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		res := rms.At(i).Resource().Attributes()
		if str(res, accelschema.AttrHWID) == "" {
			continue
		}
		subj := subjectOf(res)
		d := ev.device(subj)
		sms := rms.At(i).ScopeMetrics()
		if at, ok := firstTime(sms); ok {
			d.noteDriver(subj.Driver, at)
		}
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				m := ms.At(k)
				var dps pmetric.NumberDataPointSlice
				switch m.Type() {
				case pmetric.MetricTypeGauge:
					dps = m.Gauge().DataPoints()
				case pmetric.MetricTypeSum:
					dps = m.Sum().DataPoints()
				default:
					continue
				}
				for l := 0; l < dps.Len(); l++ {
					d.addPoint(m.Name(), dps.At(l))
				}
			}
		}
	}
}

func (d *deviceEvidence) addPoint(name string, dp pmetric.NumberDataPoint) {
	attrs := map[string]string{}
	key := name
	for k, v := range dp.Attributes().All() {
		attrs[k] = v.AsString()
	}
	keys := make([]string, 0, len(attrs))
	for k := range attrs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		key += "|" + k + "=" + attrs[k]
	}
	if d.series == nil {
		d.series = map[string]*series{}
	}
	s, ok := d.series[key]
	if !ok {
		if len(d.series) >= seriesPerDevice {
			return // the first series seen keep their place
		}
		s = &series{metric: name, attrs: attrs}
		d.series[key] = s
	}
	v := dp.DoubleValue()
	if dp.ValueType() == pmetric.NumberDataPointValueTypeInt {
		v = float64(dp.IntValue())
	}
	s.points = append(s.points, reading{t: int64(dp.Timestamp()), v: v})
	if len(s.points) > pointsPerSeries {
		s.points = s.points[len(s.points)-pointsPerSeries:]
	}
}

func deviceKey(s plan.Subject) string { return s.Node + "|" + s.InstanceID + "|" + s.DeviceID }

func (ev *evidence) add(s plan.Subject, lr plog.LogRecord, name string) {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	d := ev.device(s)
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
	d.noteDriver(s.Driver, at)
}

// noteDriver records a change of the device's driver version, seen on its
// health events or its metrics' resource (whichever comes first).
func (d *deviceEvidence) noteDriver(driver string, at time.Time) {
	if driver == "" {
		return
	}
	if d.driver != "" && driver != d.driver {
		d.changes = append(d.changes, escalate.Change{Time: at, What: accelschema.AttrHWDriverVersion, From: d.driver, To: driver})
		if len(d.changes) > changesPerDevice {
			d.changes = d.changes[len(d.changes)-changesPerDevice:]
		}
	}
	d.driver = driver
}

func (ev *evidence) of(s plan.Subject, since time.Time) escalate.Evidence {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	d, ok := ev.devices[deviceKey(s)]
	if !ok {
		return escalate.Evidence{}
	}
	var out escalate.Evidence
	for _, e := range d.events {
		if !e.Time.Before(since) {
			out.Events = append(out.Events, e)
		}
	}
	for _, c := range d.changes {
		if !c.Time.Before(since) {
			out.Changes = append(out.Changes, c)
		}
	}
	keys := make([]string, 0, len(d.series))
	for k := range d.series {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		sr := d.series[k]
		m := escalate.Series{Metric: sr.metric, Attributes: sr.attrs}
		for _, p := range sr.points {
			if t := time.Unix(0, p.t).UTC(); !t.Before(since) {
				m.Points = append(m.Points, escalate.Point{Time: t, Value: p.v})
			}
		}
		if len(m.Points) > 0 {
			out.Metrics = append(out.Metrics, m)
		}
	}
	return out
}

// firstTime is the time of the first number point of a resource's metrics.
func firstTime(sms pmetric.ScopeMetricsSlice) (time.Time, bool) {
	for j := 0; j < sms.Len(); j++ {
		ms := sms.At(j).Metrics()
		for k := 0; k < ms.Len(); k++ {
			var dps pmetric.NumberDataPointSlice
			switch m := ms.At(k); m.Type() {
			case pmetric.MetricTypeGauge:
				dps = m.Gauge().DataPoints()
			case pmetric.MetricTypeSum:
				dps = m.Sum().DataPoints()
			default:
				continue
			}
			if dps.Len() > 0 {
				return dps.At(0).Timestamp().AsTime().UTC(), true
			}
		}
	}
	return time.Time{}, false
}
