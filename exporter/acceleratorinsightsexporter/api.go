package acceleratorinsightsexporter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorinsightsexporter/internal/fleet"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorinsightsexporter/internal/logstore"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorinsightsexporter/internal/metadata"
	"github.com/otelcol-accel/otelcol-accel/internal/componenthealth"
)

// viewTTL: a view is rebuilt at most this often, so a page's parallel
// requests (and a fleet of browsers) cost one snapshot. A request that finds
// the view older is answered from it while one rebuild runs in the
// background (a 10,000-device rebuild takes longer than a page may wait),
// unless it is older than maxStale or the metrics were invalidated; a write
// (acknowledge, dismiss) only re-reads the logs side (View.WithLogs). The
// keeper (viewkeeper.go) rebuilds in the background too, so that a request
// finds the view current and the answers it asked of the last view already
// made: no request waits for a rebuild but the first one and, with the
// Prometheus backend, one after maxStale without requests.
const (
	viewTTL  = time.Second
	maxStale = 30 * time.Second
)

// api serves /api/v1/.
type api struct {
	backend    backend
	logs       *logstore.Store
	idle       float64
	rateWindow time.Duration
	retention  time.Duration
	token      string
	version    string
	now        func() time.Time
	warn       *componenthealth.Logger
	tel        *metadata.TelemetryBuilder
	writers    *writers // set by Start
	audit      *zap.Logger

	mu         sync.Mutex
	view       *fleet.View
	viewAt     time.Time
	generation uint64 // bumped by every synchronous rebuild and invalidation
	dirty      bool   // the metrics were invalidated: rebuild before answering
	logsDirty  bool   // a write changed the logs side: re-read it before answering
	refreshing bool
	refreshes  sync.WaitGroup
	// viewVersion is the sources' version the view was built from;
	// lastRequest when a view was last asked for (the keeper's cue).
	viewVersion uint64
	lastRequest time.Time
	keeper      *keeper
	// problem is why the last rebuild failed (empty once one works): the
	// view is then the last good one, older than it should be, and the
	// answers say so (session, X-Insights-Backend-Problem).
	problem      string
	problemSince time.Time
	// answers are the encoded answers of this view, by URL: a view does
	// not change, so a page's parallel requests and a room of browsers
	// cost one computation each per view. recipes say how each was made,
	// so that a background rebuild makes them again for the next view
	// before it is swapped in.
	answers map[string][]byte
	recipes map[string]recipe
}

func (a *api) routes(mux *routeMux) {
	mux.HandleFunc("GET /api/v1/session", a.session)
	mux.HandleFunc("GET /api/v1/filters", a.withView(nil, func(v *fleet.View, _ fleet.Filter, _ *http.Request) (any, error) {
		return v.Filters(), nil
	}))
	mux.HandleFunc("GET /api/v1/fleet", a.withView(nil, func(v *fleet.View, f fleet.Filter, _ *http.Request) (any, error) {
		return v.Fleet(f), nil
	}))
	mux.HandleFunc("GET /api/v1/devices", a.withView([]string{"page", "page_size", "sort"}, a.devices))
	mux.HandleFunc("GET /api/v1/device", a.withViewMemo([]string{"id", "window", "node"}, a.device, false))
	mux.HandleFunc("GET /api/v1/pod", a.withView([]string{"name"}, a.pod))
	mux.HandleFunc("GET /api/v1/teams", a.withView(nil, func(v *fleet.View, f fleet.Filter, _ *http.Request) (any, error) {
		return v.Teams(f), nil
	}))
	mux.HandleFunc("GET /api/v1/findings", a.withView([]string{"state", "kind"}, a.findings))
	mux.HandleFunc("POST /api/v1/findings/{id}/{action}", a.decide)
	mux.HandleFunc("GET /api/v1/inference", a.withView(nil, func(v *fleet.View, f fleet.Filter, _ *http.Request) (any, error) {
		return v.Inference(f), nil
	}))
	mux.HandleFunc("GET /api/v1/capacity", a.withView(nil, func(v *fleet.View, f fleet.Filter, _ *http.Request) (any, error) {
		return v.Capacity(f), nil
	}))
	mux.HandleFunc("GET /api/v1/reliability", a.withView([]string{"window"}, func(v *fleet.View, f fleet.Filter, r *http.Request) (any, error) {
		w, err := windowParam(r, time.Hour)
		if err != nil {
			return nil, err
		}
		return v.Reliability(f, w), nil
	}))
	mux.HandleFunc("GET /api/v1/events", a.withView([]string{"device", "window"}, func(v *fleet.View, f fleet.Filter, r *http.Request) (any, error) {
		w, err := windowParam(r, time.Hour)
		if err != nil {
			return nil, err
		}
		return v.Events(f, r.URL.Query().Get("device"), v.Now().Add(-w), 1000), nil
	}))
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeError(w, http.StatusMethodNotAllowed, fmt.Errorf("the API is read-only: %s %s is refused (the writes are POST /api/v1/findings/{id}/acknowledge|dismiss|reopen and POST /api/v1/plans/{id}/approve)", r.Method, r.URL.Path))
			return
		}
		writeError(w, http.StatusNotFound, fmt.Errorf("no API endpoint %s %s (see docs/insights.md)", r.Method, r.URL.Path))
	})
}

