package fleetserver

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/endpoints"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/sim"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/simtest"
)

// start serves the demo fleet with seed on a clock the test controls.
func start(t *testing.T, seed uint64, clock *sim.FixedClock) *Running {
	t.Helper()
	dir, err := os.MkdirTemp("", "asim")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Start(simtest.DemoFleet(t, seed), Options{
		ScenarioPath: simtest.DemoScenarioPath(), StateDir: dir, Speed: 60, Clock: clock, Executable: "/usr/local/bin/accelsim",
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := r.Close(ctx); err != nil {
			t.Error(err)
		}
		os.RemoveAll(dir)
	})
	return r
}

func fetch(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %d %s", url, resp.StatusCode, b)
	}
	return string(b)
}

// The same seed serves the same fleet: identical identifiers and identical
// pages at the same simulated time; another seed serves another fleet.
func TestDeterministicForASeed(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	ca, cb, cc := &sim.FixedClock{T: t0}, &sim.FixedClock{T: t0}, &sim.FixedClock{T: t0}
	a, b, c := start(t, 42, ca), start(t, 42, cb), start(t, 43, cc)
	devices := func(r *Running) []endpoints.Device {
		var out []endpoints.Device
		for _, n := range r.File.Nodes {
			out = append(out, n.Devices...)
		}
		return out
	}
	if !reflect.DeepEqual(devices(a), devices(b)) {
		t.Fatal("same seed, different devices")
	}
	if reflect.DeepEqual(devices(a), devices(c)) {
		t.Fatal("another seed gave the same devices")
	}
	// Read a at several times first; b only at the end.
	for i := 1; i <= 5; i++ {
		ca.T = t0.Add(time.Duration(i) * 7 * time.Second)
		fetch(t, a.File.Nodes[0].DCGMExporterURL)
		fetch(t, a.File.Nodes[0].Inference[0].URL)
	}
	ca.T, cb.T = t0.Add(40*time.Second), t0.Add(40*time.Second)
	for i := range a.File.Nodes {
		na, nb := a.File.Nodes[i], b.File.Nodes[i]
		if na.DCGMExporterURL != "" {
			if pa, pb := fetch(t, na.DCGMExporterURL), fetch(t, nb.DCGMExporterURL); pa != pb {
				t.Errorf("%s: dcgm-exporter pages differ", na.Name)
			}
		}
		for j := range na.Inference {
			if pa, pb := fetch(t, na.Inference[j].URL), fetch(t, nb.Inference[j].URL); stripCreated(pa) != stripCreated(pb) {
				t.Errorf("%s: inference pages differ", na.Inference[j].Pod)
			}
		}
	}
}

var createdRE = regexp.MustCompile(`(?m)^vllm:\S+_created\{.*$`)

// stripCreated drops the _created samples, which carry the wall start time.
func stripCreated(s string) string { return createdRE.ReplaceAllString(s, "") }

func TestEndpointsFile(t *testing.T) {
	r := start(t, 0, &sim.FixedClock{T: time.Unix(1_800_000_000, 0)})
	f, err := endpoints.Read(r.Path)
	if err != nil {
		t.Fatal(err)
	}
	if f.Seed != 42 || f.Speed != 60 || f.Kubeconfig == "" || !strings.HasPrefix(f.KubernetesAPI, "http://127.0.0.1:") || len(f.Nodes) != 6 {
		t.Fatalf("endpoints: %+v", f)
	}
	kc, err := os.ReadFile(f.Kubeconfig)
	if err != nil || !strings.Contains(string(kc), "server: "+f.KubernetesAPI) {
		t.Errorf("kubeconfig: %s %v", kc, err)
	}
	n, _ := f.Node("neuron-inf2-a")
	if n.NeuronMonitor == nil || n.DCGMExporterURL != "" {
		t.Fatalf("neuron node: %+v", n)
	}
	script, err := os.ReadFile(n.NeuronMonitor.Path)
	if err != nil || !strings.Contains(string(script), "exec /usr/local/bin/accelsim neuron-monitor --scenario ") || !strings.HasSuffix(string(script), "\"$@\"\n") {
		t.Errorf("wrapper: %s %v", script, err)
	}
	if st, err := os.Stat(n.NeuronMonitor.Path); err != nil || st.Mode()&0o111 == 0 {
		t.Errorf("wrapper is not executable: %v", err)
	}
	if n.NeuronMonitor.Argv[1] != "neuron-monitor" || !strings.Contains(strings.Join(n.NeuronMonitor.Env, " "), "ACCELSIM_NODE=neuron-inf2-a") {
		t.Errorf("neuron-monitor command: %+v", n.NeuronMonitor)
	}
	h100, _ := f.Node("gpu-h100-a")
	if len(h100.Inference) != 2 || h100.Inference[0].Server != "vllm" || h100.Inference[0].PodUID == "" {
		t.Errorf("inference targets: %+v", h100.Inference)
	}
	if d := h100.Devices[0]; len(d.MIG) != 4 || d.MIG[0].Profile != "3g.40gb" || d.MIG[0].Holders[0].Pod != "vllm-llama-6b9f7d4c8-k2x7p" {
		t.Errorf("MIG devices: %+v", d.MIG)
	}
	if d := h100.Devices[7]; len(d.Failures) != 1 || d.Failures[0].RowRemap != "pending" || d.Failures[0].At != "10m0s" || len(d.Holders) != 0 {
		t.Errorf("GPU 7: %+v", d)
	}
	if _, err := os.Stat(h100.PodResourcesSocket); err != nil {
		t.Errorf("socket: %v", err)
	}
	if p := h100.Pods[0]; p.Team != "research" || p.Workload != "llama-pretrain" || p.WorkloadType != "training" {
		t.Errorf("pod: %+v", p)
	}
}

