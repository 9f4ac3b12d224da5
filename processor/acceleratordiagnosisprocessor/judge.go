package acceleratordiagnosisprocessor

import (
	"context"
	"math"
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

// judge compares a closed window with the endpoint's baseline. A window
// within it is folded into the baseline; a regressed one is not (the
// baseline stays the endpoint's normal) and is diagnosed.
func (p *diagnosisProcessor) judge(j *judgement, now time.Time) (finding, bool) {
	e, w := j.ep, &j.w
	var sig latencydiagnosis.Signals
	minReq := float64(p.cfg.MinRequests)
	if w.ttft.total >= minReq {
		sig.TTFT, sig.HasTTFT = w.ttft.quantile(0.95), true
	}
	if w.itl.total >= minReq {
		sig.ITL, sig.HasITL = w.itl.quantile(0.95), true
	}
	if !sig.HasTTFT && !sig.HasITL {
		return finding{}, false
	}
	end := pcommon.Timestamp((j.idx + 1) * int64(p.cfg.Window))
	kTTFT := baseline.Key{Workload: e.key, Model: e.model, Signal: signalTTFT}
	kITL := baseline.Key{Workload: e.key, Model: e.model, Signal: signalITL}
	var b latencydiagnosis.Baseline
	samples := math.MaxInt
	if sig.HasTTFT {
		v, n, _ := p.baselines.Get(kTTFT)
		b.TTFT, samples = v, min(samples, n)
	}
	if sig.HasITL {
		v, n, _ := p.baselines.Get(kITL)
		b.ITL, samples = v, min(samples, n)
	}
	b.Samples = samples

	if _, regressed := latencydiagnosis.Regressed(&sig, b, p.thresholds); !regressed {
		if sig.HasTTFT {
			p.baselines.Update(kTTFT, sig.TTFT, p.cfg.Window, now)
		}
		if sig.HasITL {
			p.baselines.Update(kITL, sig.ITL, p.cfg.Window, now)
		}
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
	return finding{ep: e, t: end, d: d, sig: sig}, true
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
	for pod, last := range e.pods {
		if last < j.idx-1 {
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
// one resource per finding carrying the endpoint's attributes.
func (p *diagnosisProcessor) appendFindings(ld plog.Logs, fs []finding, now time.Time) {
	observed := pcommon.NewTimestampFromTime(now)
	for i := range fs {
		f := &fs[i]
		rl := ld.ResourceLogs().AppendEmpty()
		f.ep.res.CopyTo(rl.Resource().Attributes())
		sl := rl.ScopeLogs().AppendEmpty()
		sl.Scope().SetName(metadata.ScopeName)
		sl.Scope().SetVersion(p.version)
		lr := sl.LogRecords().AppendEmpty()
		lr.SetTimestamp(f.t)
		lr.SetObservedTimestamp(observed)
		lr.SetSeverityNumber(plog.SeverityNumberWarn)
		lr.SetSeverityText("WARN")
		lr.SetEventName(s.EventFinding)
		name := f.ep.key
		if f.ep.model != "" {
			name += " (" + f.ep.model + ")"
		}
		lr.Body().SetStr(s.FindingLatencyRegression + " of " + name + ": " + f.d.Cause + "; " + f.d.Action)
		a := lr.Attributes()
		a.PutStr(s.AttrEventName, s.EventFinding)
		a.PutStr(s.AttrFindingKind, s.FindingLatencyRegression)
		a.PutStr(s.AttrFindingCause, f.d.Cause)
		a.PutStr(s.AttrFindingEvidence, "cause="+f.d.Cause+" "+f.d.Evidence)
		a.PutStr(s.AttrFindingAction, f.d.Action)
		if len(f.d.Also) > 0 {
			a.PutStr(s.AttrFindingAlso, strings.Join(f.d.Also, ","))
		}
	}
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
