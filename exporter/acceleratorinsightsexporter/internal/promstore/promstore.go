package promstore

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/otelcol-accel/otelcol-accel/distributions/otelcol-accel/dashboards/promschema"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorinsightsexporter/internal/fleet"
	s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

// Store answers from a Prometheus-compatible server.
type Store struct {
	c          client
	rateWindow time.Duration
	step       time.Duration
	report     func(error)
	now        func() time.Time
	complete   completeness
}

// New returns a Store querying base (the server's URL, without /api/v1)
// with an HTTP client from confighttp (auth, TLS, headers). report hears
// every query pass's outcome (nil once it works again).
func New(c *http.Client, base string, rateWindow, step time.Duration, report func(error)) *Store {
	if report == nil {
		report = func(error) {}
	}
	return &Store{c: client{c, base}, rateWindow: rateWindow, step: step, report: report, now: time.Now}
}

// Name is the backend's name in /api/v1/session.
func (*Store) Name() string { return "prometheus" }

// SetClock replaces the clock (tests).
func (st *Store) SetClock(now func() time.Time) { st.now = now }

// metric is a registered metric's Prometheus name.
func metric(name string) string {
	for _, m := range s.Metrics {
		if m.Name == name {
			n, err := promschema.MetricName(m)
			if err != nil {
				panic(err) // the registry's names translate: promschema's tests say so
			}
			return n
		}
	}
	panic("not a registered metric: " + name)
}

// label is an attribute's Prometheus label.
func label(key string) string {
	n, err := promschema.LabelName(key)
	if err != nil {
		panic(err)
	}
	return n
}

// chartSeries selects the points that count for a resource's charts (its
// own and its processes', fleet.Reading folds them): not one pod's on a
// shared device, not the encoder's or decoder's, as the memory backend
// reads them.
var chartSeries = fmt.Sprintf(`%s="", %s=~"|%s"`, label(s.AttrConsumerPod), label(s.AttrHWGPUTask), s.GPUTaskGeneral)

// errorCounts selects the hw.errors classes internal/xid can name a
// failure by (xid.ForError).
var errorCounts = fmt.Sprintf(`%s{%s!="", %s=~"%s|%s|%s"}`, metric(s.MetricErrors), label(s.AttrHWID),
	label(s.AttrErrorType), s.ErrorXID, s.ErrorECCUncorrected, s.ErrorSRAMECCUncorrected)

// grewIn selects the counter series that grew within the window, or
// appeared in it with a count.
func grewIn(selector, window string) string {
	return fmt.Sprintf(`(increase(%[1]s[%[2]s]) > 0) or ((%[1]s > 0) unless %[1]s offset %[2]s)`, selector, window)
}

// perProcess reports whether a series is one process's.
func perProcess(labels map[string]string) bool { return labels[label(s.AttrProcessPID)] != "" }

func identityOf(labels map[string]string) fleet.Identity {
	return fleet.IdentityFrom(func(key string) string { return labels[label(key)] })
}

type resourceKey struct{ node, hwID, partitionType, partitionID, holder string }

func keyOf(id *fleet.Identity) resourceKey {
	return resourceKey{id.Node, id.HWID, id.PartitionType, id.PartitionID, id.HolderKey()}
}

// query is one instant query of a snapshot and what to do with its samples.
type query struct {
	expr  string
	apply func(samples []sample)
}

