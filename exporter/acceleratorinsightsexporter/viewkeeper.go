package acceleratorinsightsexporter

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"runtime"
	"time"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorinsightsexporter/internal/fleet"
)

// Rebuilding a 10,000-device view takes tens of milliseconds, computing a
// page's answer from it a few more: neither may happen while a request
// waits. The keeper rebuilds in the background whenever the sources changed
// (and, with Prometheus, which cannot say, while someone looks), and each
// background rebuild makes the answers the last view was asked for before
// it swaps the new view in. A request then finds a current view with its
// answer made, or (a URL the last view was not asked for) computes only its
// own answer.

// warmBudget bounds the time a rebuild spends making answers again; the
// rest are made when asked for.
const warmBudget = 250 * time.Millisecond

// keepEvery is how often the keeper looks.
const keepEvery = viewTTL / 2

// recipe is how one memoized answer was made.
type recipe struct {
	fn     viewFunc
	filter fleet.Filter
	url    *url.URL
}

// render computes the answer from a view: the encoded body, or the status
// and error to answer with.
func (rc recipe) render(v *fleet.View, r *http.Request) ([]byte, int, error) {
	out, err := rc.fn(v, rc.filter, r)
	var br badRequest
	var nf notFound
	switch {
	case errors.As(err, &br):
		return nil, http.StatusBadRequest, err
	case errors.As(err, &nf):
		return nil, http.StatusNotFound, err
	case err != nil:
		return nil, http.StatusBadGateway, err
	}
	body, err := json.Marshal(out)
	if err != nil {
		return nil, http.StatusInternalServerError, err
	}
	return append(body, '\n'), http.StatusOK, nil
}

// warm makes, for a new view, the answers the current view was asked for,
// within warmBudget.
func (a *api) warm(ctx context.Context, v *fleet.View) (map[string][]byte, map[string]recipe) {
	a.mu.Lock()
	todo := make(map[string]recipe, len(a.answers))
	for key := range a.answers {
		if rc, ok := a.recipes[key]; ok {
			todo[key] = rc
		}
	}
	a.mu.Unlock()
	answers, recipes := make(map[string][]byte, len(todo)), make(map[string]recipe, len(todo))
	deadline := time.Now().Add(warmBudget)
	for key, rc := range todo {
		if time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		r := (&http.Request{Method: http.MethodGet, URL: rc.url, Header: http.Header{}}).WithContext(ctx)
		if body, _, err := rc.render(v, r); err == nil {
			answers[key], recipes[key] = body, rc
		}
		runtime.Gosched() // a waiting request goes first

	}
	return answers, recipes
}

// sourceVersion changes whenever the backend's data (where it can tell) or
// the logs side changed.
func (a *api) sourceVersion() uint64 {
	ver := a.logs.Version()
	if b, ok := a.backend.(versioned); ok {
		ver += b.Version()
	}
	return ver
}

// keeper is the background loop that keeps the view current.
type keeper struct {
	stop chan struct{}
	done chan struct{}
}

// startKeeper starts the keeper if it does not run (called with a.mu held,
// from the first request: the clock and backend are set by then).
func (a *api) startKeeper() {
	if a.keeper != nil {
		return
	}
	k := &keeper{stop: make(chan struct{}), done: make(chan struct{})}
	a.keeper = k
	go func() {
		defer close(k.done)
		t := time.NewTicker(keepEvery)
		defer t.Stop()
		for {
			select {
			case <-k.stop:
				return
			case <-t.C:
				a.keepCurrent()
			}
		}
	}()
}

func (a *api) stopKeeper() {
	a.mu.Lock()
	k := a.keeper
	a.keeper = nil
	a.mu.Unlock()
	if k != nil {
		close(k.stop)
		<-k.done
	}
}

// keepCurrent starts a background rebuild when the view is past viewTTL
// and either the sources changed since it was built, or it is half way to
// maxStale (rates age even when nothing arrives), or, with a backend that
// cannot tell changes (Prometheus), someone asked within maxStale.
func (a *api) keepCurrent() {
	_, canTell := a.backend.(versioned)
	ver := a.sourceVersion()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.view == nil || a.dirty || a.logsDirty || a.refreshing {
		return
	}
	now := a.now()
	age := now.Sub(a.viewAt)
	if age < viewTTL {
		return
	}
	need := age >= maxStale/2
	if canTell {
		need = need || ver != a.viewVersion
	} else {
		need = now.Sub(a.lastRequest) < maxStale
	}
	if need {
		a.refreshing = true
		a.refreshes.Add(1)
		go a.refresh(a.generation)
	}
}
