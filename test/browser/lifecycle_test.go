//go:build e2e

package browser

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/otelcol-accel/otelcol-accel/internal/e2etest"
)

// k8sTruth is what the gateway's Prometheus output says about the
// Kubernetes side of the demo (accelerator_k8s): pods that cannot be
// scheduled, and cold starts measured per workload.
type k8sTruth struct {
	unschedulable int
	coldStarts    map[string]uint64 // namespace/workload → cold starts (phase total)
}

func readK8sTruth(fams map[string]*dto.MetricFamily) k8sTruth {
	tr := k8sTruth{coldStarts: map[string]uint64{}}
	for name, fam := range fams {
		switch {
		case strings.Contains(name, "pods_unschedulable"):
			for _, m := range fam.GetMetric() {
				tr.unschedulable += int(m.GetGauge().GetValue())
			}
		case strings.Contains(name, "cold_start_duration") && fam.GetType() == dto.MetricType_HISTOGRAM:
			for _, m := range fam.GetMetric() {
				if e2etest.Label(m, "accelerator_cold_start_phase") != "total" {
					continue
				}
				k := e2etest.Label(m, "k8s_namespace_name") + "/" + e2etest.Label(m, "accelerator_workload_name")
				tr.coldStarts[k] += m.GetHistogram().GetSampleCount()
			}
		}
	}
	return tr
}

// checkLifecycle: the Inference and Reliability pages show the Kubernetes
// side of the endpoints (issue 19) and agree with the gateway's
// Prometheus output: the unschedulable pods and the cold starts per
// workload, once the simulator's story has produced them.
func checkLifecycle(t *testing.T, f *consoleFleet, b *Browser) {
	b.Visit(f.Base+"inference", "inference")
	for _, sel := range []string{"table.regressions", "table.zones-table", "table.cold-starts"} {
		if b.Eval(`String(!!document.querySelector('`+sel+`'))`) != "true" {
			t.Errorf("the inference page has no %s section", sel)
		}
	}
	checkRegressions(t, f, b)
	b.Visit(f.Base+"reliability", "reliability")
	for _, sel := range []string{"table.unschedulable", "table.scaling", "table.zones-table", "table.cold-starts"} {
		if b.Eval(`String(!!document.querySelector('`+sel+`'))`) != "true" {
			t.Errorf("the reliability page has no %s section", sel)
		}
	}
	// The simulator's story (accelsim serve --story-delay) plays while the
	// test runs: wait until the gateway reports it, then compare. The
	// receiver's gauges change as the story plays: read both again when one
	// changed in between.
	deadline := time.Now().Add(2 * time.Minute)
	for attempt := 0; ; attempt++ {
		fams, err := e2etest.ScrapePrometheus(f.Gateway.PrometheusURL())
		if err != nil {
			t.Fatal(err)
		}
		want := readK8sTruth(fams)
		if want.unschedulable == 0 || len(want.coldStarts) == 0 {
			if time.Now().After(deadline) {
				t.Fatalf("after 2 minutes the gateway reports %d unschedulable pods and cold starts of %d workloads: the simulator's Kubernetes story did not reach accelerator_k8s", want.unschedulable, len(want.coldStarts))
			}
			time.Sleep(2 * time.Second)
			attempt--
			continue
		}
		b.Visit(f.Base+"reliability", "reliability")
		got, err := strconv.Atoi(b.Text(`[data-k=unschedulable-pods]`))
		if err != nil {
			t.Fatal(err)
		}
		rows := EvalJSON[map[string]string](b, `Object.fromEntries([...document.querySelectorAll('table.cold-starts tbody tr[data-workload]')].map((tr) =>
			[tr.dataset.workload, tr.querySelector('td:nth-child(2)').textContent]))`)
		mismatch := ""
		if got != want.unschedulable {
			mismatch = "unschedulable pods: page " + strconv.Itoa(got) + ", Prometheus " + strconv.Itoa(want.unschedulable)
		}
		for w, n := range want.coldStarts {
			if rows[w] != strconv.FormatUint(n, 10) {
				mismatch += "; cold starts of " + w + ": page " + rows[w] + ", Prometheus " + strconv.FormatUint(n, 10)
			}
		}
		if len(rows) != len(want.coldStarts) {
			mismatch += "; workloads with cold starts: page " + strconv.Itoa(len(rows)) + ", Prometheus " + strconv.Itoa(len(want.coldStarts))
		}
		if mismatch == "" {
			b.Screenshot("reliability-lifecycle")
			return
		}
		if attempt == 3 {
			t.Fatalf("the lifecycle sections disagree with the gateway's Prometheus output: %s", strings.TrimPrefix(mismatch, "; "))
		}
	}
}

