package acceleratordiagnosisprocessor

import (
	"context"
	"math"
	"sort"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.uber.org/zap"

	s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/baseline"
	"github.com/otelcol-accel/otelcol-accel/internal/latencydiagnosis"
	"github.com/otelcol-accel/otelcol-accel/internal/sharedcomponent"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratordiagnosisprocessor/internal/metadata"
)

// Baseline signals (internal/baseline Key.Signal).
const (
	signalTTFT = "ttft_p95"
	signalITL  = "itl_p95"
)

// finding is one latency_regression, ready to be written.
type finding struct {
	ep  *endpoint
	t   pcommon.Timestamp
	d   latencydiagnosis.Diagnosis
	sig latencydiagnosis.Signals
	// nodes are the nodes of the pods that served the window, sorted.
	nodes []string
}

func (p *diagnosisProcessor) judgeAll(js []judgement, now time.Time) []finding {
	var out []finding
	for i := range js {
		if f, ok := p.judge(&js[i], now); ok {
			out = append(out, f)
		}
	}
	return out
}

// p95 is the percentile judged.
const p95 = 0.95

// Why a window is not learned from (or not judged).
const (
	windowSteady   = ""
	windowQuiet    = "too few requests"
	windowWarmup   = "warm-up"
	windowTraffic  = "traffic change"
	windowSettling = "replicas changed"
)

// judge compares a closed window with the endpoint's baseline. Only a
// window of steady traffic counts (steadiness): a window within the
// baseline is folded into it unless the replicas are settling; a regressed
// one is not (the baseline stays the endpoint's normal) and, once Sustain
// windows in a row regressed, is diagnosed.
func (p *diagnosisProcessor) judge(j *judgement, now time.Time) (finding, bool) {
	e, w := j.ep, &j.w
	var sig latencydiagnosis.Signals
	// A p95 rests on the slowest 5 % of the window's observations: at
	// least min_requests of them, and min_tail in that tail.
	need := max(float64(p.cfg.MinRequests), float64(p.cfg.Rules.MinTail)/(1-p95))
	if w.ttft.total >= need {
		sig.TTFT, sig.HasTTFT = w.ttft.quantile(p95), true
	}
	if w.itl.total >= need {
		sig.ITL, sig.HasITL = w.itl.quantile(p95), true
	}
	end := pcommon.Timestamp((j.idx + 1) * int64(p.cfg.Window))
	why := p.steadiness(j, end)
	if !sig.HasTTFT && !sig.HasITL && why == windowSteady {
		why = windowQuiet
	}
	if why == windowQuiet || why == windowWarmup || why == windowTraffic {
		e.streak = 0
		if why != windowQuiet {
			p.logger.Debug("window neither judged nor learned from", zap.String("endpoint", e.key),
				zap.String("model", e.model), zap.Int64("window", j.idx), zap.String("why", why))
		}
		return finding{}, false
	}
	kTTFT := baseline.Key{Workload: e.key, Model: e.model, Signal: signalTTFT}
	kITL := baseline.Key{Workload: e.key, Model: e.model, Signal: signalITL}
	var b latencydiagnosis.Baseline
	samples := math.MaxInt
	if sig.HasTTFT {
		v, n, _ := p.baselines.Get(kTTFT)
		b.TTFT, b.TTFTSpread, b.TTFTBucketTop, samples = v, p.baselines.Spread(kTTFT), w.ttft.bucketTop(v), min(samples, n)
	}
	if sig.HasITL {
		v, n, _ := p.baselines.Get(kITL)
		b.ITL, b.ITLSpread, b.ITLBucketTop, samples = v, p.baselines.Spread(kITL), w.itl.bucketTop(v), min(samples, n)
	}
	b.Samples = samples

	if _, regressed := latencydiagnosis.Regressed(&sig, b, p.thresholds); !regressed {
		e.streak = 0
		if why == windowSettling {
			return finding{}, false
		}
		if sig.HasTTFT {
			p.baselines.Update(kTTFT, sig.TTFT, p.cfg.Window, now)
		}
		if sig.HasITL {
			p.baselines.Update(kITL, sig.ITL, p.cfg.Window, now)
		}
		return finding{}, false
	}
	if e.streak++; e.streak < p.cfg.Rules.Sustain {
		return finding{}, false
	}

	p.gather(j, &sig, end)
	d, ok := latencydiagnosis.Diagnose(sig, b, p.thresholds)
	if !ok {
		return finding{}, false
	}
	if last, ok := e.lastFinding[d.Cause]; ok && end > last && time.Duration(end-last) < p.cfg.Cooldown {
		return finding{}, false
	}
	e.lastFinding[d.Cause] = end
	e.regressions[d.Cause]++
	return finding{ep: e, t: end, d: d, sig: sig, nodes: e.nodesOf(j.idx)}, true
}

