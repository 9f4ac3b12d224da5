package dcgmexporter

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/fleet"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/sim"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/simtest"
)

func parse(t testing.TB, text []byte) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		t.Fatalf("expfmt rejects the page: %v\n%s", err, text)
	}
	return fams
}

func labelsOf(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

func page(t testing.TB, f *fleet.Fleet, node string, at float64) (map[string]*dto.MetricFamily, []byte) {
	t.Helper()
	n, _ := f.Node(node)
	h := NewHandler(sim.NewWorld(f), n, sim.Timeline{})
	text := h.Metrics(nil, at)
	return parse(t, text), text
}

// find returns the series of a family whose labels include want.
func find(fam *dto.MetricFamily, want map[string]string) []*dto.Metric {
	var out []*dto.Metric
next:
	for _, m := range fam.GetMetric() {
		l := labelsOf(m)
		for k, v := range want {
			if l[k] != v {
				continue next
			}
		}
		out = append(out, m)
	}
	return out
}

func value(m *dto.Metric) float64 {
	if m.GetGauge() != nil {
		return m.GetGauge().GetValue()
	}
	return m.GetCounter().GetValue()
}

func TestPageParsesAndCarriesTheLabelTemplate(t *testing.T) {
	f := simtest.DemoFleet(t, 0)
	fams, text := page(t, f, "gpu-h100-a", 12*60)
	n, _ := f.Node("gpu-h100-a")
	for _, name := range FieldNames() {
		if fams[name] == nil {
			t.Errorf("family %s missing", name)
		}
	}
	if fams["DCGM_FI_DEV_ENERGY"] != nil || fams["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"].GetType() != dto.MetricType_COUNTER {
		t.Error("energy is not a counter")
	}
	// 6 whole GPUs + 4 + 3 MIG instances.
	if got := len(fams["DCGM_FI_DEV_SM_CLOCK"].GetMetric()); got != 13 {
		t.Errorf("SM clock series: %d, want 13", got)
	}
	g2 := find(fams["DCGM_FI_DEV_SM_CLOCK"], map[string]string{"gpu": "2"})[0]
	want := map[string]string{
		"gpu": "2", "UUID": n.GPUs[2].UUID, "pci_bus_id": "00000000:75:00.0", "device": "nvidia2",
		"modelName": "NVIDIA H100 80GB HBM3", "Hostname": "gpu-h100-a", "DCGM_FI_DRIVER_VERSION": "550.90.07",
		"pod": "llama-pretrain-0", "namespace": "research", "container": "trainer",
	}
	if got := labelsOf(g2); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("GPU 2 labels:\n got %v\nwant %v", got, want)
	}
	// MIG instances: parent UUID, profile and GI id; no GPU_UTIL.
	mig := find(fams["DCGM_FI_PROF_GR_ENGINE_ACTIVE"], map[string]string{"GPU_I_PROFILE": "3g.40gb"})
	if len(mig) != 1 || labelsOf(mig[0])["UUID"] != n.GPUs[0].UUID || labelsOf(mig[0])["GPU_I_ID"] != "2" || labelsOf(mig[0])["pod"] != "vllm-llama-6b9f7d4c8-k2x7p" {
		t.Errorf("3g.40gb instance: %v", mig)
	}
	for _, m := range fams["DCGM_FI_DEV_GPU_UTIL"].GetMetric() {
		if labelsOf(m)["GPU_I_PROFILE"] != "" {
			t.Errorf("GPU_UTIL reported for a MIG instance: %v", labelsOf(m))
		}
	}
	if v := value(find(fams["DCGM_FI_DEV_FB_FREE"], map[string]string{"GPU_I_PROFILE": "2g.20gb"})[0]); v < 19000 {
		t.Errorf("free memory of an empty 2g.20gb instance: %v MiB", v)
	}
	// Values as the exporter prints them: doubles with %f, integers bare.
	if !strings.Contains(string(text), "} 1980\n") || !bytes.Contains(text, []byte(`DCGM_FI_DEV_XID_ERRORS{gpu="2"`)) {
		t.Error("integer formatting")
	}
	for _, line := range strings.Split(string(text), "\n") {
		if strings.HasPrefix(line, "DCGM_FI_DEV_POWER_USAGE{") && !strings.Contains(line[strings.LastIndex(line, " "):], ".") {
			t.Errorf("POWER_USAGE is a double: %s", line)
		}
	}
	xid := find(fams["DCGM_FI_DEV_XID_ERRORS"], map[string]string{"gpu": "7"})[0]
	if l := labelsOf(xid); value(xid) != 63 || l["err_code"] != "63" || !strings.Contains(l["err_msg"], "row remapping") {
		t.Errorf("XID of the remapped GPU: %v %v", value(xid), l)
	}
}