// checkPlans: the Remediation page lists the remediation exporter's plans
// or says why there are none; where a plan waits for approval, its button
// approves it through the engine, and the API then names the console as
// the approver.
func checkPlans(t *testing.T, f *consoleFleet, b *Browser) {
	var plans struct {
		Running bool `json:"running"`
		Plans   []struct {
			ID               string `json:"id"`
			AwaitingApproval bool   `json:"awaiting_approval"`
			Approval         *struct {
				By, Via string
			} `json:"approval"`
		} `json:"plans"`
	}
	// The demo's XIDs make plans in approve mode (demo-remediation.yaml):
	// wait for one that waits for approval.
	id := ""
	for deadline := time.Now().Add(2 * time.Minute); id == ""; {
		if err := f.API.Get("plans", nil, &plans); err != nil {
			t.Fatal(err)
		}
		if !plans.Running {
			t.Fatal("the gateway runs remediation for the console (demo-remediation.yaml), but /api/v1/plans says it is not running")
		}
		for _, p := range plans.Plans {
			if p.AwaitingApproval {
				id = p.ID
				break
			}
		}
		if id == "" {
			if time.Now().After(deadline) {
				t.Fatalf("after 2 minutes no plan waits for approval (%d plans)", len(plans.Plans))
			}
			time.Sleep(2 * time.Second)
		}
	}
	b.Visit(f.Base+"plans", "plans")
	b.CheckConsole("plans")
	if n := b.Eval(`String(document.querySelectorAll('article.plan[data-plan]').length)`); n != strconv.Itoa(len(plans.Plans)) {
		t.Errorf("the page shows %s plans, the API %d", n, len(plans.Plans))
	}
	b.Click(`article.plan[data-plan="` + id + `"] button[data-action=approve]`)
	b.WaitFor(`!!document.querySelector('article.plan[data-plan="` + id + `"] [data-k=plan-approved]')`)
	b.Screenshot("plans-approved")
	// The engine takes the approval on its next tick (interval 2 s in the
	// demo); the plan then records it, given through the console.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Second) {
		if err := f.API.Get("plans", nil, &plans); err != nil {
			t.Fatal(err)
		}
		var approval *struct{ By, Via string }
		for _, p := range plans.Plans {
			if p.ID == id {
				approval = p.Approval
			}
		}
		if approval != nil {
			if approval.Via != "insights console" {
				t.Errorf("plan %s was approved via %q, want the insights console", id, approval.Via)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a minute after the console's Approve, plan %s records no approval", id)
		}
	}
}

// checkRegressions: the Inference page's latency regressions are the
// diagnosis's latency_regression findings the gateway wrote (events.jsonl),
// each with the cause the finding names; the Waste & findings page names the
// same cause.
func checkRegressions(t *testing.T, f *consoleFleet, b *Browser) {
	written := map[string]map[string]bool{} // namespace/workload → causes
	for _, ev := range readJSONLines(t, filepath.Join(f.OutDir, "events.jsonl")) {
		if ev["event.name"] != "accelerator.finding" || ev["accelerator.finding.kind"] != "latency_regression" {
			continue
		}
		ns, _ := ev["k8s.namespace.name"].(string)
		w, _ := ev["accelerator.workload.name"].(string)
		cause, _ := ev["accelerator.finding.cause"].(string)
		if written[ns+"/"+w] == nil {
			written[ns+"/"+w] = map[string]bool{}
		}
		written[ns+"/"+w][cause] = true
	}
	b.Visit(f.Base+"inference", "inference")
	rows := EvalJSON[[]struct{ Workload, Cause, Evidence string }](b, `[...document.querySelectorAll('table.regressions tbody tr[data-cause]')].map((tr) => ({
		workload: tr.querySelector('td:nth-child(1) b').textContent,
		cause: tr.dataset.cause,
		evidence: tr.querySelector('[data-k=regression-evidence]').textContent}))`)
	if len(written) > 0 && len(rows) == 0 {
		t.Fatalf("the gateway wrote latency_regression findings for %v; the inference page lists none", written)
	}
	for _, r := range rows {
		if !written[r.Workload][r.Cause] {
			t.Errorf("inference page: a latency regression of %s with cause %q; the gateway wrote %v", r.Workload, r.Cause, written[r.Workload])
		}
		if r.Evidence == "" || r.Evidence == "—" {
			t.Errorf("inference page: the latency regression of %s shows no evidence", r.Workload)
		}
	}
	if len(rows) == 0 {
		t.Log("no latency regression in the demo yet: the section is checked empty")
		return
	}
	b.Visit(f.Base+"findings?kind=latency_regression", "findings")
	for _, reason := range EvalJSON[[]string](b, `[...document.querySelectorAll('table.findings tbody tr[data-kind=latency_regression] [data-k=finding-reason]')].map((x) => x.textContent)`) {
		if !strings.Contains(reason, "likely cause") {
			t.Errorf("findings page: a latency regression whose finding column names no cause: %q", reason)
		}
	}
}
