// Package browser drives the insights console in a real browser — Debian's
// headless Chromium over the DevTools protocol (chromedp) — against the demo
// fleet: every page renders without a console error, the numbers it shows
// agree with the gateway's Prometheus output, the drill-down and filters
// work, and acknowledging a finding persists. The tests are behind the e2e
// build tag (they need the built distribution); `make e2e` runs them.
package browser

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Browser is one headless Chromium with one tab. Every console error,
// uncaught exception and browser log error (a failed request, a CSP
// violation) the tab reports is recorded, and Visit fails the test on any.
type Browser struct {
	t testing.TB
	*tab
}

// tab is what the Browser values of one browser share (For makes one per
// subtest).
type tab struct {
	ctx context.Context
	// Shots is where screenshots are written.
	Shots string

	mu       sync.Mutex
	problems []string
}

// For is the same browser reporting to t (a subtest's), so a failure
// stops that subtest and not its parent.
func (b *Browser) For(t testing.TB) *Browser { return &Browser{t: t, tab: b.tab} }

// ChromiumBinary is $CHROMIUM_BIN, else Debian's /usr/bin/chromium, else
// chromium on the PATH. A missing browser fails the test: `make e2e`
// installs it (scripts/install-debian-deps.sh).
func ChromiumBinary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("CHROMIUM_BIN"); p != "" {
		return p
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	p, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("chromium not found (set $CHROMIUM_BIN, or run scripts/install-debian-deps.sh, which make e2e does)")
	}
	return p
}

// StartBrowser starts Chromium headless with a fresh profile; it stops with
// the test. Screenshots go to shots (created if missing).
func StartBrowser(t testing.TB, shots string) *Browser {
	t.Helper()
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	// Flags: headless without a sandbox (CI runs as root), no GPU, and
	// nothing that reaches out to the network by itself (the console must
	// work air-gapped, and a background request would muddy the log).
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(ChromiumBinary(t)),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1440, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithErrorf(func(f string, a ...any) { t.Logf("chromedp: "+f, a...) }))
	b := &Browser{t: t, tab: &tab{ctx: ctx, Shots: shots}}
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	go b.record(chromedp.Console(ctx))
	return b
}

func (b *tab) record(messages func(func(chromedp.ConsoleMessage, error) bool)) {
	for m, err := range messages {
		if err != nil {
			return
		}
		if m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleException {
			b.mu.Lock()
			b.problems = append(b.problems, fmt.Sprintf("%s (%s:%d)", m, m.URL, m.Line+1))
			b.mu.Unlock()
		}
	}
}

// takeProblems returns and clears what the console reported.
func (b *tab) takeProblems() []string {
	// Console messages arrive on their own goroutine; a round trip to the
	// page first lets the ones the page wrote before it reach the recorder.
	_, _ = chromedp.Run(b.ctx, chromedp.Evaluate[int]("1"))
	b.mu.Lock()
	defer b.mu.Unlock()
	p := b.problems
	b.problems = nil
	return p
}

// CheckConsole fails the test with every console error recorded since the
// last check.
func (b *Browser) CheckConsole(where string) {
	b.t.Helper()
	if p := b.takeProblems(); len(p) > 0 {
		b.t.Errorf("%s: the browser console reported:\n  %s", where, strings.Join(p, "\n  "))
	}
}

// within runs f with a bound on how long the browser may take (a stuck page
// fails the test instead of hanging it).
func within[T any](b *tab, d time.Duration, a chromedp.Action[T]) (T, error) {
	ctx, cancel := context.WithTimeout(b.ctx, d)
	defer cancel()
	return chromedp.Run(ctx, a)
}

// Visit loads url and waits until the console says page is rendered
// (body[data-page=page][data-state=ready]); a page that shows an error
// instead fails the test with its message.
func (b *Browser) Visit(url, page string) {
	b.t.Helper()
	if _, err := within(b.tab, 30*time.Second, chromedp.Navigate(url)); err != nil {
		b.t.Fatalf("navigate to %s: %v", url, err)
	}
	b.WaitPage(page)
}

// WaitPage waits until page is rendered after a navigation in the page.
func (b *Browser) WaitPage(page string) {
	b.t.Helper()
	// The page's own signal, read in its JavaScript context (where the
	// checks that follow evaluate too).
	cond := fmt.Sprintf(`document.body.dataset.page === %q && (document.body.dataset.state || 'loading') !== 'loading'`, page)
	if _, err := within(b.tab, 30*time.Second, chromedp.Poll[bool](cond)); err != nil {
		loc, _ := within(b.tab, 5*time.Second, chromedp.Location())
		b.t.Fatalf("page %s did not render (at %s): %v; console: %v", page, loc, err, b.takeProblems())
	}
	state := b.Eval(`document.body.dataset.state`)
	if state != "ready" {
		msg := b.Eval(`(document.querySelector('[role=alert]') || document.body).innerText`)
		b.t.Fatalf("page %s shows %s: %s", page, state, msg)
	}
}

// Eval evaluates a JavaScript expression that yields a string.
func (b *Browser) Eval(expr string) string {
	b.t.Helper()
	v, err := within(b.tab, 10*time.Second, chromedp.Evaluate[string](expr))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// EvalJSON evaluates expr and decodes its JSON value into T.
func EvalJSON[T any](b *Browser, expr string) T {
	b.t.Helper()
	v, err := within(b.tab, 10*time.Second, chromedp.Evaluate[T](expr))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// Text is the visible text of the first element matching a CSS selector.
func (b *Browser) Text(css string) string {
	b.t.Helper()
	v, err := within(b.tab, 10*time.Second, chromedp.Text(chromedp.CSS(css)))
	if err != nil {
		b.t.Fatalf("text of %s: %v", css, err)
	}
	return strings.TrimSpace(v)
}

// Click clicks the first element matching a CSS selector, as a user would
// (a mouse event at its position).
func (b *Browser) Click(css string) {
	b.t.Helper()
	if _, err := within(b.tab, 10*time.Second, chromedp.Click(chromedp.CSS(css), chromedp.NodeVisible)); err != nil {
		b.t.Fatalf("click %s: %v", css, err)
	}
}

// Select chooses a value in a <select> and fires its change event, as a
// user's choice does.
func (b *Browser) Select(css, value string) {
	b.t.Helper()
	if _, err := within(b.tab, 10*time.Second, chromedp.SetValue(chromedp.CSS(css), value)); err != nil {
		b.t.Fatalf("select %s=%s: %v", css, value, err)
	}
	b.Eval(fmt.Sprintf(`(document.querySelector(%q).dispatchEvent(new Event('change', {bubbles: true})), '')`, css))
}

// Location is the page's URL.
func (b *Browser) Location() string {
	b.t.Helper()
	v, err := within(b.tab, 5*time.Second, chromedp.Location())
	if err != nil {
		b.t.Fatal(err)
	}
	return v
}

// Screenshot writes a full-page PNG as <Shots>/<name>.png.
func (b *Browser) Screenshot(name string) string {
	b.t.Helper()
	png, err := within(b.tab, 30*time.Second, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(b.Shots, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	return path
}

// WaitFor waits until a JavaScript expression is true in the page.
func (b *Browser) WaitFor(expr string) {
	b.t.Helper()
	if _, err := within(b.tab, 30*time.Second, chromedp.Poll[bool](expr)); err != nil {
		b.t.Fatalf("waiting for %s: %v; console: %v", expr, err, b.takeProblems())
	}
}
