//go:build e2e

package browser

import (
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/otelcol-accel/otelcol-accel/internal/e2etest"
)

// The console with the in-memory backend (the default) against the demo
// fleet, in headless Chromium.
func TestConsoleInMemory(t *testing.T) {
	f := startConsoleFleet(t, nil, nil)
	tr := waitForFleet(t, f)
	b := StartBrowser(t, screenshotDir(t, "memory"))
	checkConsole(t, f, b, tr, "memory")
	if os.Getenv("INSIGHTS_UPDATE_DOCS") != "" {
		copyScreenshots(t, b.Shots, filepath.Join(e2etest.RepoRoot(), "docs", "images", "insights"))
	}
}

// pages are the console's routes that need no subject, with the route name
// the page reports.
var pages = []struct{ path, page, shot string }{
	{"", "fleet", "fleet"},
	{"fleet?colour=health", "fleet", "fleet-health"},
	{"teams", "teams", "teams"},
	{"findings", "findings", "findings"},
	{"inference", "inference", "inference"},
	{"capacity", "capacity", "capacity"},
	{"reliability", "reliability", "reliability"},
	{"plans", "plans", "plans"},
}

// checkConsole is every assertion on the pages, the same for both
// backends.
func checkConsole(t *testing.T, f *consoleFleet, b *Browser, tr truth, backend string) {
	t.Run("every page renders without a console error", func(t *testing.T) {
		b := b.For(t)
		for _, p := range pages {
			b.Visit(f.Base+p.path, p.page)
			b.CheckConsole(p.page)
			b.Screenshot(p.shot)
		}
		e2etest.Await(t, pageWait, "the inference page to list the demo fleet's endpoints", func() (string, bool) {
			b.Visit(f.Base+"inference", "inference")
			n := b.Eval(`String(document.querySelectorAll('table.inference tbody tr[data-endpoint]').length)`)
			return fmt.Sprintf("%s endpoints; the page shows: %.600s", n, b.Eval(`document.getElementById('content').innerText`)), n != "0"
		})
		// A Neuron device (one utilization line per NeuronCore) and a MIG
		// instance, each with its own page.
		for _, d := range []struct {
			what string
			tile Tile
		}{{"neuron-device", pickTile(t, f, func(x Tile) bool { return x.Family == "aws_neuron" && len(x.Partitions) > 0 })},
			{"mig-instance", pickTile(t, f, func(x Tile) bool { return x.Kind == "partition" && x.PartitionType == "mig" })}} {
			b.Visit(f.Base+"device?"+query("id", d.tile.ID, "node", d.tile.Node).Encode(), "device")
			b.CheckConsole(d.what + " " + d.tile.ID)
			b.Screenshot(d.what)
			if got := b.Text(`[data-k=device-id]`); got != d.tile.ID {
				t.Errorf("%s page shows %s, want %s", d.what, got, d.tile.ID)
			}
		}
	})
	t.Run("device count agrees with Prometheus", func(t *testing.T) {
		b := b.For(t)
		want := fmt.Sprint(len(tr.devices))
		e2etest.Await(t, pageWait, "the fleet page to count the "+want+" devices of the gateway's Prometheus output (hw_status on device resources)", func() (string, bool) {
			b.Visit(f.Base+"fleet", "fleet")
			got := b.Text(`[data-k=devices-total]`)
			return "the page counts " + got, got == want
		})
	})
	t.Run("health counts agree with Prometheus", func(t *testing.T) {
		b := b.For(t)
		// Devices fail during the run, and the console reads the fleet
		// a refresh after the scrape: both are read again until they
		// agree.
		e2etest.Await(t, pageWait, "the fleet page's health counts to agree with hw_status in the gateway's Prometheus output", func() (string, bool) {
			want := readTruth(scrape(t, f)).healthCounts()
			b.Visit(f.Base+"fleet", "fleet")
			got := map[string]int{}
			for _, state := range []string{"ok", "degraded", "failed"} {
				n, err := strconv.Atoi(b.Text(fmt.Sprintf(`[data-k=health-%s]`, state)))
				if err != nil {
					t.Fatal(err)
				}
				got[state] = n
			}
			return fmt.Sprintf("page ok/degraded/failed %d/%d/%d, Prometheus %d/%d/%d",
					got["ok"], got["degraded"], got["failed"], want["ok"], want["degraded"], want["failed"]),
				got["ok"] == want["ok"] && got["degraded"] == want["degraded"] && got["failed"] == want["failed"]
		})
	})
	t.Run("a failed GPU shows its recommended action", func(t *testing.T) {
		b := b.For(t)
		dev, code := pickXIDFailure(tr)
		want := words(expectedAction(code))
		// The console may show the device failed a refresh after the
		// gateway's scrape did: wait for that. From the render that shows
		// it failed on, the action is there too: hw.errors, which names
		// the XID, comes in the same batch as hw.status (issue 35: the
		// action must not wait for the health event).
		e2etest.Await(t, pageWait, fmt.Sprintf("device %s on %s to show health failed (Prometheus has hw_status{hw_state=\"failed\"} 1)", dev.id, dev.node), func() (string, bool) {
			b.Visit(f.Base+"device?"+query("id", dev.id, "node", dev.node).Encode(), "device")
			health := b.Text(`[data-k=device-health]`)
			return "health " + health, health == "failed"
		})
		b.CheckConsole("device " + dev.id)
		b.Screenshot("device-failed")
		if got := b.Text(`[data-k=device-action]`); got != want {
			t.Errorf("device %s (XID %d in hw_errors_total) shows failed with recommended action %q, want %q (internal/xid)", dev.id, code, got, want)
		}
		// The reliability page lists it among the devices not ok, with the
		// same action.
		row := fmt.Sprintf(`table.not-ok tr[data-id=%q]`, dev.id)
		e2etest.Await(t, pageWait, fmt.Sprintf("the reliability page to list %s among the devices not ok", dev.id), func() (string, bool) {
			b.Visit(f.Base+"reliability", "reliability")
			listed := b.Eval(fmt.Sprintf(`String(!!document.querySelector(%q))`, row))
			return "listed: " + listed, listed == "true"
		})
		if got := b.Text(row + ` [data-k=action]`); got != want {
			t.Errorf("reliability page: %s action %q, want %q", dev.id, got, want)
		}
	})
	t.Run("the endpoints' Kubernetes side agrees with the gateway", func(t *testing.T) {
		checkLifecycle(t, f, b.For(t))
	})
	t.Run("a finding's dollars agree with the gateway's finding", func(t *testing.T) {
		b := b.For(t)
		checkFindingDollars(t, f, b)
		checkFindingColumns(t, f, b)
	})
	t.Run("a team's cost agrees with Prometheus", func(t *testing.T) {
		b := b.For(t)
		team, _ := costliestTeam(tr)
		// Prices are static in the demo, what a team holds is not: the
		// page and the scrape are read again until they agree (the page
		// rounds to cents).
		e2etest.Await(t, pageWait, "the teams page's cost of "+team+" to agree with sum(accelerator_price_USD_per_hour{accelerator_team=\""+team+"\"})", func() (string, bool) {
			want := readTruth(scrape(t, f)).teamCost[team]
			b.Visit(f.Base+"teams", "teams")
			got := money(t, b.Text(fmt.Sprintf(`tr.level-team[data-team=%q] [data-k=cost-per-hour]`, team)))
			return fmt.Sprintf("page $%.2f/h, Prometheus %.4f", got, want), math.Abs(got-want) <= 0.006
		})
	})
	t.Run("drill-down fleet to node to device to pod", func(t *testing.T) {
		b := b.For(t)
		checkDrillDown(t, f, b)
	})
	t.Run("filters", func(t *testing.T) {
		b := b.For(t)
		checkFilters(t, f, b, tr)
	})
	t.Run("acknowledge persists", func(t *testing.T) {
		b := b.For(t)
		checkAcknowledge(t, f, b)
	})
	// Last: approving a plan cordons and drains a simulated node, which
	// changes the fleet the checks above compare.
	t.Run("remediation plans are shown and approved", func(t *testing.T) {
		checkPlans(t, f, b.For(t))
	})
	b.CheckConsole("after every check (" + backend + ")")
}

