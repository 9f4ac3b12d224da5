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
	"github.com/otelcol-accel/otelcol-accel/internal/componenthealth"
)

// viewTTL: a view is rebuilt at most this often, so a page's parallel
// requests (and a fleet of browsers) cost one snapshot. A request that finds
// the view older is answered from it while one rebuild runs in the
// background (a 10,000-device rebuild takes longer than a page may wait),
// unless it is older than maxStale or a write made it wrong.
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

	mu         sync.Mutex
	view       *fleet.View
	viewAt     time.Time
	generation uint64 // bumped by every synchronous rebuild and invalidation
	dirty      bool   // a write made the view wrong: rebuild before answering
	refreshing bool
	refreshes  sync.WaitGroup
	// problem is why the last rebuild failed (empty once one works): the
	// view is then the last good one, older than it should be, and the
	// answers say so (session, X-Insights-Backend-Problem).
	problem      string
	problemSince time.Time
	// answers are the encoded answers of this view, by URL: a view does
	// not change, so a page's parallel requests and a room of browsers
	// cost one computation each per view.
	answers map[string][]byte
}

func (a *api) routes(mux *http.ServeMux) {
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
// maxStale, or invalidated by a write) one built now. A failed or
// incomplete rebuild never replaces a good view: the last good one is
// answered from, and the problem reported.
func (a *api) currentView(ctx context.Context) (*fleet.View, error) {
	a.mu.Lock()
	now := a.now()
	age := now.Sub(a.viewAt)
	if a.view != nil && !a.dirty && !now.Before(a.viewAt) {
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
	v, err := a.build(ctx, gen)
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
// first.
func (a *api) build(ctx context.Context, gen uint64) (*fleet.View, error) {
	at := a.now()
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
	a.mu.Lock()
	defer a.mu.Unlock()
	a.problem, a.problemSince = "", time.Time{}
	if gen == a.generation {
		a.view, a.viewAt, a.answers, a.dirty = v, at, map[string][]byte{}, false
	}
	return v, nil
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
	if _, err := a.build(ctx, gen); err != nil {
		a.warn.Warn("backend", "the console's backend did not answer fully; pages show the last good view", zap.String("backend", a.backend.Name()), zap.Error(err))
	}
	a.mu.Lock()
	a.refreshing = false
	a.mu.Unlock()
}

// invalidate marks the view wrong after a write, so the next request
// rebuilds it (and, should that fail, still has it to answer from). Its
// encoded answers go at once.
func (a *api) invalidate() {
	a.mu.Lock()
	a.dirty = true
	a.answers = nil
	a.generation++
	a.mu.Unlock()
}

// wait returns once no background rebuild runs (Shutdown).
func (a *api) wait() { a.refreshes.Wait() }

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

func (a *api) keep(v *fleet.View, key string, body []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.view == v && a.answers != nil && len(a.answers) < maxAnswers {
		a.answers[key] = body
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
		out, err := fn(v, f, r)
		var br badRequest
		var nf notFound
		switch {
		case errors.As(err, &br):
			writeError(w, http.StatusBadRequest, err)
		case errors.As(err, &nf):
			writeError(w, http.StatusNotFound, err)
		case err != nil:
			writeError(w, http.StatusBadGateway, err)
		default:
			body, err := json.Marshal(out)
			if err != nil {
				writeError(w, http.StatusInternalServerError, err)
				return
			}
			body = append(body, '\n')
			if memo {
				a.keep(v, key, body)
			}
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			_, _ = w.Write(body)
		}
	}
}

// problemHeader carries, on a view's answers, why the view is the last
// good one rather than a fresh one.
const problemHeader = "X-Insights-Backend-Problem"

func (a *api) session(w http.ResponseWriter, _ *http.Request) {
	problem, since := a.backendProblem()
	var problemSince any
	if problem != "" {
		problemSince = since.UTC()
	}
	writeJSON(w, http.StatusOK, map[string]any{
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
	if msg := sameOrigin(r, a.token); msg != "" {
		writeError(w, http.StatusForbidden, errors.New(msg))
		return
	}
	state, ok := decisions[r.PathValue("action")]
	if !ok {
		writeError(w, http.StatusNotFound, fmt.Errorf("no action %q (acknowledge, dismiss, reopen)", r.PathValue("action")))
		return
	}
	var body struct {
		Note string `json:"note"`
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, 1025))
	if err != nil {
		writeError(w, http.StatusBadRequest, fmt.Errorf("reading the body: %w", err))
		return
	}
	if len(data) > 1024 {
		writeError(w, http.StatusRequestEntityTooLarge, errors.New("body: at most 1 KiB ({\"note\": \"…\"})"))
		return
	}
	if len(data) > 0 {
		if err := json.Unmarshal(data, &body); err != nil {
			writeError(w, http.StatusBadRequest, fmt.Errorf("body: not {\"note\": \"…\"}: %w", err))
			return
		}
	}
	f, err := a.logs.Decide(r.Context(), r.PathValue("id"), state, body.Note, a.now())
	switch {
	case errors.Is(err, logstore.ErrUnknownFinding):
		writeError(w, http.StatusNotFound, fmt.Errorf("no finding %q", r.PathValue("id")))
		return
	case err != nil:
		a.warn.Warn("storage", "a finding's state was not saved", zap.String("finding", f.ID), zap.Error(err))
		a.invalidate()
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	a.invalidate()
	writeJSON(w, http.StatusOK, f)
}