func TestLostGPUReportsOnlyItsLastXID(t *testing.T) {
	f := simtest.DemoFleet(t, 0)
	fams, _ := page(t, f, "gpu-h200-a", 31*60)
	for name, fam := range fams {
		ms := find(fam, map[string]string{"gpu": "6"})
		if name == "DCGM_FI_DEV_XID_ERRORS" {
			if len(ms) != 1 || value(ms[0]) != 79 || labelsOf(ms[0])["err_msg"] != "GPU has fallen off the bus" {
				t.Errorf("XID of the lost GPU: %v", ms)
			}
			continue
		}
		if len(ms) != 0 {
			t.Errorf("%s still reported for the lost GPU", name)
		}
	}
}

// The exporter's default Kubernetes mode keeps one pod per device, the last
// one in the kubelet's list; nvidia.com/gpu.shared is not mapped at all.
// With virtual_gpus (KUBERNETES_VIRTUAL_GPUS, the demo's L4 node) the page
// is dcgm-exporter's (internal/pkg/transformation, toDeviceToSharingPods
// and createPerProcessMetrics): GPU_UTIL and FB_USED keep the GPU's own row
// beside one row per pod and replica (vgpu) with that pod's own reading and
// its pod_uid; every other field is copied on each pod's row, with no row
// of the GPU's own.
func TestKubernetesMapping(t *testing.T) {
	f := simtest.DemoFleet(t, 0)
	fams, _ := page(t, f, "gpu-l4-a", 60)
	g0 := find(fams["DCGM_FI_DEV_GPU_UTIL"], map[string]string{"gpu": "0"})
	if len(g0) != 3 || labelsOf(g0[0])["pod"] != "" || labelsOf(g0[1])["pod"] != "vllm-support-7f6c5d8b9-a1b2c" ||
		labelsOf(g0[2])["pod"] != "vllm-support-7f6c5d8b9-d3e4f" || labelsOf(g0[2])["vgpu"] != "1" || labelsOf(g0[2])["pod_uid"] == "" {
		t.Errorf("demo L4 GPU 0 (two pods, virtual GPUs): %v", g0)
	}
	// sglang-small-0 holds replicas 0 and 1 of GPU 1: two rows, each with
	// the pod's reading (the GPU's: it is the only pod).
	g1 := find(fams["DCGM_FI_DEV_GPU_UTIL"], map[string]string{"gpu": "1", "pod": "sglang-small-0"})
	if len(g1) != 2 || labelsOf(g1[0])["vgpu"] != "0" || labelsOf(g1[1])["vgpu"] != "1" || value(g1[0]) != value(g1[1]) {
		t.Errorf("demo L4 GPU 1 (one pod, two replicas): %v", g1)
	}
	if own := find(fams["DCGM_FI_DEV_GPU_UTIL"], map[string]string{"gpu": "1", "pod": ""}); len(own) != 1 || len(g1) > 0 && value(own[0]) != value(g1[0]) {
		t.Errorf("demo L4 GPU 1: the GPU's own row %v beside its one pod's %v", own, g1)
	}
	if g3 := find(fams["DCGM_FI_DEV_GPU_UTIL"], map[string]string{"gpu": "3"}); len(g3) != 1 || labelsOf(g3[0])["pod"] != "" {
		t.Errorf("unallocated GPU 3: %v", g3)
	}
	fams, _ = page(t, virtualGPUs(t), "l4", 60)
	v0 := find(fams["DCGM_FI_DEV_GPU_UTIL"], map[string]string{"gpu": "0"})
	if len(v0) != 3 || labelsOf(v0[0])["pod"] != "" || labelsOf(v0[1])["pod"] != "p" || labelsOf(v0[2])["pod"] != "q" {
		t.Errorf("time-sliced GPU 0 (two pods, virtual GPUs): %v", v0)
	}
	if len(v0) == 3 && value(v0[1]) == value(v0[2]) {
		t.Errorf("per-pod utilization is each pod's own, got %v and %v", value(v0[1]), value(v0[2]))
	}
	if mem := find(fams["DCGM_FI_DEV_FB_USED"], map[string]string{"gpu": "0"}); len(mem) != 3 || labelsOf(mem[0])["pod"] != "" ||
		labelsOf(mem[1])["pod_uid"] == "" {
		t.Errorf("FB_USED: the GPU's own row and one per pod: %v", mem)
	}
	clk := find(fams["DCGM_FI_DEV_SM_CLOCK"], map[string]string{"gpu": "0"})
	if len(clk) != 2 || value(clk[0]) != value(clk[1]) || labelsOf(clk[0])["pod"] != "p" || labelsOf(clk[1])["vgpu"] != "1" ||
		labelsOf(clk[0])["pod_uid"] != "" {
		t.Errorf("a device field is copied on every pod's row, and only there: %v", clk)
	}
	lastHolder := simtest.Fleet(t, `nodes:
  - name: l4
    instance_type: g6.xlarge
    gpus: {sharing: time-slicing, replicas: 2}
pods:
  - name: p
    node: l4
    workload: {profile: inference-steady}
    containers: [{name: c, replicas: ["0::0"]}]
  - name: q
    node: l4
    workload: {profile: inference-steady}
    containers: [{name: c, replicas: ["0::1"]}]
`, 1)
	fams, _ = page(t, lastHolder, "l4", 60)
	if g := fams["DCGM_FI_DEV_GPU_UTIL"].GetMetric(); len(g) != 1 || labelsOf(g[0])["pod"] != "q" {
		t.Errorf("default mode, time-sliced GPU of two pods: %v", g)
	}
	renamed := simtest.Fleet(t, `nodes:
  - name: l4
    instance_type: g6.xlarge
    gpus: {sharing: time-slicing, replicas: 2, rename_by_default: true}
    dcgm_exporter: {hostname_label: hostname}
pods:
  - name: p
    node: l4
    workload: {profile: inference-steady}
    containers: [{name: c, replicas: ["0::0"]}]
`, 1)
	fams, _ = page(t, renamed, "l4", 60)
	l := labelsOf(fams["DCGM_FI_DEV_GPU_UTIL"].GetMetric()[0])
	if l["pod"] != "" || l["hostname"] != "l4" || l["Hostname"] != "" {
		t.Errorf("gpu.shared replica: %v", l)
	}
	off := simtest.Fleet(t, `nodes:
  - name: a
    instance_type: p5.4xlarge
    dcgm_exporter: {kubernetes: false, old_namespace: true, hostname_label: none}
pods:
  - name: p
    node: a
    workload: {profile: idle}
    containers: [{name: c, gpus: [0]}]
`, 1)
	fams, _ = page(t, off, "a", 60)
	l = labelsOf(fams["DCGM_FI_DEV_GPU_UTIL"].GetMetric()[0])
	if l["pod"] != "" || l["pod_name"] != "" || l["uuid"] == "" || l["Hostname"] != "" {
		t.Errorf("kubernetes off, old namespace, no hostname: %v", l)
	}
}

