//go:build e2e

package browser

import (
	"fmt"
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
	// receiver's gauges change as the story plays, and the page follows the
	// scrape by a refresh: both are read again until they agree.
	e2etest.Await(t, 2*time.Minute, "the simulator's Kubernetes story to reach accelerator_k8s", func() (string, bool) {
		want := readK8sTruth(scrape(t, f))
		return fmt.Sprintf("%d unschedulable pods, cold starts of %d workloads", want.unschedulable, len(want.coldStarts)),
			want.unschedulable > 0 && len(want.coldStarts) > 0
	})
	e2etest.Await(t, pageWait, "the lifecycle sections to agree with the gateway's Prometheus output", func() (string, bool) {
		want := readK8sTruth(scrape(t, f))
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
		return strings.TrimPrefix(mismatch, "; "), mismatch == ""
	})
	b.Screenshot("reliability-lifecycle")
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
	getPlans := func() {
		if err := f.API.Get("plans", nil, &plans); err != nil {
			t.Fatal(err)
		}
		if !plans.Running {
			t.Fatal("the gateway runs remediation for the console (demo-remediation.yaml), but /api/v1/plans says it is not running")
		}
	}
	id := ""
	e2etest.Await(t, 2*time.Minute, "a plan that waits for approval", func() (string, bool) {
		getPlans()
		for _, p := range plans.Plans {
			if p.AwaitingApproval {
				id = p.ID
				return "", true
			}
		}
		return fmt.Sprintf("%d plans, none awaiting approval", len(plans.Plans)), false
	})
	// XIDs keep making plans: the page and the API are read again until
	// they agree.
	e2etest.Await(t, pageWait, "the plans page to show the API's plans", func() (string, bool) {
		getPlans()
		b.Visit(f.Base+"plans", "plans")
		n := b.Eval(`String(document.querySelectorAll('article.plan[data-plan]').length)`)
		return fmt.Sprintf("the page shows %s plans, the API %d", n, len(plans.Plans)), n == strconv.Itoa(len(plans.Plans))
	})
	b.CheckConsole("plans")
	b.Click(`article.plan[data-plan="` + id + `"] button[data-action=approve]`)
	b.WaitFor(`!!document.querySelector('article.plan[data-plan="` + id + `"] [data-k=plan-approved]')`)
	b.Screenshot("plans-approved")
	// The engine takes the approval on its next tick (interval 2 s in the
	// demo); the plan then records it, given through the console.
	var approval *struct{ By, Via string }
	e2etest.Await(t, time.Minute, "plan "+id+" to record the console's approval", func() (string, bool) {
		getPlans()
		for _, p := range plans.Plans {
			if p.ID == id {
				approval = p.Approval
			}
		}
		return "no approval recorded", approval != nil
	})
	if approval.Via != "insights console" {
		t.Errorf("plan %s was approved via %q, want the insights console", id, approval.Via)
	}
}

// checkRegressions: the Inference page's latency regressions are the
// diagnosis's latency_regression findings the gateway wrote (events.jsonl),
// each with the cause the finding names; the Waste & findings page names the
// same cause.
func checkRegressions(t *testing.T, f *consoleFleet, b *Browser) {
	// The console hears a finding before the file exporter has flushed it
	// to events.jsonl: the file and the page are read again until every
	// regression the page shows is in the file.
	var rows []struct{ Workload, Cause, Evidence string }
	var written map[string]map[string]bool
	e2etest.Await(t, pageWait, "the inference page's latency regressions to be the ones the gateway wrote (events.jsonl)", func() (string, bool) {
		b.Visit(f.Base+"inference", "inference")
		rows = regressionRows(b)
		written = writtenRegressions(t, f)
		if len(written) > 0 && len(rows) == 0 {
			return fmt.Sprintf("the gateway wrote latency_regression findings for %v; the page lists none", written), false
		}
		for _, r := range rows {
			if !written[r.Workload][r.Cause] {
				return fmt.Sprintf("a regression of %s with cause %q on the page; the gateway wrote %v", r.Workload, r.Cause, written[r.Workload]), false
			}
		}
		return "", true
	})
	for _, r := range rows {
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

// writtenRegressions are the causes of the latency_regression findings the
// gateway wrote, by namespace/workload.
func writtenRegressions(t *testing.T, f *consoleFleet) map[string]map[string]bool {
	written := map[string]map[string]bool{}
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
	return written
}

// regressionRows are the latency regressions the inference page lists.
func regressionRows(b *Browser) []struct{ Workload, Cause, Evidence string } {
	return EvalJSON[[]struct{ Workload, Cause, Evidence string }](b, `[...document.querySelectorAll('table.regressions tbody tr[data-cause]')].map((tr) => ({
		workload: tr.querySelector('td:nth-child(1) b').textContent,
		cause: tr.dataset.cause,
		evidence: tr.querySelector('[data-k=regression-evidence]').textContent}))`)
}
