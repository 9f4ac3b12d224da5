package lifecycle

import (
	"regexp"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

// Pull is one of the kubelet's Pulled events about a pod.
type Pull struct {
	At time.Time
	// Duration is the pull's own time as the message states it; 0 when
	// the image was already present.
	Duration time.Duration
	// Measured is false for a message this package cannot read.
	Measured bool
}

// pulledIn reads `Successfully pulled image "x" in 3.2s (3.2s including
// waiting)…` (kubelet 1.28+) and the older `… in 3.2s`; the duration is
// Go's, as the kubelet formats it.
var pulledIn = regexp.MustCompile(`^Successfully pulled image "[^"]*" in ([0-9][0-9.]*[a-zµ]+(?:[0-9.]+[a-zµ]+)*)`)

// ParsePull reads a Pulled event.
func ParsePull(e *corev1.Event) Pull {
	p := Pull{At: EventTime(e)}
	switch {
	case strings.Contains(e.Message, "already present on machine"):
		p.Measured = true
	default:
		if m := pulledIn.FindStringSubmatch(e.Message); m != nil {
			if d, err := time.ParseDuration(m[1]); err == nil {
				p.Duration, p.Measured = d, true
			}
		}
	}
	return p
}

// EventTime is when an event last happened, as the API's fields allow.
func EventTime(e *corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	case !e.FirstTimestamp.IsZero():
		return e.FirstTimestamp.Time
	}
	return e.CreationTimestamp.Time
}

// ColdStart is one pod's way from creation to Ready.
type ColdStart struct {
	Created, Scheduled, Pulled, Started, Ready time.Time
	// FirstRequest is when the inference receiver saw the first finished
	// request (zero when unknown).
	FirstRequest time.Time
	// PullTime is the pulls' own time summed; HasPulls says Pulled events
	// were seen (a pod whose images were present has HasPulls and 0).
	PullTime time.Duration
	HasPulls bool
	// Phases are the durations by accelschema phase, in ColdStartPhases
	// order; a phase that cannot be measured is absent.
	Phases []Phase
}

// Phase is one measured phase.
type Phase struct {
	Name    string
	Seconds float64
}

// Measure reads the cold start of a pod that is Ready; ok is false while it
// is not (or its conditions do not say when it became so).
func Measure(p *corev1.Pod, pulls []Pull) (ColdStart, bool) {
	c := ColdStart{Created: p.CreationTimestamp.Time}
	ready, ok := condition(p, corev1.PodReady)
	if !ok || ready.Status != corev1.ConditionTrue || ready.LastTransitionTime.IsZero() {
		return c, false
	}
	c.Ready = ready.LastTransitionTime.Time
	if s, ok := condition(p, corev1.PodScheduled); ok && s.Status == corev1.ConditionTrue {
		c.Scheduled = s.LastTransitionTime.Time
	}
	for _, st := range p.Status.ContainerStatuses {
		if r := st.State.Running; r != nil && r.StartedAt.After(c.Started) {
			c.Started = r.StartedAt.Time
		}
	}
	for _, pl := range pulls {
		if !pl.Measured {
			continue
		}
		c.HasPulls = true
		c.PullTime += pl.Duration
		if pl.At.After(c.Pulled) {
			c.Pulled = pl.At
		}
	}
	c.Phases = c.phases()
	return c, true
}

func (c *ColdStart) phases() []Phase {
	var out []Phase
	span := func(name string, from, to time.Time) {
		if !from.IsZero() && !to.IsZero() && !to.Before(from) {
			out = append(out, Phase{name, to.Sub(from).Seconds()})
		}
	}
	span(accelschema.PhaseScheduling, c.Created, c.Scheduled)
	if c.HasPulls {
		out = append(out, Phase{accelschema.PhaseImagePull, c.PullTime.Seconds()})
	}
	// Containers start once the pod is scheduled and, when it pulled
	// images, once the last pull is done: what is left is the runtime's
	// and the init containers' time.
	from := c.Scheduled
	if c.Pulled.After(from) {
		from = c.Pulled
	}
	span(accelschema.PhaseContainerStart, from, c.Started)
	span(accelschema.PhaseReadiness, c.Started, c.Ready)
	span(accelschema.PhaseFirstRequest, c.Ready, c.FirstRequest)
	span(accelschema.PhaseTotal, c.Created, c.Ready)
	return out
}

// AddFirstRequest adds the first_request phase: Ready → the first finished
// request. A request seen before Ready (a scrape of a server that was
// already serving through another readiness path) adds nothing.
func (c *ColdStart) AddFirstRequest(at time.Time) {
	c.FirstRequest = at
	c.Phases = c.phases()
}

func condition(p *corev1.Pod, t corev1.PodConditionType) (corev1.PodCondition, bool) {
	for _, c := range p.Status.Conditions {
		if c.Type == t {
			return c, true
		}
	}
	return corev1.PodCondition{}, false
}

// IsReady reports whether the pod's Ready condition is True.
func IsReady(p *corev1.Pod) bool {
	c, ok := condition(p, corev1.PodReady)
	return ok && c.Status == corev1.ConditionTrue
}

// ReadySince is when the pod's Ready condition last turned True; ok is
// false when it is not Ready.
func ReadySince(p *corev1.Pod) (time.Time, bool) {
	c, ok := condition(p, corev1.PodReady)
	if !ok || c.Status != corev1.ConditionTrue {
		return time.Time{}, false
	}
	return c.LastTransitionTime.Time, true
}