// pickTile returns the first device or partition of the grid that ok
// accepts.
func pickTile(t *testing.T, f *consoleFleet, ok func(Tile) bool) Tile {
	t.Helper()
	var g Grid
	if err := f.API.Get("devices", query("page_size", "500"), &g); err != nil {
		t.Fatal(err)
	}
	for _, n := range g.Nodes {
		for _, d := range n.Tiles {
			if ok(d) {
				return d
			}
			for _, p := range d.Partitions {
				if ok(p) {
					return p
				}
			}
		}
	}
	t.Fatal("no device or partition of the demo fleet is of that kind")
	return Tile{}
}

func costliestTeam(tr truth) (string, float64) {
	team, cost := "", -1.0
	for k, v := range tr.teamCost {
		if v > cost || (v == cost && k < team) {
			team, cost = k, v
		}
	}
	return team, cost
}

// checkFindingDollars compares a finding's monthly saving on the findings
// page with the finding the gateway wrote (events.jsonl: the log record as
// the gateway exported it). Findings repeat with fresh numbers, so the page
// is read again when the gateway wrote a newer one in between.
func checkFindingDollars(t *testing.T, f *consoleFleet, b *Browser) {
	e2etest.Await(t, pageWait, "the findings page's dollars to agree with the gateway's last findings (events.jsonl)", func() (string, bool) {
		b.Visit(f.Base+"findings?state=all", "findings")
		rows := EvalJSON[[]struct {
			Kind, Device, Saving string
		}](b, `[...document.querySelectorAll('table.findings tbody tr[data-finding]')].map((tr) => ({
			kind: tr.dataset.kind,
			device: (tr.querySelector('td:nth-child(5) a') || {textContent: ''}).textContent,
			saving: tr.querySelector('[data-k=finding-saving]').textContent}))`)
		if len(rows) == 0 {
			t.Fatal("the findings page lists no finding")
		}
		latest := latestFindings(t, f.OutDir)
		matched, mismatches := 0, []string{}
		for _, r := range rows {
			ev, ok := latest[findingKey{r.Kind, r.Device}]
			if !ok {
				continue
			}
			matched++
			if got := money(t, r.Saving); math.Abs(got-ev) > 0.006 {
				mismatches = append(mismatches, fmt.Sprintf("%s on %s: page $%.2f a month, gateway's last finding %.4f", r.Kind, r.Device, got, ev))
			}
		}
		if matched == 0 {
			return fmt.Sprintf("no finding on the page matches one in events.jsonl (kind and device); page: %+v", rows), false
		}
		return strings.Join(mismatches, "; "), len(mismatches) == 0
	})
}

