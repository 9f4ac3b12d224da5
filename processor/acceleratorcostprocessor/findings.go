package acceleratorcostprocessor

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.uber.org/zap"

	s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/mig"
	"github.com/otelcol-accel/otelcol-accel/internal/pricing"
	"github.com/otelcol-accel/otelcol-accel/internal/sharedcomponent"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorcostprocessor/internal/metadata"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorcostprocessor/internal/rightsize"
)

const gib = 1 << 30

// finding is one recommendation about one resource.
type finding struct {
	kind     int
	attrs    pcommon.Map // the resource's attributes (read-only)
	t        pcommon.Timestamp
	evidence string
	action   string
	target   string
	saving   float64 // USD per month
	// unhealthy capacity only
	healthAction, failureMode string
}

// cooldownOver: a kind of finding is raised about a resource at most once
// per findings.cooldown of data time.
func (p *costProcessor) cooldownOver(st *resourceState, kind int, t pcommon.Timestamp) bool {
	last := st.raised[kind]
	return last == 0 || t < last || time.Duration(t-last) >= p.cfg.Findings.Cooldown
}

func (p *costProcessor) raise(st *resourceState, f finding, out []finding) []finding {
	if f.saving < p.cfg.Findings.MinMonthlySaving {
		return out
	}
	st.raised[f.kind] = f.t
	st.findings[f.kind]++
	f.attrs = st.attrs
	return append(out, f)
}

// evaluate checks each kind of finding for a resource after an interval.
func (p *costProcessor) evaluate(st *resourceState, a *accrual, allocated bool, out []finding) []finding {
	if a.price <= 0 {
		// A shared device's own resource when its consumers hold it all: it
		// carries the device's readings, not money, and nothing about it
		// can be saved; its consumers' copies raise what there is to say.
		return out
	}
	if a.unavailable {
		if p.cooldownOver(st, findingUnhealthy, a.t) && !awaitingHealthEvent(a) {
			out = p.raise(st, p.unhealthy(st, a.t, a.health), out)
		}
		return out // nothing else is worth saying about a broken device
	}
	// Rightsizing, training efficiency and inference under capacity are
	// advice to whoever runs the workload: a resource that names no holder
	// (no pod, ECS task, job or workload) has nobody to act on it, and its
	// capacity, if nobody holds it, is already booked as unallocated waste.
	if !allocated || a.remainder || !a.windowOK || !st.id.hasHolder {
		return out
	}
	if p.cooldownOver(st, findingRightsizing, a.t) {
		if f, ok := p.rightsizing(st, a); ok {
			out = p.raise(st, f, out)
		}
	}
	if p.cooldownOver(st, findingTraining, a.t) {
		if f, ok := p.trainingEfficiency(st, a); ok {
			out = p.raise(st, f, out)
		}
	}
	if p.cooldownOver(st, findingInference, a.t) {
		if f, ok := p.inferenceUnderCapacity(st, a); ok {
			out = p.raise(st, f, out)
		}
	}
	return out
}

// awaitingHealthEvent: hw.status turned failed in this very interval and no
// health event has said why yet. Metrics and logs travel in separate
// pipelines, so the event that carries the recommended action (replace the
// device, reboot the node) often arrives just after the status; raising now
// would fix the finding on "contact support" for a whole cooldown. The logs
// side raises it when the event comes; otherwise the next interval does.
func awaitingHealthEvent(a *accrual) bool {
	h := a.health
	return h != nil && h.action == "" && h.statusFailed && h.statusSince == a.t
}

// migOption is the smallest MIG profile the window's peaks fit in, for a MIG
// instance or a whole MIG-capable GPU.
func (p *costProcessor) migOption(st *resourceState, a *accrual) (mig.Profile, float64, bool) {
	id := &st.id
	memGB := gpuMemoryGB(a.row, pricing.ExactMatch, id.model)
	var computeSlices, memFraction float64
	switch {
	case isMIG(id.partType):
		prof, err := mig.ParseProfile(id.profile)
		if err != nil {
			return mig.Profile{}, 0, false
		}
		computeSlices = float64(prof.ComputeSlices)
		memFraction = float64(prof.MemorySlicesOn(memGB)) / mig.MemorySlices
	case isPartitionNone(id.partType) && a.share >= 0.999 &&
		(rightsize.MIGCapable(a.row.AcceleratorModel) || rightsize.MIGCapable(id.model)):
		computeSlices, memFraction = mig.ComputeSlices, 1
	default:
		return mig.Profile{}, 0, false
	}
	h := 1 + p.cfg.Waste.Headroom
	need := rightsize.Need{
		ComputeSlices:  a.summary.PeakActivity * computeSlices * h,
		MemoryFraction: a.summary.PeakMemRatio * memFraction * h,
	}
	return rightsize.SmallestProfile(memGB, need, a.share)
}