func TestPortBaseAndCleanShutdown(t *testing.T) {
	dir, err := os.MkdirTemp("", "asim")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	f := simtest.DemoFleet(t, 0)
	r, err := Start(f, Options{ScenarioPath: simtest.DemoScenarioPath(), StateDir: dir, Speed: 1, PortBase: 31900, Executable: "/bin/true"})
	if err != nil {
		t.Skipf("ports 31900+ unavailable here: %v", err)
	}
	if r.File.KubernetesAPI != "http://127.0.0.1:31900" || r.File.Nodes[0].DCGMExporterURL != "http://127.0.0.1:31901/metrics" {
		t.Errorf("port layout: %s %s", r.File.KubernetesAPI, r.File.Nodes[0].DCGMExporterURL)
	}
	// A second fleet on the same ports fails with a message naming the fix.
	if _, err := Start(f, Options{ScenarioPath: simtest.DemoScenarioPath(), StateDir: dir + "-2", PortBase: 31900, Executable: "/bin/true"}); err == nil || !strings.Contains(err.Error(), "choose another --port-base") {
		t.Errorf("second fleet on the same ports: %v", err)
	}
	os.RemoveAll(dir + "-2")
	// An open watch does not hold up the shutdown.
	resp, err := http.Get(r.File.KubernetesAPI + "/api/v1/pods?watch=true")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	begin := time.Now()
	if err := r.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if time.Since(begin) > 3*time.Second {
		t.Errorf("shutdown took %v", time.Since(begin))
	}
	if _, err := os.Stat(r.File.Nodes[0].PodResourcesSocket); !os.IsNotExist(err) {
		t.Errorf("socket left behind: %v", err)
	}
}

// Collectors scrape nodes concurrently; the world's locks keep every page
// consistent (run with -race).
func TestConcurrentScrapes(t *testing.T) {
	clock := &sim.FixedClock{T: time.Unix(1_800_000_000, 0)}
	r := start(t, 0, clock)
	var urls []string
	for _, n := range r.File.Nodes {
		if n.DCGMExporterURL != "" {
			urls = append(urls, n.DCGMExporterURL)
		}
		for _, i := range n.Inference {
			urls = append(urls, i.URL)
		}
	}
	errs := make(chan error, len(urls)*3)
	var wg sync.WaitGroup
	for round := 0; round < 3; round++ {
		for _, u := range urls {
			wg.Add(1)
			go func(u string) {
				defer wg.Done()
				resp, err := http.Get(u)
				if err != nil {
					errs <- err
					return
				}
				defer resp.Body.Close()
				if _, err := io.Copy(io.Discard, resp.Body); err != nil || resp.StatusCode != http.StatusOK {
					errs <- fmt.Errorf("%s: %d %v", u, resp.StatusCode, err)
				}
			}(u)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// Connections the client dialled ahead and parked do not hold up Close.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	begin := time.Now()
	if err := r.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(begin); d > 3*time.Second {
		t.Errorf("Close took %v", d)
	}
}