// checkFindingColumns: the finding column says what was found (and its
// evidence), the action column what to do; the one does not repeat the
// other.
func checkFindingColumns(t *testing.T, f *consoleFleet, b *Browser) {
	// A finding repeats with fresh evidence: the API is read around the
	// page until a read after it agrees with the read before it.
	var rows []struct{ ID, Reason, Evidence, Action string }
	var want Findings
	e2etest.Await(t, pageWait, "the findings' evidence to stay the same while the page is read", func() (string, bool) {
		var before Findings
		if err := f.API.Get("findings", query("state", "all"), &before); err != nil {
			t.Fatal(err)
		}
		rows = readFindingRows(t, f, b)
		if err := f.API.Get("findings", query("state", "all"), &want); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%d findings before the page, %d after", before.Total, want.Total), sameEvidence(before, want)
	})
	evidence := map[string]string{}
	for _, x := range want.Findings {
		evidence[x.ID] = x.Evidence
	}
	for _, r := range rows {
		if r.Reason == "" || r.Action == "" || r.Action == "—" {
			t.Errorf("finding %s: reason %q, action %q: both must be shown", r.ID, r.Reason, r.Action)
		}
		if strings.Contains(r.Reason, r.Action) {
			t.Errorf("finding %s: the finding column %q repeats the action %q", r.ID, r.Reason, r.Action)
		}
		if ev, ok := evidence[r.ID]; ok && ev != r.Evidence {
			t.Errorf("finding %s: evidence shown %q, the API's %q", r.ID, r.Evidence, ev)
		}
	}
}

// sameEvidence reports whether two reads of the findings list the same
// findings with the same evidence.
func sameEvidence(a, b Findings) bool {
	if len(a.Findings) != len(b.Findings) {
		return false
	}
	ev := map[string]string{}
	for _, x := range a.Findings {
		ev[x.ID] = x.Evidence
	}
	for _, x := range b.Findings {
		if e, ok := ev[x.ID]; !ok || e != x.Evidence {
			return false
		}
	}
	return true
}

func readFindingRows(t *testing.T, f *consoleFleet, b *Browser) []struct{ ID, Reason, Evidence, Action string } {
	b.Visit(f.Base+"findings?state=all", "findings")
	return EvalJSON[[]struct {
		ID, Reason, Evidence, Action string
	}](b, `[...document.querySelectorAll('table.findings tbody tr[data-finding]')].map((tr) => ({
		id: tr.dataset.finding,
		reason: tr.querySelector('[data-k=finding-reason]').textContent,
		evidence: (tr.querySelector('[data-k=finding-evidence]') || {textContent: ''}).textContent,
		action: tr.querySelector('[data-k=finding-action]').textContent}))`)
}

type findingKey struct{ kind, device string }