func (p *costProcessor) rightsizing(st *resourceState, a *accrual) (finding, bool) {
	sum := &a.summary
	if !sum.HasMemory || !sum.HasActivity {
		return finding{}, false
	}
	id := &st.id
	monthly := p.cfg.MonthlyHours
	var f finding
	if prof, share, ok := p.migOption(st, a); ok {
		f = finding{
			target: prof.Name,
			saving: (a.share - share) * a.devicePrice * monthly,
			action: fmt.Sprintf("move %s to a %s MIG instance (%.3f of the GPU instead of %.3f)", workloadName(id), prof.Name, share, a.share),
		}
	}
	if isPartitionNone(id.partType) && a.row.InstanceType != pricing.AnyInstanceType && sum.PeakMemBytes > 0 {
		needGiB := sum.PeakMemBytes * (1 + p.cfg.Waste.Headroom) / gib
		if r, ok := rightsize.CheaperInstance(a.table, a.row, needGiB); ok {
			saving := (a.row.AcceleratorHourly() - r.AcceleratorHourly()) * a.share * monthly
			if saving > f.saving {
				f = finding{
					target: r.InstanceType,
					saving: saving,
					action: fmt.Sprintf("run %s on %s (%s, %.0f GB) at $%.4f instead of $%.4f per accelerator-hour",
						workloadName(id), r.InstanceType, r.AcceleratorModel, r.AcceleratorMemoryGB, r.AcceleratorHourly(), a.row.AcceleratorHourly()),
				}
			}
		}
	}
	if f.target == "" {
		return finding{}, false
	}
	f.kind, f.t = findingRightsizing, a.t
	f.evidence = evidence(
		"peak_memory_ratio", ratioStr(sum.PeakMemRatio),
		"peak_memory_gib", fmt.Sprintf("%.2f", sum.PeakMemBytes/gib),
		"peak_activity", ratioStr(sum.PeakActivity),
		"window", p.cfg.Findings.Window.String(),
		"current", currentPlacement(id, a),
		"share", ratioStr(a.share),
		"price_per_hour", money(a.price),
	)
	return f, true
}

func (p *costProcessor) trainingEfficiency(st *resourceState, a *accrual) (finding, bool) {
	id := &st.id
	mean := a.summary.MeanTraining
	if id.workloadType != s.WorkloadTraining || !a.baselineWarm || a.baseline <= 0 || math.IsNaN(mean) ||
		mean >= a.baseline*(1-p.cfg.Waste.TrainingTolerance) {
		return finding{}, false
	}
	frac := 1 - mean/a.baseline
	return finding{
		kind: findingTraining, t: a.t,
		saving: frac * a.price * p.cfg.MonthlyHours,
		target: fmt.Sprintf("%s>=%s", a.baselineKey.Signal, ratioStr(a.baseline)),
		action: fmt.Sprintf("find what starves %s%s: its %s averaged %s over %s against its own baseline of %s "+
			"(check the input pipeline and data loading, communication, batch size, and recent code or configuration changes)",
			workloadName(id), prefixed(" on ", id.model), a.baselineKey.Signal, ratioStr(mean), p.cfg.Findings.Window, ratioStr(a.baseline)),
		evidence: evidence(
			"signal", a.baselineKey.Signal,
			"window_mean", ratioStr(mean),
			"baseline", ratioStr(a.baseline),
			"tolerance", ratioStr(p.cfg.Waste.TrainingTolerance),
			"window", p.cfg.Findings.Window.String(),
			"model", id.model,
			"price_per_hour", money(a.price),
		),
	}, true
}