// badRequest is an error the client made.
type badRequest struct{ error }

// notFound is an id the model does not hold.
type notFound struct{ error }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	_ = enc.Encode(v)
}

func writeError(w http.ResponseWriter, status int, err error) {
	writeJSON(w, status, map[string]string{"error": err.Error()})
}

// currentView returns the view: fresh (younger than viewTTL), else the
// previous one while a background rebuild runs, else (none yet, older than
// maxStale, or its metrics invalidated) one built now. A failed or
// incomplete rebuild never replaces a good view: the last good one is
// answered from, and the problem reported.
func (a *api) currentView(ctx context.Context) (*fleet.View, error) {
	a.mu.Lock()
	now := a.now()
	a.lastRequest = now
	a.startKeeper()
	if a.view != nil && a.logsDirty && !a.dirty {
		a.mu.Unlock()
		a.relog()
		a.mu.Lock()
	}
	age := now.Sub(a.viewAt)
	if a.view != nil && !a.dirty && !a.logsDirty && !now.Before(a.viewAt) {
		if age < viewTTL {
			v := a.view
			a.mu.Unlock()
			return v, nil
		}
		if age < maxStale {
			if !a.refreshing {
				a.refreshing = true
				a.refreshes.Add(1)
				go a.refresh(a.generation)
			}
			v := a.view
			a.mu.Unlock()
			return v, nil
		}
	}
	a.generation++
	gen := a.generation
	a.mu.Unlock()
	v, err := a.build(ctx, gen, triggerRequest)
	if err == nil {
		return v, nil
	}
	a.warn.Warn("backend", "the console's backend did not answer fully; pages show the last good view", zap.String("backend", a.backend.Name()), zap.Error(err))
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.view != nil {
		return a.view, nil
	}
	return nil, err
}

// build makes a view and keeps it unless a newer build or a write came
// first. A background rebuild (trigger) makes the answers the last view was
// asked for before the swap, so that no request computes them.
func (a *api) build(ctx context.Context, gen uint64, trigger string) (*fleet.View, error) {
	start := time.Now()
	at := a.now()
	// Read before the snapshot: a batch that lands during it shows as a
	// change, and the keeper rebuilds again.
	ver := a.sourceVersion()
	snap, err := a.backend.Snapshot(ctx)
	if err != nil {
		a.mu.Lock()
		if a.problem == "" {
			a.problemSince = at
		}
		a.problem = err.Error()
		a.mu.Unlock()
		return nil, err
	}
	logs := a.logs.Snapshot()
	v := fleet.NewView(snap, &logs, a.idle)
	answers, recipes := map[string][]byte{}, map[string]recipe{}
	if trigger == triggerBackground {
		answers, recipes = a.warm(ctx, v)
	}
	a.recordBuild(trigger, time.Since(start))
	a.mu.Lock()
	defer a.mu.Unlock()
	a.problem, a.problemSince = "", time.Time{}
	if gen == a.generation {
		a.view, a.viewAt, a.answers, a.recipes, a.dirty, a.logsDirty = v, at, answers, recipes, false, false
		a.viewVersion = ver
	}
	return v, nil
}