// Snapshot queries the fleet now.
func (st *Store) Snapshot(ctx context.Context) (*fleet.Snapshot, error) {
	now := st.now()
	b := newBuilder()
	win := promDuration(st.rateWindow)
	chart := func(name string) string { return fmt.Sprintf(`%s{%s}`, metric(name), chartSeries) }
	hw := fmt.Sprintf(`%s!=""`, label(s.AttrHWID))
	noHW := fmt.Sprintf(`%s=""`, label(s.AttrHWID))
	queries := []query{
		{fmt.Sprintf(`%s{%s} == 1`, metric(s.MetricStatus), hw), b.status},
		// What failed a device, by its error counters: the classes that
		// grew in the window (or appeared in it: increase() misses a
		// series' first count), else any it ever counted (fleet's
		// failureOf lets the health event's action win over either).
		{fmt.Sprintf(`%s > 0`, errorCounts), b.errors(false, time.Time{})},
		{grewIn(errorCounts, win), b.errors(true, now.Add(-st.rateWindow))},
		{chart(s.MetricGPUUtilization), b.reading("utilization", func(r *fleet.Resource) **float64 { return &r.Utilization })},
		{chart(s.MetricGREngineActive), b.reading("gr_engine_active", func(r *fleet.Resource) **float64 { return &b.grEngine(r).v })},
		{chart(s.MetricGPUMemoryUsage), b.reading("memory_used", func(r *fleet.Resource) **float64 { return &r.MemoryUsed })},
		{chart(s.MetricGPUMemoryUtilization), b.reading("memory_utilization", func(r *fleet.Resource) **float64 { return &r.MemoryUtilization })},
		{fmt.Sprintf(`%s{%s}`, metric(s.MetricGPUMemoryLimit), hw), b.gauge(func(r *fleet.Resource) **float64 { return &r.MemoryLimit }, false)},
		{fmt.Sprintf(`%s{%s}`, metric(s.MetricPartitionMemoryLimit), hw), b.gauge(func(r *fleet.Resource) **float64 { return &r.MemoryLimit }, false)},
		{fmt.Sprintf(`%s{%s}`, metric(s.MetricPrice), hw), b.gauge(func(r *fleet.Resource) **float64 { return &r.PricePerHour }, false)},
		{fmt.Sprintf(`rate(%s{%s}[%s]) * 3600`, metric(s.MetricWaste), hw, win), b.waste},
		{fmt.Sprintf(`%s{%s}`, metric(s.MetricMPSDaemonUp), noHW), b.mps(func(m *fleet.MPS, v float64) { up := v == 1; m.Up = &up })},
		{fmt.Sprintf(`%s{%s}`, metric(s.MetricMPSServers), noHW), b.mps(func(m *fleet.MPS, v float64) { m.Servers = &v })},
		{fmt.Sprintf(`%s{%s}`, metric(s.MetricMPSActiveThreads), noHW), b.mps(func(m *fleet.MPS, v float64) { m.ActiveThreads = &v })},
	}
	queries = append(queries, st.serverQueries(b, win)...)
	results := make([][]sample, len(queries))
	errs := make([]error, len(queries))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4) // a few at a time: one page load is ~25 queries
	for i, q := range queries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i], errs[i] = st.c.query(ctx, q.expr, now)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			st.report(err)
			return nil, err
		}
	}
	for i, q := range queries {
		q.apply(results[i])
	}
	snap := b.snapshot(now)
	devices := 0
	for i := range snap.Resources {
		if snap.Resources[i].Health != "" {
			devices++
		}
	}
	if err := st.complete.check(devices, now); err != nil {
		st.report(err)
		return nil, err
	}
	st.report(nil)
	return snap, nil
}

func (st *Store) serverQueries(b *builder, win string) []query {
	server := fmt.Sprintf(`%s="", %s!=""`, label(s.AttrHWID), label(s.AttrGenAIProviderName))
	g := func(name string, field func(*fleet.Server) **float64) query {
		return query{fmt.Sprintf(`%s{%s}`, metric(name), server), b.server(field)}
	}
	rate := func(expr string, field func(*fleet.Server) **float64) query {
		return query{expr, b.server(field)}
	}
	hist := func(name string, q float64, field func(*fleet.Server) **float64) query {
		return query{fmt.Sprintf(`histogram_quantile(%g, rate(%s_bucket{%s}[%s]))`, q, metric(name), server, win), b.server(field)}
	}
	finish := label(s.AttrFinishReason)
	tokenType := label(s.AttrTokenType)
	qs := []query{
		g(s.MetricRequestsRunning, func(x *fleet.Server) **float64 { return &x.RequestsRunning }),
		g(s.MetricRequestsWaiting, func(x *fleet.Server) **float64 { return &x.RequestsWaiting }),
		g(s.MetricKVCacheUtilization, func(x *fleet.Server) **float64 { return &x.KVCache }),
		g(s.MetricPrefixCacheHitRatio, func(x *fleet.Server) **float64 { return &x.PrefixHitRatio }),
		rate(fmt.Sprintf(`sum without (%s) (rate(%s{%s}[%s]))`, finish, metric(s.MetricRequests), server, win), func(x *fleet.Server) **float64 { return &x.RequestRate }),
		rate(fmt.Sprintf(`rate(%s{%s}[%s])`, metric(s.MetricPreemptions), server, win), func(x *fleet.Server) **float64 { return &x.PreemptionsPerSec }),
		rate(fmt.Sprintf(`sum without (%s) (rate(%s{%s, %s="%s"}[%s]))`, tokenType, metric(s.MetricTokens), server, tokenType, s.TokenInput, win), func(x *fleet.Server) **float64 { return &x.InputTokensPerSec }),
		rate(fmt.Sprintf(`sum without (%s) (rate(%s{%s, %s="%s"}[%s]))`, tokenType, metric(s.MetricTokens), server, tokenType, s.TokenOutput, win), func(x *fleet.Server) **float64 { return &x.OutputTokensPerS }),
	}
	for _, h := range []struct {
		name string
		q    func(*fleet.Server) *fleet.Quantiles
	}{
		{s.MetricTimeToFirstToken, func(x *fleet.Server) *fleet.Quantiles { return &x.TTFT }},
		{s.MetricInterTokenLatency, func(x *fleet.Server) *fleet.Quantiles { return &x.ITL }},
		{s.MetricTimePerOutputToken, func(x *fleet.Server) *fleet.Quantiles { return &b.tpot(x).q }},
		{s.MetricRequestDuration, func(x *fleet.Server) *fleet.Quantiles { return &x.E2E }},
	} {
		qs = append(qs,
			hist(h.name, 0.5, func(x *fleet.Server) **float64 { return &h.q(x).P50 }),
			hist(h.name, 0.9, func(x *fleet.Server) **float64 { return &h.q(x).P90 }),
			hist(h.name, 0.99, func(x *fleet.Server) **float64 { return &h.q(x).P99 }))
	}
	return qs
}