// latestFindings reads the gateway's events.jsonl: the monthly saving of
// the last finding of each kind and device (partition, where one is named).
func latestFindings(t *testing.T, dir string) map[findingKey]float64 {
	out := map[findingKey]float64{}
	for _, ev := range readJSONLines(t, filepath.Join(dir, "events.jsonl")) {
		if ev["event.name"] != "accelerator.finding" {
			continue
		}
		kind, _ := ev["accelerator.finding.kind"].(string)
		dev, _ := ev["hw.id"].(string)
		saving, _ := ev["accelerator.finding.monthly_saving"].(float64)
		out[findingKey{kind, dev}] = saving
	}
	return out
}

// checkDrillDown follows links as a user would: the fleet grid's node, the
// node's device, the device's holder, and checks each page is the one
// clicked.
func checkDrillDown(t *testing.T, f *consoleFleet, b *Browser) {
	node, dev, pod := heldDevice(t, f)
	b.Visit(f.Base+"fleet", "fleet")
	b.Click(fmt.Sprintf(`.node[data-node=%q] .node-head a`, node))
	b.WaitPage("node")
	b.CheckConsole("node " + node)
	b.Screenshot("node")
	if got := b.Text(`[data-k=node-name]`); got != node {
		t.Fatalf("clicked node %s, the node page shows %s", node, got)
	}
	b.Click(fmt.Sprintf(`table.data tr[data-id=%q] td:nth-child(2) a`, dev.ID))
	b.WaitPage("device")
	b.CheckConsole("device " + dev.ID)
	b.Screenshot("device")
	if got := b.Text(`[data-k=device-id]`); got != dev.ID {
		t.Fatalf("clicked device %s, the device page shows %s", dev.ID, got)
	}
	if got := b.Text(`[data-k=device-node]`); got != node {
		t.Errorf("device %s: node %q, want %s", dev.ID, got, node)
	}
	if n := b.Eval(`String(document.querySelectorAll('figure.chart[data-chart] svg').length)`); n == "0" {
		t.Errorf("device %s: no chart drawn; the agents report its utilization every 5 s", dev.ID)
	}
	// The href as pages/common.js writes it: namespace first.
	b.Click(fmt.Sprintf(`table.holders a[href=%q]`, "pod?namespace="+url.QueryEscape(pod.Namespace)+"&name="+url.QueryEscape(pod.Pod)))
	b.WaitPage("pod")
	b.CheckConsole("pod " + pod.Pod)
	b.Screenshot("pod")
	if got, want := b.Text(`[data-k=pod-name]`), pod.Namespace+"/"+pod.Pod; got != want {
		t.Fatalf("clicked pod %s, the pod page shows %s", want, got)
	}
	if b.Eval(fmt.Sprintf(`String(!!document.querySelector('tr[data-id=%q]'))`, dev.ID)) != "true" {
		t.Errorf("pod %s/%s: its page does not list device %s it holds", pod.Namespace, pod.Pod, dev.ID)
	}
}

// heldDevice picks, from the API, a whole (unpartitioned) device that a pod
// holds, so the drill-down ends at a pod.
func heldDevice(t *testing.T, f *consoleFleet) (string, Tile, Holder) {
	var g Grid
	if err := f.API.Get("devices", query("page_size", "500"), &g); err != nil {
		t.Fatal(err)
	}
	for _, n := range g.Nodes {
		for _, tile := range n.Tiles {
			if len(tile.Partitions) == 0 && len(tile.Holders) > 0 && tile.Holders[0].Pod != "" {
				return n.Node, tile, tile.Holders[0]
			}
		}
	}
	t.Fatal("no device of the fleet is held by a pod")
	return "", Tile{}, Holder{}
}