// steadiness says why a closed window is not steady traffic, "" when it
// is: too few requests to tell; within the endpoint's warm-up (a server
// starting, a new endpoint, this collector starting: partial windows, cold
// caches, traffic ramping up); a request rate outside traffic_band of the
// endpoint's typical rate (a burst or a lull: latency at another load is
// not comparable); or within settle of a change of its replicas (judged,
// not learned from). It records the window's rate and replica count.
func (p *diagnosisProcessor) steadiness(j *judgement, end pcommon.Timestamp) string {
	e, cfg := j.ep, &p.cfg.Baselines
	if j.w.ttft.total < float64(p.cfg.MinRequests) {
		return windowQuiet
	}
	rate := j.w.ttft.total / p.cfg.Window.Seconds()
	e.rates = append(e.rates, rate)
	if len(e.rates) > cfg.TrafficWindows {
		e.rates = e.rates[len(e.rates)-cfg.TrafficWindows:]
	}
	replicas := 0
	for _, seen := range e.pods {
		if seen.idx >= j.idx {
			replicas++
		}
	}
	if e.replicas != 0 && replicas != e.replicas {
		e.settleUntil = max(e.settleUntil, end+pcommon.Timestamp(cfg.Settle))
	}
	e.replicas = replicas
	start := end - pcommon.Timestamp(p.cfg.Window)
	if start < e.started+pcommon.Timestamp(cfg.Warmup) {
		return windowWarmup
	}
	if typical := median(e.rates); len(e.rates) >= 3 && (rate > typical*cfg.TrafficBand || rate < typical/cfg.TrafficBand) {
		return windowTraffic
	}
	if end <= e.settleUntil {
		return windowSettling
	}
	if ws := p.workloads[e.workload]; ws != nil && e.workload != "" && ws.changed != 0 && within(ws.changed, end, cfg.Settle+p.cfg.Window) {
		return windowSettling
	}
	return windowSteady
}