// promDuration writes a duration as PromQL does (whole seconds).
func promDuration(d time.Duration) string {
	return fmt.Sprintf("%ds", max(int64(d/time.Second), 1))
}

// Series reads the charts of the named resources over the window.
func (st *Store) Series(ctx context.Context, refs []fleet.SeriesRef, window time.Duration) ([]fleet.Series, error) {
	end := st.now()
	start := end.Add(-window)
	step := max(st.step, window/1000)
	out := []fleet.Series{}
	for _, ref := range refs {
		names := make([]string, 0, len(fleet.Charts))
		byName := map[string]int{}
		for i, c := range fleet.Charts {
			if ref.PartitionsUtilizationOnly && c.Name != "utilization" && c.Name != "gr_engine_active" {
				continue
			}
			n := metric(c.Metric)
			names = append(names, n)
			byName[n] = i
		}
		expr := fmt.Sprintf(`{__name__=~"%s", %s=%q, %s=%q, %s=%q, %s}`, strings.Join(names, "|"),
			label(s.AttrHWID), ref.HWID, label(s.AttrPartitionType), ref.PartitionType, label(s.AttrPartitionID), ref.PartitionID, chartSeries)
		series, err := st.c.queryRange(ctx, expr, start, end, step)
		if err != nil {
			st.report(err)
			return nil, err
		}
		// Several series of one chart at one time become one value
		// (fleet.Reading), as in the memory backend.
		readings := map[int]map[float64]*fleet.Reading{}
		for _, rs := range series {
			id := identityOf(rs.labels)
			if id.Node != ref.Node || id.HolderKey() != ref.Holder {
				continue
			}
			i, ok := byName[rs.labels["__name__"]]
			if !ok {
				continue
			}
			m := readings[i]
			if m == nil {
				m = map[float64]*fleet.Reading{}
				readings[i] = m
			}
			proc := perProcess(rs.labels)
			for _, p := range rs.points {
				r := m[p[0]]
				if r == nil {
					r = &fleet.Reading{Chart: fleet.Charts[i].Name}
					m[p[0]] = r
				}
				r.Add(p[1], proc)
			}
		}
		merged := map[int]map[float64]float64{}
		for i, m := range readings {
			merged[i] = make(map[float64]float64, len(m))
			for t, r := range m {
				merged[i][t], _ = r.Value()
			}
		}
		idx := make([]int, 0, len(merged))
		for i := range merged {
			idx = append(idx, i)
		}
		slices.Sort(idx)
		for _, i := range idx {
			c := fleet.Charts[i]
			ser := fleet.Series{Name: c.Name, Metric: c.Metric, Unit: c.Unit, Resource: ref.HWID, Points: []fleet.Point{}}
			ts := make([]float64, 0, len(merged[i]))
			for t := range merged[i] {
				ts = append(ts, t)
			}
			slices.Sort(ts)
			for _, t := range ts {
				ser.Points = append(ser.Points, fleet.Point{t, merged[i][t]})
			}
			out = append(out, ser)
		}
	}
	return out, nil
}