// virtualGPUs is a time-sliced L4 of two pods, a busy one and an idle one,
// under dcgm-exporter's KUBERNETES_VIRTUAL_GPUS.
func virtualGPUs(t *testing.T) *fleet.Fleet {
	return simtest.Fleet(t, `nodes:
  - name: l4
    instance_type: g6.xlarge
    gpus: {sharing: time-slicing, replicas: 2}
    dcgm_exporter: {virtual_gpus: true}
pods:
  - name: p
    node: l4
    workload: {profile: inference-steady}
    containers: [{name: c, replicas: ["0::0"]}]
  - name: q
    node: l4
    workload: {profile: idle}
    containers: [{name: c, replicas: ["0::1"]}]
`, 1)
}

// With --kubernetes-enable-dra every consumer of a shared claim gets its own
// copy of the device's series, with the claim's labels.
func TestDRAMapping(t *testing.T) {
	f := simtest.DemoFleet(t, 0)
	fams, _ := page(t, f, "gpu-h200-a", 60)
	g4 := find(fams["DCGM_FI_DEV_FB_USED"], map[string]string{"gpu": "4"})
	pods := map[string]bool{}
	for _, m := range g4 {
		l := labelsOf(m)
		pods[l["pod"]] = true
		if l["dra_claim_name"] != "shared-h200" || l["dra_driver_name"] != "gpu.nvidia.com" || l["dra_pool_name"] != "gpu-h200-a" || l["dra_device_name"] != "gpu-4" {
			t.Errorf("DRA labels: %v", l)
		}
	}
	if len(g4) != 2 || !pods["sglang-chat-0"] || !pods["vllm-canary-0"] {
		t.Errorf("shared claim series: %d for %v", len(g4), pods)
	}
	mig := find(fams["DCGM_FI_DEV_FB_USED"], map[string]string{"GPU_I_PROFILE": "3g.71gb", "pod": "notebook-carol"})
	if len(mig) != 1 || labelsOf(mig[0])["dra_mig_profile"] != "3g.71gb" || !strings.HasPrefix(labelsOf(mig[0])["dra_mig_device_uuid"], "MIG-") {
		t.Errorf("MIG claim: %v", mig)
	}
}