// relog replaces the view by one of the same snapshot with the logs side
// as it is now (after a write): no rebuild of the fleet.
func (a *api) relog() {
	start := time.Now()
	a.mu.Lock()
	v, gen := a.view, a.generation
	a.mu.Unlock()
	ver := a.sourceVersion()
	logs := a.logs.Snapshot()
	nv := v.WithLogs(&logs)
	a.recordBuild(triggerWrite, time.Since(start))
	a.mu.Lock()
	defer a.mu.Unlock()
	if gen == a.generation && a.view == v && !a.dirty {
		a.view, a.answers, a.recipes, a.logsDirty = nv, map[string][]byte{}, map[string]recipe{}, false
		// The metrics are as old as they were; only a newer metrics
		// version may make the keeper rebuild.
		a.viewVersion = min(a.viewVersion, ver)
	}
}

// backendProblem is why the view is older than it should be ("" when it
// is not) and since when.
func (a *api) backendProblem() (string, time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.problem, a.problemSince
}

// refresh rebuilds the view in the background.
func (a *api) refresh(gen uint64) {
	defer a.refreshes.Done()
	ctx, cancel := context.WithTimeout(context.Background(), maxStale)
	defer cancel()
	if _, err := a.build(ctx, gen, triggerBackground); err != nil {
		a.warn.Warn("backend", "the console's backend did not answer fully; pages show the last good view", zap.String("backend", a.backend.Name()), zap.Error(err))
	}
	a.mu.Lock()
	a.refreshing = false
	a.mu.Unlock()
}

// invalidate marks the whole view wrong (tests that feed the model), so the
// next request rebuilds it (and, should that fail, still has it to answer
// from). Its encoded answers go at once.
func (a *api) invalidate() {
	a.mu.Lock()
	a.dirty = true
	a.answers, a.recipes = nil, nil
	a.generation++
	a.mu.Unlock()
}

// invalidateLogs marks the logs side of the view wrong after a write: the
// next request re-reads it (relog), the fleet is not rebuilt.
func (a *api) invalidateLogs() {
	a.mu.Lock()
	a.logsDirty = true
	a.answers, a.recipes = nil, nil
	a.generation++
	a.mu.Unlock()
}

// wait returns once no background work runs (Shutdown; tests): the keeper
// stops (the next request starts it again) and the rebuilds end.
func (a *api) wait() {
	a.stopKeeper()
	a.refreshes.Wait()
}

type viewFunc func(v *fleet.View, f fleet.Filter, r *http.Request) (any, error)

// maxAnswers bounds the answers kept per view (distinct URLs).
const maxAnswers = 256

func (a *api) answer(v *fleet.View, key string) ([]byte, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.view != v || a.answers == nil {
		return nil, false
	}
	b, ok := a.answers[key]
	return b, ok
}

func (a *api) keep(v *fleet.View, key string, body []byte, rc recipe) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.view == v && a.answers != nil && len(a.answers) < maxAnswers {
		a.answers[key] = body
		if a.recipes != nil {
			a.recipes[key] = rc
		}
	}
}

// withView answers from the current view; memo answers are kept for the
// view's life (not the device page, whose charts are read live).
func (a *api) withView(extra []string, fn viewFunc) http.HandlerFunc {
	return a.withViewMemo(extra, fn, true)
}