// checkFilters: choosing a node and a team in the filter bar narrows what
// the pages show, and the choice is in the URL (and survives a reload).
func checkFilters(t *testing.T, f *consoleFleet, b *Browser, tr truth) {
	node := ""
	want := 0
	for k := range tr.devices {
		if node == "" || k.node < node {
			node = k.node
		}
	}
	for k := range tr.devices {
		if k.node == node {
			want++
		}
	}
	b.Visit(f.Base+"fleet", "fleet")
	b.Select("#filter-node", node)
	b.WaitPage("fleet")
	if loc := b.Location(); !strings.Contains(loc, "node="+url.QueryEscape(node)) {
		t.Fatalf("after choosing node %s the URL is %s", node, loc)
	}
	b.Screenshot("fleet-filtered")
	if got := b.Text(`[data-k=devices-total]`); got != fmt.Sprint(want) {
		t.Errorf("filtered by node %s: %s devices, Prometheus has %d there", node, got, want)
	}
	nodes := EvalJSON[[]string](b, `[...document.querySelectorAll('.node[data-node]')].map((n) => n.dataset.node)`)
	if len(nodes) != 1 || nodes[0] != node {
		t.Errorf("filtered by node %s, the grid shows nodes %v", node, nodes)
	}
	// The filter carries to the other pages through the navigation.
	b.Click(`#nav a[href^="teams"]`)
	b.WaitPage("teams")
	if loc := b.Location(); !strings.Contains(loc, "node="+url.QueryEscape(node)) {
		t.Errorf("the teams link lost the node filter: %s", loc)
	}

	team, _ := costliestTeam(tr)
	b.Visit(f.Base+"teams?"+query("team", team).Encode(), "teams")
	teams := EvalJSON[[]string](b, `[...document.querySelectorAll('tr.level-team')].map((r) => r.dataset.team)`)
	if len(teams) != 1 || teams[0] != team {
		t.Errorf("teams page filtered by team %s shows teams %v", team, teams)
	}
	if v := b.Eval(`document.getElementById('filter-team').value`); v != team {
		t.Errorf("the filter bar shows team %q for a URL with team=%s", v, team)
	}
}

// checkAcknowledge clicks acknowledge on an open finding: the row says so,
// the API says so after a reload, and so does a fresh page.
func checkAcknowledge(t *testing.T, f *consoleFleet, b *Browser) {
	b.Visit(f.Base+"findings?state=open", "findings")
	id := b.Eval(`(document.querySelector('table.findings tr[data-state=open]') || {dataset: {finding: ''}}).dataset.finding`)
	if id == "" {
		t.Fatal("no open finding to acknowledge")
	}
	b.Visit(f.Base+"findings", "findings")
	b.Click(fmt.Sprintf(`tr[data-finding=%q] button[data-action=acknowledge]`, id))
	b.WaitFor(fmt.Sprintf(`(document.querySelector('tr[data-finding=%q]') || {dataset: {}}).dataset.state === 'acknowledged'`, id))
	b.CheckConsole("acknowledge")
	var fs Findings
	if err := f.API.Get("findings", query("state", "acknowledged"), &fs); err != nil {
		t.Fatal(err)
	}
	if !hasFinding(fs, id) {
		t.Fatalf("after the click, the API does not list finding %s as acknowledged: %+v", id, fs.Findings)
	}
	b.Visit(f.Base+"findings?state=acknowledged", "findings")
	if b.Eval(fmt.Sprintf(`String(!!document.querySelector('tr[data-finding=%q][data-state=acknowledged]'))`, id)) != "true" {
		t.Errorf("after a reload, finding %s is not shown acknowledged", id)
	}
	b.Screenshot("findings-acknowledged")

	// Across a restart of the gateway: the state is in file_storage, and the
	// finding comes back when the agents' cost processors raise it again.
	f.restartGateway(t)
	state := ""
	e2etest.Await(t, 4*time.Minute, "finding "+id+" to come back after a restart of the gateway", func() (string, bool) {
		var all Findings
		if err := f.API.Get("findings", query("state", "all"), &all); err != nil {
			return err.Error(), false
		}
		st, ok := findingState(all, id)
		state = st
		return fmt.Sprintf("%d findings, %s not among them", len(all.Findings), id), ok
	})
	if state != "acknowledged" {
		t.Fatalf("after a restart of the gateway, finding %s is %s, not acknowledged", id, state)
	}
	b.Visit(f.Base+"findings?state=acknowledged", "findings")
	if b.Eval(fmt.Sprintf(`String(!!document.querySelector('tr[data-finding=%q][data-state=acknowledged]'))`, id)) != "true" {
		t.Errorf("after a restart of the gateway, the findings page does not show %s acknowledged", id)
	}
}

func findingState(fs Findings, id string) (string, bool) {
	for _, x := range fs.Findings {
		if x.ID == id {
			return x.State, true
		}
	}
	return "", false
}

func hasFinding(fs Findings, id string) bool {
	for _, x := range fs.Findings {
		if x.ID == id {
			return true
		}
	}
	return false
}

// docsShots are the screenshots docs/insights.md and the README embed.
var docsShots = []string{"fleet", "device-failed", "teams", "findings", "inference", "capacity", "reliability", "plans"}

// copyScreenshots copies the run's screenshots the docs embed.
func copyScreenshots(t *testing.T, from, to string) {
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range docsShots {
		b, err := os.ReadFile(filepath.Join(from, name+".png"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, name+".png"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("screenshots copied to %s", to)
}