func TestHTTPHandler(t *testing.T) {
	f := simtest.DemoFleet(t, 0)
	n, _ := f.Node("gpu-a100-a")
	clock := &sim.FixedClock{T: time.Unix(1_800_000_000, 0)}
	h := NewHandler(sim.NewWorld(f), n, sim.Timeline{Start: clock.T, Speed: 60, Clock: clock})
	srv := httptest.NewServer(h)
	defer srv.Close()
	get := func(path string) (int, string, []byte) {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Content-Type"), b
	}
	clock.T = clock.T.Add(21 * time.Second) // 21 simulated minutes: after the XID 48
	code, ct, body := get("/metrics")
	if code != 200 || ct != ContentType {
		t.Fatalf("/metrics: %d %s", code, ct)
	}
	fams := parse(t, body)
	if v := value(find(fams["DCGM_FI_DEV_XID_ERRORS"], map[string]string{"gpu": "6"})[0]); v != 48 {
		t.Errorf("XID of GPU 6 at 21 simulated minutes: %v", v)
	}
	if code, _, _ := get("/health"); code != 200 {
		t.Errorf("/health: %d", code)
	}
	if code, _, _ := get("/nope"); code != 404 {
		t.Errorf("/nope: %d", code)
	}
}

// BenchmarkRender512GPUs renders one node with 512 GPUs (the load harness's
// big node): samples plus text, as one scrape costs.
func BenchmarkRender512GPUs(b *testing.B) {
	f := simtest.Fleet(b, `nodes:
  - name: big
    instance_type: p5.48xlarge
    gpus: {count: 512}
    auto_pods: {team: load, devices_per_pod: 8}
`, 1)
	n, _ := f.Node("big")
	h := NewHandler(sim.NewWorld(f), n, sim.Timeline{})
	buf := h.Metrics(nil, 0)
	points := float64(len(parse(b, buf)["DCGM_FI_DEV_SM_CLOCK"].GetMetric()) * len(fields))
	b.ReportAllocs()
	b.ResetTimer()
	at := 0.0
	for i := 0; i < b.N; i++ {
		at += 10 // one scrape every 10 simulated seconds
		buf = h.Metrics(buf[:0], at)
	}
	b.ReportMetric(points*float64(b.N)/b.Elapsed().Seconds(), "points/s")
	b.ReportMetric(float64(len(buf)), "bytes/scrape")
}

// BenchmarkRenderFleet10kGPUs scrapes every node of a 1250-node, 10 000-GPU
// fleet once per iteration.
func BenchmarkRenderFleet10kGPUs(b *testing.B) {
	f := simtest.Fleet(b, `nodes:
  - name: p5
    instance_type: p5.48xlarge
    repeat: 1250
    auto_pods: {team: load, devices_per_pod: 8}
`, 1)
	w := sim.NewWorld(f)
	var hs []*Handler
	for _, n := range f.Nodes {
		hs = append(hs, NewHandler(w, n, sim.Timeline{}))
	}
	var buf []byte
	b.ReportAllocs()
	b.ResetTimer()
	at := 0.0
	for i := 0; i < b.N; i++ {
		at += 10
		for _, h := range hs {
			buf = h.Metrics(buf[:0], at)
		}
	}
	b.ReportMetric(float64(10000*len(fields)*b.N)/b.Elapsed().Seconds(), "points/s")
}