func (a *api) withViewMemo(extra []string, fn viewFunc, memo bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		f, err := fleet.ParseFilter(r.URL.Query(), extra...)
		if err != nil {
			writeError(w, http.StatusBadRequest, err)
			return
		}
		v, err := a.currentView(r.Context())
		if err != nil {
			writeError(w, http.StatusBadGateway, fmt.Errorf("%s backend: %w", a.backend.Name(), err))
			return
		}
		if problem, _ := a.backendProblem(); problem != "" {
			w.Header().Set(problemHeader, problem[:min(len(problem), 512)])
		}
		key := r.URL.Path + "?" + r.URL.RawQuery
		if memo {
			if body, ok := a.answer(v, key); ok {
				w.Header().Set("Content-Type", "application/json; charset=utf-8")
				_, _ = w.Write(body)
				return
			}
		}
		rc := recipe{fn: fn, filter: f, url: r.URL}
		body, status, err := rc.render(v, r)
		if err != nil {
			writeError(w, status, err)
			return
		}
		if memo {
			a.keep(v, key, body, rc)
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_, _ = w.Write(body)
	}
}

// problemHeader carries, on a view's answers, why the view is the last
// good one rather than a fresh one.
const problemHeader = "X-Insights-Backend-Problem"

func (a *api) session(w http.ResponseWriter, r *http.Request) {
	problem, since := a.backendProblem()
	var problemSince any
	if problem != "" {
		problemSince = since.UTC()
	}
	// read_only and write_refused tell the page to disable its buttons and
	// why; user is who this client's writes would be recorded as.
	user, refused := a.writers.identity(r)
	readOnly := a.writers.readOnly()
	refusal := ""
	if refused != nil {
		refusal = refused.Error()
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"read_only": readOnly != "", "read_only_reason": readOnly, "user": user, "write_refused": refusal,
		"csrf_token": a.token, "backend": a.backend.Name(), "version": a.version,
		"retention_seconds": a.retention.Seconds(), "rate_window_seconds": a.rateWindow.Seconds(),
		"generated_at":    a.now().UTC(),
		"backend_problem": problem, "backend_problem_since": problemSince,
	})
}

func intParam(r *http.Request, key string, def, lo, hi int) (int, error) {
	s := r.URL.Query().Get(key)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, badRequest{fmt.Errorf("%s: %q is not a whole number %d..%d", key, s, lo, hi)}
	}
	return n, nil
}

// maxWindow bounds how far back a request may look.
const maxWindow = 31 * 24 * time.Hour

