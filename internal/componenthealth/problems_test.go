package componenthealth

import (
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componentstatus"

	"github.com/otelcol-accel/otelcol-accel/internal/componenthealth/componenthealthtest"
)

const (
	ok          = componentstatus.StatusOK
	recoverable = componentstatus.StatusRecoverableError
)

// messages renders the host's events as "status" or "status: error".
func messages(h *componenthealthtest.Host) []string {
	var out []string
	for _, e := range h.Events() {
		if e.Err() == nil {
			out = append(out, e.Status().String())
			continue
		}
		out = append(out, e.Status().String()+": "+e.Err().Error())
	}
	return out
}

func TestAggregateNamesEveryBrokenSourceAndReportsOnlyChanges(t *testing.T) {
	host := &componenthealthtest.Host{}
	p := NewProblems()
	p.Start(host)
	assert.Empty(t, host.Events(), "OK at start is the collector's to report")

	assert.False(t, p.Clear("socket"), "nothing was broken")
	assert.True(t, p.Fail("socket", errors.New("missing")))
	assert.False(t, p.Fail("socket", errors.New("missing")), "same reason again")
	assert.True(t, p.Fail("api", errors.New("forbidden")))
	assert.True(t, p.Clear("socket"))
	assert.False(t, p.Clear("socket"))
	assert.True(t, p.Clear("api"))

	assert.Equal(t, []string{
		"StatusRecoverableError: socket: missing",
		"StatusRecoverableError: api: forbidden; socket: missing",
		"StatusRecoverableError: api: forbidden",
		"StatusOK",
	}, messages(host))
	assert.NoError(t, p.Err())
}

func TestTwoSourcesNoLongerOverwriteEachOther(t *testing.T) {
	// The bug this package was written for: one source recovering reported
	// OK while another was still broken.
	host := &componenthealthtest.Host{}
	p := NewProblems()
	p.Start(host)
	p.Fail("baselines storage", errors.New("unreadable"))
	p.Fail("pricing file", errors.New("row 3: bad price"))
	p.Clear("pricing file")
	require.Equal(t, recoverable, host.Last().Status())
	assert.EqualError(t, host.Last().Err(), "baselines storage: unreadable")
}

func TestAChangedReasonIsReportedUnlessSourceChangesOnly(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []Option
		want []string
	}{
		{"default", nil, []string{
			"StatusRecoverableError: nvml: library not found",
			"StatusRecoverableError: nvml: driver not loaded",
			"StatusRecoverableError: exporter: refused; nvml: driver not loaded",
		}},
		{"sources only", []Option{ReportSourceChangesOnly()}, []string{
			"StatusRecoverableError: nvml: library not found",
			// the changed reason shows when the next report is due
			"StatusRecoverableError: exporter: refused; nvml: driver not loaded",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			host := &componenthealthtest.Host{}
			p := NewProblems(tc.opts...)
			p.Start(host)
			p.Fail("nvml", errors.New("library not found"))
			assert.True(t, p.Fail("nvml", errors.New("driver not loaded")), "a new reason is the cue to log, either way")
			p.Fail("exporter", errors.New("refused"))
			assert.Equal(t, tc.want, messages(host))
		})
	}
}

func TestProblemsBeforeStartAreReportedAtStart(t *testing.T) {
	p := NewProblems(WithSummary("accelerator_attributes degraded"))
	p.Fail("kubelet", errors.New("socket missing"))
	host := &componenthealthtest.Host{}
	p.Start(host)
	assert.Equal(t, []string{"StatusRecoverableError: accelerator_attributes degraded: kubelet: socket missing"}, messages(host))

	// A problem that came and went before Start leaves nothing to say.
	q := NewProblems()
	q.Fail("kubelet", errors.New("socket missing"))
	q.Clear("kubelet")
	host = &componenthealthtest.Host{}
	q.Start(host)
	assert.Empty(t, host.Events())
}

func TestNothingIsReportedAfterShutdown(t *testing.T) {
	host := &componenthealthtest.Host{}
	p := NewProblems()
	p.Start(host)
	p.Fail("endpoint", errors.New("down"))
	p.Shutdown()
	p.Clear("endpoint")
	assert.Equal(t, []componentstatus.Status{recoverable}, host.Statuses())
}

func TestHoldMakesOnePassOneReport(t *testing.T) {
	host := &componenthealthtest.Host{}
	p := NewProblems()
	p.Start(host)
	p.Fail("a", errors.New("down"))

	release := p.Hold()
	inner := p.Hold()
	p.Clear("a")
	p.Fail("b", errors.New("down"))
	p.Fail("c", errors.New("down"))
	inner()
	inner() // a second call must not release the outer hold
	assert.Len(t, host.Events(), 1, "held")
	release()
	assert.Equal(t, []string{
		"StatusRecoverableError: a: down",
		"StatusRecoverableError: b: down; c: down",
	}, messages(host))

	// A pass that ends where it began reports nothing.
	release = p.Hold()
	p.Clear("b")
	p.Fail("b", errors.New("down"))
	release()
	assert.Len(t, host.Events(), 2)
}

func TestAggregateUnwrapsToEverySourcesError(t *testing.T) {
	p := NewProblems()
	p.Fail("file", fmt.Errorf("reading prices: %w", fs.ErrNotExist))
	p.Fail("storage", fs.ErrPermission)
	err := p.Err()
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.ErrorIs(t, err, fs.ErrPermission)
	var agg *Error
	require.ErrorAs(t, err, &agg)
	assert.Equal(t, []string{"file", "storage"}, []string{agg.Problems[0].Source, agg.Problems[1].Source})
	assert.True(t, p.Failing("file"))
	assert.False(t, p.Failing("kubelet"))
}

func TestReporterIsASourcesCallback(t *testing.T) {
	host := &componenthealthtest.Host{}
	p := NewProblems()
	p.Start(host)
	report := p.Reporter("NVML")
	report(errors.New("driver not loaded"))
	report(nil)
	assert.Equal(t, []componentstatus.Status{recoverable, ok}, host.Statuses())
}

func TestConcurrentSourcesEndInTheirLastState(t *testing.T) {
	host := &componenthealthtest.Host{}
	p := NewProblems()
	p.Start(host)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			src := fmt.Sprint("source-", i)
			for j := range 200 {
				if j%2 == 0 {
					p.Fail(src, errors.New("down"))
				} else {
					p.Clear(src)
				}
			}
		}()
	}
	wg.Wait()
	events := host.Events()
	require.NotEmpty(t, events)
	assert.Equal(t, ok, events[len(events)-1].Status(), "every source cleared last")
	for i := 1; i < len(events); i++ {
		prev, cur := events[i-1], events[i]
		if prev.Status() == ok && cur.Status() == ok {
			t.Fatalf("event %d: OK reported twice in a row", i)
		}
		if prev.Err() != nil && cur.Err() != nil && prev.Err().Error() == cur.Err().Error() {
			t.Fatalf("event %d: %q reported twice in a row", i, cur.Err())
		}
	}
}

func TestErrorsThatNameTheirSourcesAreNotPrefixed(t *testing.T) {
	p := NewProblems(SourcesNamedInErrors())
	p.Fail("exporter", errors.New("dcgm-exporter at http://localhost:9400/metrics is not reachable: connection refused"))
	p.Fail("mps", errors.New("MPS control daemon does not answer"))
	assert.EqualError(t, p.Err(), "dcgm-exporter at http://localhost:9400/metrics is not reachable: connection refused; MPS control daemon does not answer")
}
