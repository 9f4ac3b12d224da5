package acceleratorinsightsexporter

import (
	"errors"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"

	"github.com/otelcol-accel/otelcol-accel/internal/remediationplans"
)

// remediationType is the component type the remediation key must name.
const remediationType = "accelerator_remediation"

// remediationStartWait is how long after Start the named remediation
// exporter may take to register. The collector starts exporters in an order
// of its own, so it may come after this one; once every component of the
// pipelines has started it is there, or it is not in a pipeline at all.
// (A variable so tests can shorten it.)
var remediationStartWait = 2 * time.Minute

// plansAPI shows the plans of the accelerator_remediation exporter named by
// the remediation key and takes approvals for it (internal/remediationplans).
// It holds no plan itself: every answer is the exporter's current snapshot.
type plansAPI struct {
	id      *component.ID // nil: no remediation configured
	token   string
	writers *writers // set by Start

	mu      sync.Mutex
	problem string // why the plans cannot be shown ("" when they can)
	stop    chan struct{}
	done    sync.WaitGroup
}

func newPlansAPI(id *component.ID, token string) *plansAPI {
	p := &plansAPI{id: id, token: token, stop: make(chan struct{})}
	if id != nil {
		p.problem = fmt.Sprintf("waiting for exporter %q to start", id)
	}
	return p
}

// start waits, in the background, for the remediation exporter to register.
// If it does not within remediationStartWait, it is not running in this
// collector (named under exporters: but in no pipeline, or misspelt): that
// is a configuration error, reported as fatal so the collector stops with
// a message saying what to fix.
func (p *plansAPI) start(host component.Host) {
	if p.id == nil {
		return
	}
	p.done.Add(1)
	go func() {
		defer p.done.Done()
		deadline := time.NewTimer(remediationStartWait)
		defer deadline.Stop()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			if _, ok := remediationplans.Lookup(*p.id); ok {
				p.setProblem("")
				return
			}
			select {
			case <-p.stop:
				return
			case <-deadline.C:
				err := p.notRunning()
				p.setProblem(err.Error())
				componentstatus.ReportStatus(host, componentstatus.NewFatalErrorEvent(err))
				return
			case <-tick.C:
			}
		}
	}()
}

func (p *plansAPI) shutdown() {
	select {
	case <-p.stop:
	default:
		close(p.stop)
	}
	p.done.Wait()
}

func (p *plansAPI) notRunning() error {
	running := remediationplans.IDs()
	return fmt.Errorf("remediation: exporter %q is not running in this collector (%d s after start; running: %v): "+
		"add it under `exporters:` and to a logs pipeline in `service.pipelines`, or remove the remediation key",
		p.id, int(remediationStartWait.Seconds()), running)
}

func (p *plansAPI) setProblem(s string) {
	p.mu.Lock()
	p.problem = s
	p.mu.Unlock()
}

// source is the running remediation exporter, or why there is none.
func (p *plansAPI) source() (remediationplans.Source, error) {
	if p.id == nil {
		return nil, errNoRemediation
	}
	if s, ok := remediationplans.Lookup(*p.id); ok {
		return s, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.problem != "" {
		return nil, errors.New(p.problem)
	}
	return nil, fmt.Errorf("exporter %q is not running (it stopped?)", p.id)
}

var errNoRemediation = errors.New("no remediation exporter is configured: set `remediation: accelerator_remediation` (its component id) on accelerator_insights")

func (p *plansAPI) routes(mux *routeMux) {
	mux.HandleFunc("GET /api/v1/plans", p.list)
	mux.HandleFunc("POST /api/v1/plans/{id}/approve", p.approve)
}

// planJSON is a plan as the API shows it: the exporter's snapshot and
// whether the console may approve it.
type planJSON struct {
	remediationplans.Plan
	AwaitingApproval bool `json:"awaiting_approval"`
}

// plansAnswer is GET /api/v1/plans.
type plansAnswer struct {
	// Remediation is the configured exporter's id ("" when none is).
	Remediation string `json:"remediation"`
	// Running: that exporter is running and answered.
	Running bool `json:"running"`
	// Problem says why there are no plans to show ("" when running).
	Problem          string     `json:"problem"`
	Total            int        `json:"total"`
	AwaitingApproval int        `json:"awaiting_approval"`
	Plans            []planJSON `json:"plans"`
}

var planFilterKeys = map[string]bool{"node": true, "device": true, "state": true}

func (p *plansAPI) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	for k := range q {
		if !planFilterKeys[k] {
			writeError(w, http.StatusBadRequest, fmt.Errorf("unknown parameter %q (plans take node, device, state)", k))
			return
		}
	}
	out := plansAnswer{Plans: []planJSON{}}
	if p.id != nil {
		out.Remediation = p.id.String()
	}
	src, err := p.source()
	if err != nil {
		out.Problem = err.Error()
		writeJSON(w, http.StatusOK, out)
		return
	}
	out.Running = true
	nodes, devices, states := set(q["node"]), set(q["device"]), set(q["state"])
	for _, pl := range src.Plans() {
		if !match(nodes, pl.Subject.Node) || !match(devices, pl.Subject.DeviceID) || !match(states, pl.State) {
			continue
		}
		out.Plans = append(out.Plans, planJSON{Plan: pl, AwaitingApproval: pl.AwaitingApproval()})
	}
	// Plans waiting for a decision first, then the newest.
	sort.SliceStable(out.Plans, func(i, j int) bool {
		a, b := out.Plans[i], out.Plans[j]
		if a.AwaitingApproval != b.AwaitingApproval {
			return a.AwaitingApproval
		}
		if !a.Created.Equal(b.Created) {
			return a.Created.After(b.Created)
		}
		return a.ID < b.ID
	})
	out.Total = len(out.Plans)
	for _, pl := range out.Plans {
		if pl.AwaitingApproval {
			out.AwaitingApproval++
		}
	}
	writeJSON(w, http.StatusOK, out)
}

func set(vs []string) map[string]bool {
	if len(vs) == 0 {
		return nil
	}
	m := make(map[string]bool, len(vs))
	for _, v := range vs {
		m[v] = true
	}
	return m
}

func match(m map[string]bool, v string) bool { return m == nil || m[v] }

// approveAnswer is POST /api/v1/plans/{id}/approve: the plan as it is now
// (the engine takes the approval on its next tick, so its state may still
// be awaiting_approval) and who the approval names.
type approveAnswer struct {
	Plan       planJSON `json:"plan"`
	ApprovedBy string   `json:"approved_by"`
	Via        string   `json:"via"`
}

func (p *plansAPI) approve(w http.ResponseWriter, r *http.Request) {
	who, ok := p.writers.authorize(w, r, p.token)
	if !ok {
		return
	}
	// The approval takes no note (the audit records who and how); a body
	// is still checked as acknowledge/dismiss check theirs.
	if _, ok := readNote(w, r); !ok {
		return
	}
	src, err := p.source()
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, err)
		return
	}
	id := r.PathValue("id")
	err = src.Approve(r.Context(), id, who)
	switch {
	case errors.Is(err, remediationplans.ErrUnknownPlan):
		writeError(w, http.StatusNotFound, err)
		return
	case errors.Is(err, remediationplans.ErrNotAwaiting):
		writeError(w, http.StatusConflict, err)
		return
	case err != nil:
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	out := approveAnswer{ApprovedBy: who, Via: remediationplans.Via}
	for _, pl := range src.Plans() {
		if pl.ID == id {
			out.Plan = planJSON{Plan: pl, AwaitingApproval: pl.AwaitingApproval()}
		}
	}
	writeJSON(w, http.StatusOK, out)
}
