package acceleratorcostprocessor

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorcostprocessor/internal/metadata"
)

// t0 is the data time the test scenarios start at.
var t0 = pcommon.NewTimestampFromTime(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))

func at(d time.Duration) pcommon.Timestamp { return t0 + pcommon.Timestamp(d) }

// resource is one input resource: attributes and metric values, keyed by
// their registered names.
type resource struct {
	attrs  map[string]any
	values map[string]any
}

// res builds a resource from name/value pairs: a registered metric name
// takes a value (float64; a string hw.state for hw.status; []float64 for
// one point per process or memory category), anything else is a resource
// attribute.
func res(kv ...any) resource {
	r := resource{attrs: map[string]any{}, values: map[string]any{}}
	for i := 0; i+1 < len(kv); i += 2 {
		k := kv[i].(string)
		if _, ok := s.LookupMetric(k); ok {
			r.values[k] = kv[i+1]
		} else {
			r.attrs[k] = kv[i+1]
		}
	}
	return r
}

// gpu is a whole GPU on a test.8gpu node (1 USD per GPU-hour).
func gpu(hwID string, kv ...any) resource {
	return res(append([]any{
		s.AttrHWID, hwID, s.AttrHWModel, "NVIDIA A100-SXM4-80GB", s.AttrKind, s.KindNvidiaGPU,
		s.AttrPartitionType, s.PartitionNone, s.AttrHostType, "test.8gpu", s.AttrCloudRegion, "us-east-1",
		s.AttrK8sNodeName, "node-a",
	}, kv...)...)
}

// held adds a pod that holds the device.
func held(workload, typ string, kv ...any) []any {
	return append([]any{
		s.AttrK8sPodName, workload + "-0", s.AttrK8sPodUID, "uid-" + workload, s.AttrK8sNamespaceName, "ml",
		s.AttrWorkloadName, workload, s.AttrWorkloadType, typ, s.AttrAllocationState, s.AllocationAllocated,
	}, kv...)
}

func batch(t pcommon.Timestamp, rs ...resource) pmetric.Metrics {
	md := pmetric.NewMetrics()
	for _, r := range rs {
		rm := md.ResourceMetrics().AppendEmpty()
		if err := rm.Resource().Attributes().FromRaw(r.attrs); err != nil {
			panic(err)
		}
		ms := rm.ScopeMetrics().AppendEmpty().Metrics()
		for name, v := range r.values {
			def, _ := s.LookupMetric(name)
			m := ms.AppendEmpty()
			m.SetName(name)
			m.SetUnit(def.Unit)
			var dps pmetric.NumberDataPointSlice
			if def.Instrument == s.Gauge {
				dps = m.SetEmptyGauge().DataPoints()
			} else {
				sum := m.SetEmptySum()
				sum.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
				sum.SetIsMonotonic(def.Instrument == s.Counter)
				dps = sum.DataPoints()
			}
			put := func(v float64) pmetric.NumberDataPoint {
				dp := dps.AppendEmpty()
				dp.SetTimestamp(t)
				if def.ValueType == "int" {
					dp.SetIntValue(int64(v))
				} else {
					dp.SetDoubleValue(v)
				}
				return dp
			}
			switch v := v.(type) {
			case float64:
				put(v)
			case int:
				put(float64(v))
			case []float64: // one point per process (or memory category)
				for i, x := range v {
					dp := put(x)
					if name == s.MetricGPUMemoryUsage {
						dp.Attributes().PutStr(s.AttrMemoryCategory, fmt.Sprintf("cat%d", i))
					} else {
						dp.Attributes().PutInt(s.AttrProcessPID, int64(1000+i))
					}
				}
			case string: // hw.status: 1 for the current state, 0 for the others
				for _, st := range s.EnumHWState.Values {
					dp := put(0)
					if st.Value == v {
						dp.SetIntValue(1)
					}
					dp.Attributes().PutStr(s.AttrHWState, st.Value)
				}
			default:
				panic(fmt.Sprintf("metric %s: unsupported value %T", name, v))
			}
		}
	}
	return md
}

var harnessSeq atomic.Int64

type harness struct {
	t       *testing.T
	cfg     *Config
	metrics processor.Metrics
	logs    processor.Logs
	msink   *consumertest.MetricsSink
	lsink   *consumertest.LogsSink
	proc    *costProcessor
	clock   time.Time
	logged  *observer.ObservedLogs
}

type harnessOption func(*harnessOptions)

type harnessOptions struct {
	noLogs bool
	host   component.Host
	id     component.ID
}

func withoutLogsPipeline() harnessOption { return func(o *harnessOptions) { o.noLogs = true } }
func withHost(h component.Host, id component.ID) harnessOption {
	return func(o *harnessOptions) { o.host, o.id = h, id }
}

// testConfig is the default configuration over the test price table, with a
// 4-minute window so that findings can be tested in a few batches.
func testConfig() *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.Pricing.Files = []string{"testdata/prices.csv"}
	cfg.Findings.Window = 4 * time.Minute
	cfg.Findings.MinCoverage = 0.5
	return cfg
}