func (p *costProcessor) inferenceUnderCapacity(st *resourceState, a *accrual) (finding, bool) {
	id := &st.id
	sum := &a.summary
	cfg := &p.cfg.Waste
	if id.workloadType != s.WorkloadInference || !sum.HasKV || !sum.HasQueue || !sum.HasActivity ||
		sum.MaxQueue > 0 || sum.PeakActivity >= cfg.InferenceMaxActivity || sum.PeakKV >= cfg.InferenceMaxKVCache {
		return finding{}, false
	}
	load := math.Max(sum.PeakActivity, sum.PeakKV)
	frac := clamp01(1 - load/cfg.InferenceTargetUtilization)
	replicas := max(1, len(p.workloads[id.workloadKey()]))
	want := max(1, int(math.Ceil(float64(replicas)*load/cfg.InferenceTargetUtilization)))
	f := finding{kind: findingInference, t: a.t, saving: frac * a.price * p.cfg.MonthlyHours}
	switch prof, _, ok := p.migOption(st, a); {
	case want < replicas:
		f.target = fmt.Sprintf("replicas=%d", want)
		f.action = fmt.Sprintf("scale %s from %d to %d replicas: at peak it used %s of its accelerator and %s of its KV cache with nothing queued",
			workloadName(id), replicas, want, ratioStr(sum.PeakActivity), ratioStr(sum.PeakKV))
	case ok:
		f.target = prof.Name
		f.action = fmt.Sprintf("serve %s from a %s MIG instance: at peak it used %s of its accelerator and %s of its KV cache with nothing queued",
			workloadName(id), prof.Name, ratioStr(sum.PeakActivity), ratioStr(sum.PeakKV))
	default:
		f.action = fmt.Sprintf("serve %s from a smaller partition (MIG or a time-sliced share) or co-locate another model on this accelerator: "+
			"at peak it used %s of it and %s of its KV cache with nothing queued", workloadName(id), ratioStr(sum.PeakActivity), ratioStr(sum.PeakKV))
	}
	f.evidence = evidence(
		"peak_activity", ratioStr(sum.PeakActivity),
		"peak_kv_cache", ratioStr(sum.PeakKV),
		"max_waiting", fmt.Sprintf("%g", sum.MaxQueue),
		"replicas", fmt.Sprint(replicas),
		"target_utilization", ratioStr(cfg.InferenceTargetUtilization),
		"window", p.cfg.Findings.Window.String(),
		"price_per_hour", money(a.price),
	)
	return f, true
}

// unhealthy is the unhealthy-capacity finding: what the device costs while it
// can do nothing, and the action internal/xid recommends: the health
// event's, else that of the XID the device's hw.errors name
// (healthcause.go); "contact support" only when nothing says why.
func (p *costProcessor) unhealthy(st *resourceState, t pcommon.Timestamp, h *healthState) finding {
	action, mode, desc, code := s.ActionContactSupport, "", "hw.status reports the device failed", ""
	switch {
	case h != nil && h.action != "":
		action, mode = h.action, h.mode
		if h.description != "" {
			desc = h.description
		}
	case h != nil:
		if c, ok := h.failureCause(); ok {
			action, mode, code = c.Action, c.FailureMode, fmt.Sprint(c.Code)
			desc = fmt.Sprintf("XID %d, %s: %s", c.Code, c.Mnemonic, c.Description)
		}
	}
	price := st.devicePrice * st.share
	return finding{
		kind: findingUnhealthy, t: t,
		saving:       price * p.cfg.MonthlyHours,
		healthAction: action, failureMode: mode,
		target: action,
		action: fmt.Sprintf("%s: %s (%s)", action, actionBrief(action), desc),
		evidence: evidence(
			"hw.state", s.HWStateFailed,
			"failure_mode", mode,
			"xid", code,
			"price_per_hour", money(price),
		),
	}
}

func actionBrief(action string) string {
	for _, v := range s.EnumAction.Values {
		if v.Value == action {
			return v.Brief
		}
	}
	return "see the device's health events"
}