func windowParam(r *http.Request, def time.Duration) (time.Duration, error) {
	s := r.URL.Query().Get("window")
	if s == "" {
		return def, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < time.Minute || d > maxWindow {
		return 0, badRequest{fmt.Errorf("window: %q is not a duration from 1m to 744h (e.g. 1h, 30m)", s)}
	}
	return d, nil
}

func (a *api) devices(v *fleet.View, f fleet.Filter, r *http.Request) (any, error) {
	page, err := intParam(r, "page", 1, 1, 1_000_000)
	if err != nil {
		return nil, err
	}
	size, err := intParam(r, "page_size", 50, 1, 500)
	if err != nil {
		return nil, err
	}
	if s := r.URL.Query().Get("sort"); s != "" && s != "node" {
		return nil, badRequest{fmt.Errorf("sort: %q is not supported (node)", s)}
	}
	return v.Devices(f, page, size), nil
}

func (a *api) device(v *fleet.View, _ fleet.Filter, r *http.Request) (any, error) {
	q := r.URL.Query()
	id := q.Get("id")
	if id == "" {
		return nil, badRequest{errors.New("id: required (a device's or partition's hw.id)")}
	}
	window, err := windowParam(r, time.Hour)
	if err != nil {
		return nil, err
	}
	d, refs, ok := v.Device(id, q.Get("node"))
	if !ok {
		return nil, notFound{fmt.Errorf("no device or partition with id %q", id)}
	}
	series, err := a.backend.Series(r.Context(), refs, window)
	if err != nil {
		return nil, fmt.Errorf("%s backend: series: %w", a.backend.Name(), err)
	}
	d.Series = fleet.DeviceSeries{WindowSeconds: window.Seconds(), Metrics: series}
	return d, nil
}

func (a *api) pod(v *fleet.View, _ fleet.Filter, r *http.Request) (any, error) {
	q := r.URL.Query()
	ns, name := q.Get("namespace"), q.Get("name")
	if name == "" {
		return nil, badRequest{errors.New("name: required (with namespace)")}
	}
	p, ok := v.Pod(ns, name)
	if !ok {
		return nil, notFound{fmt.Errorf("no device or inference server names pod %s/%s", ns, name)}
	}
	return p, nil
}

func (a *api) findings(v *fleet.View, f fleet.Filter, r *http.Request) (any, error) {
	q := r.URL.Query()
	var states []string
	for _, s := range q["state"] {
		switch s {
		case fleet.StateOpen, fleet.StateAcknowledged, fleet.StateDismissed:
			states = append(states, s)
		case "all":
			states = append(states, fleet.StateOpen, fleet.StateAcknowledged, fleet.StateDismissed)
		default:
			return nil, badRequest{fmt.Errorf("state: %q is not open, acknowledged, dismissed or all", s)}
		}
	}
	return v.Findings(f, states, q.Get("kind")), nil
}

// decisions are the POST actions and the state each sets.
var decisions = map[string]string{
	"acknowledge": fleet.StateAcknowledged,
	"dismiss":     fleet.StateDismissed,
	"reopen":      fleet.StateOpen,
}

func (a *api) decide(w http.ResponseWriter, r *http.Request) {
	who, ok := a.writers.authorize(w, r, a.token)
	if !ok {
		return
	}
	state, ok := decisions[r.PathValue("action")]
	if !ok {
		writeError(w, http.StatusNotFound, fmt.Errorf("no action %q (acknowledge, dismiss, reopen)", r.PathValue("action")))
		return
	}
	note, ok := readNote(w, r)
	if !ok {
		return
	}
	f, err := a.logs.Decide(r.Context(), r.PathValue("id"), logstore.Decision{State: state, Note: note, By: who}, a.now())
	switch {
	case errors.Is(err, logstore.ErrUnknownFinding):
		writeError(w, http.StatusNotFound, fmt.Errorf("no finding %q", r.PathValue("id")))
		return
	case err != nil:
		a.warn.Warn("storage", "a finding's state was not saved", zap.String("finding", f.ID), zap.Error(err))
		a.invalidateLogs()
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	a.invalidateLogs()
	a.auditDecision(r, f, who)
	writeJSON(w, http.StatusOK, f)
}

// auditDecision logs who changed a finding's state: the audit record of
// acknowledge, dismiss and reopen (an approval's is the remediator's).
func (a *api) auditDecision(r *http.Request, f fleet.Finding, who string) {
	if a.audit == nil {
		return
	}
	note := ""
	if f.Note != nil {
		note = *f.Note
	}
	a.audit.Info("accelerator_insights: finding "+f.State, zap.String("finding", f.ID), zap.String("kind", f.Kind),
		zap.String("node", f.Node), zap.String("device", f.DeviceID), zap.String("by", who), zap.String("note", note),
		zap.String("remote", r.RemoteAddr))
}

// readNote reads a POST's optional body, {"note": "…"}, of at most 1 KiB
// (acknowledge/dismiss and plan approval take the same); on a bad body it
// has answered the request and ok is false.
func readNote(w http.ResponseWriter, r *http.Request) (note string, ok bool) {
	data, err := io.ReadAll(io.LimitReader(r.Body, 1025))
	if err != nil {
		writeError(w, http.StatusBadRequest, fmt.Errorf("reading the body: %w", err))
		return "", false
	}
	if len(data) > 1024 {
		writeError(w, http.StatusRequestEntityTooLarge, errors.New("body: at most 1 KiB ({\"note\": \"…\"})"))
		return "", false
	}
	if len(data) == 0 {
		return "", true
	}
	var body struct {
		Note string `json:"note"`
	}
	if err := json.Unmarshal(data, &body); err != nil {
		writeError(w, http.StatusBadRequest, fmt.Errorf("body: not {\"note\": \"…\"}: %w", err))
		return "", false
	}
	return body.Note, true
}
