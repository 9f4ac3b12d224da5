// Package window keeps the recent history of one resource in a fixed number
// of time buckets, so that peaks and averages over a window (an hour, a day)
// cost the same small, constant memory however often the resource reports.
package window

import (
	"math"
	"time"
)

// Buckets is the resolution of a window: its span is divided into this many
// buckets, and data older than the span falls out one bucket at a time.
const Buckets = 12

// Sample is what one data-point interval of a resource contributes.
type Sample struct {
	Activity    float64
	HasActivity bool
	// Training is the tensor (else SM) activity a training baseline is
	// compared with.
	Training    float64
	HasTraining bool
	// MemRatio is memory used / the resource's memory; MemBytes the bytes used.
	MemRatio  float64
	MemBytes  float64
	HasMemory bool
	KVCache   float64
	HasKV     bool
	Waiting   float64
	HasQueue  bool
}

type bucket struct {
	index                                int64 // start time / width; valid when used
	used                                 bool
	covered                              float64 // seconds
	peakActivity, peakMem, peakMemBytes  float64
	peakKV, peakWaiting                  float64
	activitySum, activitySecs            float64
	trainingSum, trainingSecs            float64
	hasActivity, hasMem, hasKV, hasQueue bool
}

// Window is a ring of Buckets buckets. The zero value is not usable; use New.
type Window struct {
	width int64 // nanoseconds per bucket
	b     [Buckets]bucket
}

// New returns a window spanning span (at least Buckets nanoseconds).
func New(span time.Duration) Window {
	w := int64(span) / Buckets
	if w < 1 {
		w = 1
	}
	return Window{width: w}
}

// Span is the time the window covers.
func (w *Window) Span() time.Duration { return time.Duration(w.width * Buckets) }

// Add records the interval that ends at t (unix nanoseconds) and lasted dt.
// The first sample of a resource has dt = 0: its peaks count, its time does
// not.
func (w *Window) Add(t int64, dt time.Duration, s Sample) {
	idx := t / w.width
	b := &w.b[mod(idx)]
	if !b.used || b.index != idx {
		if b.used && b.index > idx {
			return // older than what the slot now holds: out of the window
		}
		*b = bucket{index: idx, used: true}
	}
	secs := dt.Seconds()
	b.covered += secs
	if s.HasActivity {
		b.hasActivity = true
		b.peakActivity = math.Max(b.peakActivity, s.Activity)
		b.activitySum += s.Activity * secs
		b.activitySecs += secs
	}
	if s.HasTraining {
		b.trainingSum += s.Training * secs
		b.trainingSecs += secs
	}
	if s.HasMemory {
		b.hasMem = true
		b.peakMem = math.Max(b.peakMem, s.MemRatio)
		b.peakMemBytes = math.Max(b.peakMemBytes, s.MemBytes)
	}
	if s.HasKV {
		b.hasKV = true
		b.peakKV = math.Max(b.peakKV, s.KVCache)
	}
	if s.HasQueue {
		b.hasQueue = true
		b.peakWaiting = math.Max(b.peakWaiting, s.Waiting)
	}
}

func mod(idx int64) int {
	m := idx % Buckets
	if m < 0 {
		m += Buckets
	}
	return int(m)
}

// Summary is the window that ends at a given time.
type Summary struct {
	// Covered is how much of the window the resource was observed.
	Covered time.Duration

	PeakActivity float64
	HasActivity  bool
	// MeanActivity and MeanTraining are time-weighted averages; NaN without
	// data.
	MeanActivity float64
	MeanTraining float64

	PeakMemRatio float64
	PeakMemBytes float64
	HasMemory    bool

	PeakKV   float64
	HasKV    bool
	MaxQueue float64
	HasQueue bool
}

// Summarize combines the buckets within the window ending at t.
func (w *Window) Summarize(t int64) Summary {
	cur := t / w.width
	var s Summary
	var covered, actSum, actSecs, trSum, trSecs float64
	for i := range w.b {
		b := &w.b[i]
		if !b.used || b.index > cur || b.index <= cur-Buckets {
			continue
		}
		covered += b.covered
		actSum += b.activitySum
		actSecs += b.activitySecs
		trSum += b.trainingSum
		trSecs += b.trainingSecs
		if b.hasActivity {
			s.HasActivity = true
			s.PeakActivity = math.Max(s.PeakActivity, b.peakActivity)
		}
		if b.hasMem {
			s.HasMemory = true
			s.PeakMemRatio = math.Max(s.PeakMemRatio, b.peakMem)
			s.PeakMemBytes = math.Max(s.PeakMemBytes, b.peakMemBytes)
		}
		if b.hasKV {
			s.HasKV = true
			s.PeakKV = math.Max(s.PeakKV, b.peakKV)
		}
		if b.hasQueue {
			s.HasQueue = true
			s.MaxQueue = math.Max(s.MaxQueue, b.peakWaiting)
		}
	}
	s.Covered = time.Duration(covered * float64(time.Second))
	s.MeanActivity, s.MeanTraining = math.NaN(), math.NaN()
	if actSecs > 0 {
		s.MeanActivity = actSum / actSecs
	}
	if trSecs > 0 {
		s.MeanTraining = trSum / trSecs
	}
	return s
}
