//go:build load

package load

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-accel/otelcol-accel/internal/e2etest"
)

// pointClock counts exported data points by the second their timestamp
// falls in. A scrape stamps its points with the scrape time, so the points
// of the scrapes made inside a measurement window are exactly those
// stamped inside it, whenever the batch processor happens to flush them.
type pointClock struct {
	mu  sync.Mutex
	sec map[int64]int64
}

func newPointClock() *pointClock { return &pointClock{sec: map[int64]int64{}} }

func (c *pointClock) observe(md pmetric.Metrics) {
	local := map[int64]int64{}
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		sms := rms.At(i).ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				forEachTimestamp(ms.At(k), func(ts pcommon.Timestamp) { local[int64(ts)/1e9]++ })
			}
		}
	}
	c.mu.Lock()
	for s, n := range local {
		c.sec[s] += n
	}
	c.mu.Unlock()
}

// between counts points stamped in [from, to).
func (c *pointClock) between(from, to time.Time) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var n int64
	for s, v := range c.sec {
		if s >= from.Unix() && s < to.Unix() {
			n += v
		}
	}
	return n
}

func forEachTimestamp(m pmetric.Metric, f func(pcommon.Timestamp)) {
	switch m.Type() {
	case pmetric.MetricTypeGauge:
		dps := m.Gauge().DataPoints()
		for i := 0; i < dps.Len(); i++ {
			f(dps.At(i).Timestamp())
		}
	case pmetric.MetricTypeSum:
		dps := m.Sum().DataPoints()
		for i := 0; i < dps.Len(); i++ {
			f(dps.At(i).Timestamp())
		}
	case pmetric.MetricTypeHistogram:
		dps := m.Histogram().DataPoints()
		for i := 0; i < dps.Len(); i++ {
			f(dps.At(i).Timestamp())
		}
	case pmetric.MetricTypeExponentialHistogram:
		dps := m.ExponentialHistogram().DataPoints()
		for i := 0; i < dps.Len(); i++ {
			f(dps.At(i).Timestamp())
		}
	case pmetric.MetricTypeSummary:
		dps := m.Summary().DataPoints()
		for i := 0; i < dps.Len(); i++ {
			f(dps.At(i).Timestamp())
		}
	}
}

// usageWindow follows one process through a measurement window: CPU at
// both ends, resident memory sampled every second in between.
type usageWindow struct {
	pid        int
	start, end e2etest.ProcUsage
	t0, t1     time.Time
	rss        []int64
	anon       []int64
	file       []int64
	stop       chan struct{}
	done       chan struct{}
}

func startWindow(t testing.TB, pid int) *usageWindow {
	t.Helper()
	w := &usageWindow{pid: pid, stop: make(chan struct{}), done: make(chan struct{})}
	u, err := e2etest.ReadProcUsage(pid)
	if err != nil {
		t.Fatal(err)
	}
	w.start, w.t0 = u, time.Now()
	w.sample(u)
	go func() {
		defer close(w.done)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-tick.C:
				if u, err := e2etest.ReadProcUsage(pid); err == nil {
					w.sample(u)
				}
			}
		}
	}()
	return w
}

func (w *usageWindow) finish(t testing.TB) {
	t.Helper()
	close(w.stop)
	<-w.done
	u, err := e2etest.ReadProcUsage(w.pid)
	if err != nil {
		t.Fatal(err)
	}
	w.end, w.t1 = u, time.Now()
	w.sample(u)
}

func (w *usageWindow) sample(u e2etest.ProcUsage) {
	w.rss = append(w.rss, u.RSSBytes)
	w.anon = append(w.anon, u.RSSAnonBytes)
	w.file = append(w.file, u.RSSFileBytes)
}

func (w *usageWindow) cpuSeconds() float64 { return w.end.CPUSeconds - w.start.CPUSeconds }

// medianRSS is the steady-state resident set over the window.
func (w *usageWindow) medianRSS() int64 { return median(w.rss) }

func median(v []int64) int64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func (w *usageWindow) maxRSS() int64 { return slices.Max(w.rss) }

// sleepUntil waits for a wall time, or fails the test if ctx ends first.
func sleepUntil(ctx context.Context, t testing.TB, at time.Time) {
	t.Helper()
	select {
	case <-ctx.Done():
		t.Fatalf("interrupted: %v", ctx.Err())
	case <-time.After(time.Until(at)):
	}
}

const mib = 1 << 20