// workloadName names who a finding's advice is for, with what the
// identity has: never an empty part ("pod /x", "the workload on ").
func workloadName(id *identity) string {
	switch {
	case id.workload != "" && id.namespace != "":
		return id.namespace + "/" + id.workload
	case id.workload != "":
		return id.workload
	case id.podName != "" && id.namespace != "":
		return "pod " + id.namespace + "/" + id.podName
	case id.podName != "":
		return "pod " + id.podName
	case id.hwID != "":
		return "the workload on " + id.hwID
	default:
		return "the workload on this accelerator"
	}
}

// prefixed is prefix+v, or "" when v is empty: an optional part of a
// sentence that is left out rather than left blank.
func prefixed(prefix, v string) string {
	if v == "" {
		return ""
	}
	return prefix + v
}

func currentPlacement(id *identity, a *accrual) string {
	if isMIG(id.partType) && id.profile != "" {
		return id.profile
	}
	if a.row.InstanceType == pricing.AnyInstanceType {
		return a.row.AcceleratorModel
	}
	return a.row.InstanceType
}

func evidence(kv ...string) string {
	var b strings.Builder
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(kv[i])
		b.WriteByte('=')
		b.WriteString(kv[i+1])
	}
	return b.String()
}

func ratioStr(v float64) string { return fmt.Sprintf("%.3f", v) }
func money(v float64) string    { return fmt.Sprintf("%.4f", v) }

// appendFindings writes findings as log records into ld, one resource per
// finding carrying the device's resource attributes.
func (p *costProcessor) appendFindings(ld plog.Logs, fs []finding, now time.Time) {
	observed := pcommon.NewTimestampFromTime(now)
	for i := range fs {
		f := &fs[i]
		rl := ld.ResourceLogs().AppendEmpty()
		f.attrs.CopyTo(rl.Resource().Attributes())
		sl := rl.ScopeLogs().AppendEmpty()
		sl.Scope().SetName(metadata.ScopeName)
		sl.Scope().SetVersion(p.version)
		lr := sl.LogRecords().AppendEmpty()
		lr.SetTimestamp(f.t)
		lr.SetObservedTimestamp(observed)
		lr.SetSeverityNumber(plog.SeverityNumberWarn)
		lr.SetSeverityText("WARN")
		lr.SetEventName(s.EventFinding)
		saving := math.Round(f.saving*100) / 100
		lr.Body().SetStr(fmt.Sprintf("%s: %s; saves about $%.2f a month", findingKinds[f.kind], f.action, saving))
		attrs := lr.Attributes()
		attrs.PutStr(s.AttrEventName, s.EventFinding)
		attrs.PutStr(s.AttrFindingKind, findingKinds[f.kind])
		attrs.PutStr(s.AttrFindingEvidence, f.evidence)
		attrs.PutStr(s.AttrFindingAction, f.action)
		attrs.PutDouble(s.AttrFindingSavingMonth, saving)
		if f.target != "" {
			attrs.PutStr(s.AttrFindingTarget, f.target)
		}
		if f.healthAction != "" {
			attrs.PutStr(s.AttrHealthAction, f.healthAction)
		}
		if f.failureMode != "" {
			attrs.PutStr(s.AttrHealthFailureMode, f.failureMode)
		}
	}
}

// deliver sends findings raised on the metrics side to every logs pipeline
// this processor is in. Without one they are only counted (the
// accelerator.findings metric) and logged at debug level. A failing logs
// pipeline never fails the metrics.
func (p *costProcessor) deliver(ctx context.Context, fs []finding, now time.Time) {
	if len(fs) == 0 {
		return
	}
	p.logsMu.RLock()
	consumers := p.logs
	p.logsMu.RUnlock()
	if len(consumers) == 0 {
		for i := range fs {
			p.logger.Debug("finding (add accelerator_cost to a logs pipeline to export findings)",
				zap.String("kind", findingKinds[fs[i].kind]), zap.String("action", fs[i].action),
				zap.String("evidence", fs[i].evidence), zap.Float64("monthly_saving", fs[i].saving))
		}
		return
	}
	ld := plog.NewLogs()
	p.appendFindings(ld, fs, now)
	if refused, err := sharedcomponent.ConsumeLogsAll(ctx, consumers, ld); err != nil {
		p.warn.Warn("findings-deliver", "the logs pipeline refused cost findings; they are still counted in accelerator.findings",
			zap.Int("findings", len(fs)), zap.Int("pipelines_refusing", refused), zap.Error(err))
	}
}