func newHarness(t *testing.T, cfg *Config, opts ...harnessOption) *harness {
	t.Helper()
	o := harnessOptions{host: componenttest.NewNopHost(), id: component.NewIDWithName(metadata.Type, fmt.Sprintf("t%d", harnessSeq.Add(1)))}
	for _, opt := range opts {
		opt(&o)
	}
	require.NoError(t, cfg.Validate())
	core, logged := observer.New(zap.DebugLevel)
	set := processortest.NewNopSettings(metadata.Type)
	set.ID = o.id
	set.Logger = zap.New(core)
	set.BuildInfo.Version = "test"

	h := &harness{t: t, cfg: cfg, msink: new(consumertest.MetricsSink), lsink: new(consumertest.LogsSink), logged: logged,
		clock: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	f := NewFactory()
	var err error
	h.metrics, err = f.CreateMetrics(context.Background(), set, cfg, h.msink)
	require.NoError(t, err)
	if !o.noLogs {
		h.logs, err = f.CreateLogs(context.Background(), set, cfg, h.lsink)
		require.NoError(t, err)
	}
	c, err := instances.LoadOrStore(set.ID, func() (*costProcessor, error) { panic("the factory must have created the instance") })
	require.NoError(t, err)
	h.proc = c.Unwrap()
	h.proc.now = func() time.Time { return h.clock }

	require.NoError(t, h.metrics.Start(context.Background(), o.host))
	if h.logs != nil {
		require.NoError(t, h.logs.Start(context.Background(), o.host))
	}
	t.Cleanup(h.shutdown)
	return h
}

func (h *harness) shutdown() {
	require.NoError(h.t, h.metrics.Shutdown(context.Background()))
	if h.logs != nil {
		require.NoError(h.t, h.logs.Shutdown(context.Background()))
	}
}

// send runs one batch through the metrics side and returns what came out.
func (h *harness) send(t pcommon.Timestamp, rs ...resource) pmetric.Metrics {
	h.t.Helper()
	h.clock = h.clock.Add(time.Second)
	require.NoError(h.t, h.metrics.ConsumeMetrics(context.Background(), batch(t, rs...)))
	all := h.msink.AllMetrics()
	return all[len(all)-1]
}

func (h *harness) sendLogs(ld plog.Logs) plog.Logs {
	h.t.Helper()
	require.NoError(h.t, h.logs.ConsumeLogs(context.Background(), ld))
	all := h.lsink.AllLogs()
	return all[len(all)-1]
}

// findings are every finding record the logs sink received.
func (h *harness) findings() []plog.LogRecord {
	var out []plog.LogRecord
	for _, ld := range h.lsink.AllLogs() {
		for i := 0; i < ld.ResourceLogs().Len(); i++ {
			sls := ld.ResourceLogs().At(i).ScopeLogs()
			for j := 0; j < sls.Len(); j++ {
				lrs := sls.At(j).LogRecords()
				for k := 0; k < lrs.Len(); k++ {
					if v, ok := lrs.At(k).Attributes().Get(s.AttrEventName); ok && v.Str() == s.EventFinding {
						out = append(out, lrs.At(k))
					}
				}
			}
		}
	}
	return out
}

// costOut is what the processor added to one resource.
type costOut struct {
	found    bool
	price    float64
	cost     float64
	start, t pcommon.Timestamp
	waste    map[string]float64
	findings map[string]int64
	attrs    pcommon.Map
}

// deviceOwn, as costOf's partition id, picks the physical device's own
// resource (no hw.parent) among the resources with its hw.id.
const deviceOwn = "\x00device"

// costOf finds the resource with the given hw.id (and partition id, when
// not empty) and reads the cost scope.
func costOf(md pmetric.Metrics, hwID, partID string) costOut {
	var out costOut
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		rm := md.ResourceMetrics().At(i)
		attrs := rm.Resource().Attributes()
		if stringAttr(attrs, s.AttrHWID) != hwID {
			continue
		}
		switch {
		case partID == deviceOwn && stringAttr(attrs, s.AttrHWParent) != "":
			continue
		case partID != "" && partID != deviceOwn && stringAttr(attrs, s.AttrPartitionID) != partID:
			continue
		}
		for j := 0; j < rm.ScopeMetrics().Len(); j++ {
			sm := rm.ScopeMetrics().At(j)
			if sm.Scope().Name() != metadata.ScopeName {
				continue
			}
			out = costOut{found: true, waste: map[string]float64{}, findings: map[string]int64{}, attrs: attrs}
			for k := 0; k < sm.Metrics().Len(); k++ {
				m := sm.Metrics().At(k)
				switch m.Name() {
				case s.MetricPrice:
					out.price = m.Gauge().DataPoints().At(0).DoubleValue()
				case s.MetricCost:
					dp := m.Sum().DataPoints().At(0)
					out.cost, out.start, out.t = dp.DoubleValue(), dp.StartTimestamp(), dp.Timestamp()
				case s.MetricWaste:
					for d := 0; d < m.Sum().DataPoints().Len(); d++ {
						dp := m.Sum().DataPoints().At(d)
						r, _ := dp.Attributes().Get(s.AttrWasteReason)
						out.waste[r.Str()] = dp.DoubleValue()
					}
				case s.MetricFindings:
					for d := 0; d < m.Sum().DataPoints().Len(); d++ {
						dp := m.Sum().DataPoints().At(d)
						k, _ := dp.Attributes().Get(s.AttrFindingKind)
						out.findings[k.Str()] = dp.IntValue()
					}
				}
			}
		}
	}
	return out
}

// totalWaste sums all reasons.
func (c costOut) totalWaste() float64 {
	t := 0.0
	for _, v := range c.waste {
		t += v
	}
	return t
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// wantWaste checks every reason: the listed ones at their value, the others 0.
func wantWaste(t *testing.T, got costOut, want map[string]float64) {
	t.Helper()
	for _, r := range wasteReasons {
		if !near(got.waste[r], want[r]) {
			t.Errorf("waste %s = %.10f, want %.10f", r, got.waste[r], want[r])
		}
	}
}