// A MIG GPU's families are printed once per GPU instance, as dcgm-exporter
// does, each read a moment apart: the lowest GPU-instance id's row is the
// GPU's sample as it is, the others differ a little (energy has grown).
// Whole GPUs print their sample unchanged.
func TestMIGRowsRepeatTheGPUsFamilies(t *testing.T) {
	f := simtest.DemoFleet(t, 0)
	n, _ := f.Node("gpu-h100-a")
	const at = 12 * 60
	fams, text := page(t, f, "gpu-h100-a", at)
	_, again := page(t, f, "gpu-h100-a", at)
	if !bytes.Equal(text, again) {
		t.Fatal("the page is not deterministic")
	}
	samples := map[string]sim.GPUSample{} // GPU UUID, or GPU UUID/GI id
	for _, e := range sim.NewWorld(f).NodeGPUs(n, at) {
		key := e.GPU.UUID
		if e.MIG != nil {
			key = fmt.Sprintf("%s/%d", e.GPU.UUID, e.MIG.GIID)
		}
		samples[key] = e.Sample
	}
	deviceFamilies := []string{"DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "DCGM_FI_DEV_GPU_TEMP",
		"DCGM_FI_DEV_MEMORY_TEMP", "DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_PROF_PCIE_TX_BYTES", "DCGM_FI_PROF_PCIE_RX_BYTES"}
	migGPUs := 0
	for _, g := range n.GPUs {
		if !g.MIGEnabled() {
			for _, name := range FieldNames() {
				for _, m := range find(fams[name], map[string]string{"UUID": g.UUID}) {
					if v, w := value(m), sampleValue(t, name, samples[g.UUID]); math.Abs(v-w) > 5e-7 {
						t.Errorf("%s of whole GPU %d: %v, its sample says %v", name, g.Index, v, w)
					}
				}
			}
			continue
		}
		migGPUs++
		lowest := g.MIG[0]
		for _, mi := range g.MIG {
			if mi.GIID < lowest.GIID {
				lowest = mi
			}
		}
		dev := samples[fmt.Sprintf("%s/%d", g.UUID, lowest.GIID)]
		for _, name := range deviceFamilies {
			rows := find(fams[name], map[string]string{"UUID": g.UUID})
			if len(rows) < len(g.MIG) {
				t.Fatalf("%s of MIG GPU %d: %d rows for %d instances", name, g.Index, len(rows), len(g.MIG))
			}
			differ := false
			for _, m := range rows {
				gi, _ := strconv.Atoi(labelsOf(m)["GPU_I_ID"])
				v, w := value(m), sampleValue(t, name, dev)
				if gi == lowest.GIID {
					if math.Abs(v-w) > 5e-7 {
						t.Errorf("%s of MIG GPU %d, lowest instance %d: %v, the GPU's sample says %v", name, g.Index, gi, v, w)
					}
					continue
				}
				if math.Abs(v-w) > 0.02*math.Abs(w)+1e-9 {
					t.Errorf("%s of MIG GPU %d, instance %d: %v is not a moment later than %v", name, g.Index, gi, v, w)
				}
				if name == "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION" && v < w {
					t.Errorf("energy read later is lower: %v < %v", v, w)
				}
				differ = differ || v != w
			}
			if changes := name == "DCGM_FI_DEV_POWER_USAGE" || name == "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"; changes && !differ && dev.PowerW > 0 {
				t.Errorf("%s of MIG GPU %d reads the same on every instance's row", name, g.Index)
			}
		}
	}
	if migGPUs != 2 {
		t.Fatalf("gpu-h100-a has %d MIG GPUs, want 2", migGPUs)
	}
}

// sampleValue is a family's value in a sample as the page prints it.
func sampleValue(t *testing.T, name string, s sim.GPUSample) float64 {
	t.Helper()
	for _, f := range fields {
		if f.name == name {
			iv, fv, _ := f.get(&s)
			if f.isF {
				return fv
			}
			return float64(iv)
		}
	}
	t.Fatalf("no field %s", name)
	return 0
}