// nodesOf are the nodes of the endpoint's pods that served window idx or
// the one before it, sorted.
func (e *endpoint) nodesOf(idx int64) []string {
	set := map[string]struct{}{}
	for _, seen := range e.pods {
		if seen.idx >= idx-1 && seen.node != "" {
			set[seen.node] = struct{}{}
		}
	}
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// gather fills the signals the rules read from what the endpoint's servers,
// their pods' devices and the Kubernetes side showed in the window.
func (p *diagnosisProcessor) gather(j *judgement, sig *latencydiagnosis.Signals, end pcommon.Timestamp) {
	e, w := j.ep, &j.w
	secs := p.cfg.Window.Seconds()
	sig.HasKVCache, sig.KVCache = w.hasKV, w.kvMax
	if w.hasPreemptions {
		sig.Preemptions = w.preemptions / secs
	}
	if w.waitN > 0 && w.runN > 0 {
		sig.HasQueue = true
		sig.Waiting, sig.Running = w.waitSum/float64(w.waitN), w.runSum/float64(w.runN)
		sig.MaxRunning = float64(p.cfg.MaxRunning)
	}

	physical := map[string]struct{}{}
	for pod, seen := range e.pods {
		if seen.idx < j.idx-1 {
			continue // gone
		}
		sig.Replicas++
		ps := p.pods[pod]
		if ps == nil {
			continue
		}
		for id := range ps.devices {
			p.deviceSignals(id, j.idx, end, sig, physical)
		}
	}

	if ws := p.workloads[e.workload]; ws != nil && e.workload != "" {
		cold := 0
		for _, t := range ws.coldStarts {
			if within(t, end, p.cfg.Recent) {
				cold++
			}
		}
		var added int64
		for _, u := range ws.scaleUps {
			if within(u.t, end, p.cfg.Recent) {
				added += u.added
			}
		}
		sig.ColdReplicas = max(cold, int(added))
		if sig.Replicas < sig.ColdReplicas {
			sig.Replicas = sig.ColdReplicas
		}
		if ws.imbalanced(end, p.cfg.Recent) {
			sig.ZoneImbalance = ws.imbalance
		}
	}
}

// deviceSignals adds one device a pod holds: its activity (the device's
// own, else its physical device's), the physical device's throttling and
// recent errors (counted once per physical device), and on a consumer's
// copy of a shared GPU the other consumers' activity.
func (p *diagnosisProcessor) deviceSignals(id string, idx int64, end pcommon.Timestamp, sig *latencydiagnosis.Signals, physical map[string]struct{}) {
	d := p.devices[id]
	if d == nil {
		return
	}
	phys, pd := id, d
	if d.parent != "" {
		phys = d.parent
		pd = p.devices[phys]
	}
	own := d.get(idx)
	var pw *devWindow
	if pd != nil {
		pw = pd.get(idx)
	}
	for _, dw := range []*devWindow{own, pw} {
		if dw == nil || (dw.smN == 0 && dw.tensorN == 0) {
			continue
		}
		sig.HasActivity = true
		if dw.smN > 0 {
			sig.SMActive = max(sig.SMActive, dw.sm/float64(dw.smN))
		}
		if dw.tensorN > 0 {
			sig.TensorActive = max(sig.TensorActive, dw.tensor/float64(dw.tensorN))
		}
		break
	}
	for _, dw := range []*devWindow{own, pw} {
		if dw == nil || !dw.throttleSeen {
			continue
		}
		sig.HasThrottle = true
		sig.PowerThrottle = max(sig.PowerThrottle, dw.power/float64(dw.powerN))
		sig.ThermalThrottle = max(sig.ThermalThrottle, dw.thermal/float64(dw.thermalN))
	}
	for _, hid := range []string{id, phys} {
		if _, done := physical[hid]; done {
			continue
		}
		physical[hid] = struct{}{}
		if hd := p.devices[hid]; hd != nil {
			for _, h := range hd.health {
				if !within(h.t, end, p.cfg.Recent) {
					continue
				}
				if h.xid {
					sig.XIDs++
				} else {
					sig.ECC++
				}
			}
		}
		if phys == id {
			break
		}
	}
	if d.shared && d.parent != "" {
		sig.Shared = true
		var others float64
		for kid := range p.children[d.parent] {
			if kid == id {
				continue
			}
			if kd := p.devices[kid]; kd != nil && kd.pod != d.pod {
				if kw := kd.get(idx); kw != nil && kw.procN > 0 {
					others += kw.proc / float64(kw.procN)
				}
			}
		}
		sig.NeighbourActivity = max(sig.NeighbourActivity, math.Min(others, 1))
	}
}

// appendFindings writes findings as log records in the shape of every
// other finding (event.name accelerator.finding, kind, evidence, action),
// one resource per finding carrying the endpoint's attributes and where it
// runs: k8s.node.name when its pods are on one node, else
// accelerator.finding.nodes.
func (p *diagnosisProcessor) appendFindings(ld plog.Logs, fs []finding, now time.Time) {
	observed := pcommon.NewTimestampFromTime(now)
	for i := range fs {
		f := &fs[i]
		rl := ld.ResourceLogs().AppendEmpty()
		res := rl.Resource().Attributes()
		f.ep.res.CopyTo(res)
		if len(f.nodes) == 1 {
			res.PutStr(s.AttrK8sNodeName, f.nodes[0])
		}
		sl := rl.ScopeLogs().AppendEmpty()
		sl.Scope().SetName(metadata.ScopeName)
		sl.Scope().SetVersion(p.version)
		lr := sl.LogRecords().AppendEmpty()
		lr.SetTimestamp(f.t)
		lr.SetObservedTimestamp(observed)
		lr.SetSeverityNumber(plog.SeverityNumberWarn)
		lr.SetSeverityText("WARN")
		lr.SetEventName(s.EventFinding)
		lr.Body().SetStr(findingBody(f))
		a := lr.Attributes()
		a.PutStr(s.AttrEventName, s.EventFinding)
		a.PutStr(s.AttrFindingKind, s.FindingLatencyRegression)
		a.PutStr(s.AttrFindingCause, f.d.Cause)
		a.PutStr(s.AttrFindingEvidence, "cause="+f.d.Cause+" "+f.d.Evidence)
		a.PutStr(s.AttrFindingAction, f.d.Action)
		if len(f.d.Also) > 0 {
			a.PutStr(s.AttrFindingAlso, strings.Join(f.d.Also, ","))
		}
		if len(f.nodes) > 1 {
			a.PutStr(s.AttrFindingNodes, strings.Join(f.nodes, ","))
		}
	}
}

// findingBody is the finding in one sentence: the endpoint (and its model),
// where it runs when known, the cause and the action.
func findingBody(f *finding) string {
	var b strings.Builder
	b.WriteString(s.FindingLatencyRegression + " of " + f.ep.key)
	if f.ep.model != "" {
		b.WriteString(" (" + f.ep.model + ")")
	}
	if where := s.NodesPhrase(f.nodes); where != "" {
		b.WriteString(" on " + where)
	}
	b.WriteString(": " + f.d.Cause + "; " + f.d.Action)
	return b.String()
}

// deliver sends findings to every logs pipeline this processor is in.
// Without one they are only counted and logged at debug level; a failing
// logs pipeline never fails the metrics.
func (p *diagnosisProcessor) deliver(ctx context.Context, fs []finding, now time.Time) {
	if len(fs) == 0 {
		return
	}
	p.logsMu.RLock()
	consumers := p.logs
	p.logsMu.RUnlock()
	if len(consumers) == 0 {
		for i := range fs {
			p.logger.Debug("latency regression (add accelerator_diagnosis to a logs pipeline to export findings)",
				zap.String("endpoint", fs[i].ep.key), zap.String("cause", fs[i].d.Cause), zap.String("evidence", fs[i].d.Evidence))
		}
		return
	}
	ld := plog.NewLogs()
	p.appendFindings(ld, fs, now)
	if refused, err := sharedcomponent.ConsumeLogsAll(ctx, consumers, ld); err != nil {
		p.warn.Warn("findings-deliver", "the logs pipeline refused latency_regression findings; they are still counted in "+s.MetricLatencyRegressions,
			zap.Int("findings", len(fs)), zap.Int("pipelines_refusing", refused), zap.Error(err))
	}
}

// appendRegressions writes the regressions counter of each endpoint judged
// in this batch that has regressed at least once.
func (p *diagnosisProcessor) appendRegressions(md pmetric.Metrics, js []judgement) {
	done := map[*endpoint]bool{}
	for i := range js {
		e := js[i].ep
		if done[e] || len(e.regressions) == 0 {
			continue
		}
		done[e] = true
		rm := md.ResourceMetrics().AppendEmpty()
		e.res.CopyTo(rm.Resource().Attributes())
		sm := rm.ScopeMetrics().AppendEmpty()
		sm.Scope().SetName(metadata.ScopeName)
		sm.Scope().SetVersion(p.version)
		m := sm.Metrics().AppendEmpty()
		m.SetName(regressionsDef.Name)
		m.SetUnit(regressionsDef.Unit)
		m.SetDescription(regressionsDef.Brief)
		sum := m.SetEmptySum()
		sum.SetIsMonotonic(true)
		sum.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
		at := pcommon.Timestamp((js[i].idx + 1) * int64(p.cfg.Window))
		for _, cause := range s.EnumFindingCause.Values {
			n, ok := e.regressions[cause.Value]
			if !ok {
				continue
			}
			dp := sum.DataPoints().AppendEmpty()
			dp.SetStartTimestamp(e.started)
			dp.SetTimestamp(at)
			dp.SetIntValue(n)
			dp.Attributes().PutStr(s.AttrRegressionCause, cause.Value)
		}
	}
}

// regressionsDef is the counter's entry in internal/accelschema, so what is
// exported says what docs/metrics.md says.
var regressionsDef = s.MustMetric("accelerator_diagnosis", s.MetricLatencyRegressions)
