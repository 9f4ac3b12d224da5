package window

import (
	"math"
	"testing"
	"time"
)

func at(d time.Duration) int64 { return int64(1_700_000_000*time.Second + d) }

func TestPeaksAndMeansOverTheWindow(t *testing.T) {
	w := New(time.Hour) // 5-minute buckets
	// 10 minutes at activity 0.2, then 10 minutes at 0.6; memory peaks at 0.5.
	for i := 1; i <= 20; i++ {
		a := 0.2
		if i > 10 {
			a = 0.6
		}
		w.Add(at(time.Duration(i)*time.Minute), time.Minute, Sample{
			Activity: a, HasActivity: true, Training: a / 2, HasTraining: true,
			MemRatio: float64(i) / 40, MemBytes: float64(i), HasMemory: true,
		})
	}
	s := w.Summarize(at(20 * time.Minute))
	if s.Covered != 20*time.Minute {
		t.Errorf("covered %v, want 20m", s.Covered)
	}
	if s.PeakActivity != 0.6 || math.Abs(s.MeanActivity-0.4) > 1e-12 || math.Abs(s.MeanTraining-0.2) > 1e-12 {
		t.Errorf("activity peak %v mean %v training %v", s.PeakActivity, s.MeanActivity, s.MeanTraining)
	}
	if s.PeakMemRatio != 0.5 || s.PeakMemBytes != 20 || s.HasKV || s.HasQueue {
		t.Errorf("memory %+v", s)
	}
}

func TestOldDataFallsOut(t *testing.T) {
	w := New(time.Hour)
	w.Add(at(0), 0, Sample{MemRatio: 0.9, HasMemory: true})
	for i := 1; i <= 70; i++ {
		w.Add(at(time.Duration(i)*time.Minute), time.Minute, Sample{MemRatio: 0.1, HasMemory: true, KVCache: 0.2, HasKV: true})
	}
	s := w.Summarize(at(70 * time.Minute))
	if s.PeakMemRatio != 0.1 {
		t.Errorf("a peak older than the window must fall out, got %v", s.PeakMemRatio)
	}
	if s.Covered < 55*time.Minute || s.Covered > time.Hour {
		t.Errorf("covered %v, want between 55m and 1h", s.Covered)
	}
	// A sample older than what its slot holds is ignored, not merged.
	w.Add(at(5*time.Minute), time.Minute, Sample{MemRatio: 1, HasMemory: true})
	if s := w.Summarize(at(70 * time.Minute)); s.PeakMemRatio != 0.1 {
		t.Errorf("stale sample leaked in: %v", s.PeakMemRatio)
	}
	// Long silence: nothing left.
	if s := w.Summarize(at(3 * time.Hour)); s.Covered != 0 || s.HasMemory {
		t.Errorf("after the window: %+v", s)
	}
}

func TestEmptySummary(t *testing.T) {
	w := New(time.Minute)
	s := w.Summarize(at(0))
	if !math.IsNaN(s.MeanActivity) || !math.IsNaN(s.MeanTraining) || s.HasActivity {
		t.Errorf("empty window: %+v", s)
	}
}
