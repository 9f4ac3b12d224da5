package acceleratorattributesprocessor

import (
	"errors"
	"sort"
	"strings"

	"go.opentelemetry.io/collector/component/componentstatus"
	"go.uber.org/zap"

	"github.com/otelcol-accel/otelcol-accel/internal/podresources"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/ecs"
)

// Sources, as they are named in status and log messages.
const (
	sourceKubelet = "kubelet PodResources"
	sourceAPI     = "Kubernetes API"
	sourceECS     = "ECS (Docker API)"
)

type problem struct {
	msg string
}

// setProblem records that a source does not work. The message is logged
// at once when it is new or different, then at most every logInterval.
func (p *attributesProcessor) setProblem(source, msg string) {
	p.statusMu.Lock()
	prev, had := p.problems[source]
	p.problems[source] = problem{msg: msg}
	p.statusMu.Unlock()
	key := "problem/" + source
	if !had || prev.msg != msg {
		p.rl.Reset(key)
	}
	// A warning, not an error: the pipeline keeps flowing and the status
	// says the same; an error-level line would also carry a stack trace.
	p.rl.Warn(key, "accelerator_attributes: "+source+" unavailable, attribution degraded", zap.String("fix", msg))
}

// clearProblem records that a source works (again).
func (p *attributesProcessor) clearProblem(source string) {
	p.statusMu.Lock()
	_, had := p.problems[source]
	delete(p.problems, source)
	p.statusMu.Unlock()
	if had {
		p.rl.Reset("problem/" + source)
		p.logger.Info("accelerator_attributes: " + source + " works again")
	}
}

// reportStatus tells the host when the set of problems changes: a
// recoverable error naming every broken source and its fix, or OK.
func (p *attributesProcessor) reportStatus() {
	p.statusMu.Lock()
	sources := make([]string, 0, len(p.problems))
	for s := range p.problems {
		sources = append(sources, s)
	}
	sort.Strings(sources)
	var b strings.Builder
	for i, s := range sources {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(s + ": " + p.problems[s].msg)
	}
	summary := b.String()
	changed := summary != p.reported
	p.reported = summary
	host := p.host
	p.statusMu.Unlock()
	if !changed || host == nil {
		return
	}
	if summary == "" {
		componentstatus.ReportStatus(host, componentstatus.NewEvent(componentstatus.StatusOK))
		return
	}
	componentstatus.ReportStatus(host, componentstatus.NewRecoverableErrorEvent(errors.New("accelerator_attributes degraded: "+summary)))
}

func kubeletMessage(err error) string {
	var perr *podresources.Error
	if errors.As(err, &perr) {
		msg := perr.Hint()
		if perr.Kind == podresources.KindSocketMissing || perr.Kind == podresources.KindPermission {
			msg += "; until then devices pass through without pod attribution"
		}
		return msg + " (" + err.Error() + ")"
	}
	return err.Error()
}

func ecsMessage(err error) string {
	var e *ecs.Error
	if errors.As(err, &e) && e.Hint != "" {
		return e.Hint + " (" + err.Error() + ")"
	}
	return err.Error()
}
