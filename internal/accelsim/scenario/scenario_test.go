package scenario

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func demoPath() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "distributions", "otelcol-accel", "demo", "fleet.yaml")
}

func TestDemoFleetIsValidAndComplete(t *testing.T) {
	s, err := Load(demoPath())
	if err != nil {
		t.Fatal(err)
	}
	if s.Seed != 42 || s.Cluster != "demo" {
		t.Errorf("seed %d cluster %q", s.Seed, s.Cluster)
	}
	profiles := map[string]bool{}
	for _, p := range s.Pods {
		if p.Workload != nil {
			profiles[p.Workload.Profile] = true
		}
	}
	for _, want := range Profiles {
		if !profiles[want] {
			t.Errorf("the demo fleet has no %s pod", want)
		}
	}
	types := map[string]bool{}
	xids := map[int]bool{}
	remap := false
	for _, n := range s.Nodes {
		types[n.InstanceType] = true
		for _, f := range n.Failures {
			xids[f.XID] = true
			remap = remap || f.RowRemap == RowRemapPending
		}
	}
	for _, want := range []string{"p5.48xlarge", "p4d.24xlarge", "p5en.48xlarge", "g6.12xlarge", "inf2.48xlarge", "trn1.32xlarge"} {
		if !types[want] {
			t.Errorf("the demo fleet has no %s node", want)
		}
	}
	if !xids[79] || !xids[48] || !remap {
		t.Errorf("the demo fleet misses a failure: xids %v, row remap pending %v", xids, remap)
	}
}

func TestDefaults(t *testing.T) {
	s, err := Parse("d.yaml", []byte(`
nodes:
  - name: n1
    instance_type: p5.48xlarge
  - name: n2
    instance_type: inf2.xlarge
pods:
  - name: p
    node: n1
    workload: {profile: training-degrading}
    containers: [{name: c, gpus: [0]}]
`))
	if err != nil {
		t.Fatal(err)
	}
	n := s.Nodes[0]
	if s.Cluster != defaultCluster || s.Region != defaultRegion || s.Seed != defaultSeed {
		t.Errorf("top-level defaults: %q %q %d", s.Cluster, s.Region, s.Seed)
	}
	if n.Zone != "us-east-1a" || n.GPUs.Model != "H100-80GB" || n.GPUs.Count != 8 || n.GPUs.Sharing != SharingNone || n.DriverVersion != defaultDriverVersion {
		t.Errorf("node defaults: %+v %+v", n, n.GPUs)
	}
	if !n.DCGMExporter.KubernetesEnabled() || n.DCGMExporter.HostnameLabel != "Hostname" {
		t.Errorf("dcgm-exporter defaults: %+v", n.DCGMExporter)
	}
	if s.Nodes[1].Neuron.Devices != 1 || s.Nodes[1].Neuron.Schema != NeuronSchemaGuide {
		t.Errorf("neuron defaults: %+v", s.Nodes[1].Neuron)
	}
	w := s.Pods[0].Workload
	if s.Pods[0].Namespace != "default" || w.DegradeAfter != defaultDegradeAfter || w.DegradeTo != defaultDegradeTo {
		t.Errorf("pod defaults: %+v", w)
	}
}

// Every mistake is reported with the file, the line and the field path.
func TestErrorsNameLineAndField(t *testing.T) {
	const base = `nodes:
  - name: gpu-a
    instance_type: p5.48xlarge
    gpus:
      mig:
        devices:
          - gpus: [0]
            layout: [3g.40gb, 2g.20gb, 1g.10gb]
  - name: l4
    instance_type: g6.12xlarge
    gpus: {sharing: time-slicing, replicas: 4}
`
	cases := []struct {
		name, yaml, want string
	}{
		{"unknown model", `nodes:
  - name: a
    instance_type: p5.48xlarge
  - name: b
    instance_type: p4d.24xlarge
    gpus:
      model: H300
`, `s.yaml:7: nodes[1].gpus.model: unknown model "H300" (want one of A100-40GB, H100-80GB, H200-141GB, L4)`},
		{"unknown field", `nodes:
  - name: a
    instance_type: p5.48xlarge
    gpu: {count: 2}
`, `s.yaml:4: nodes[0].gpu: unknown field "gpu" (want one of name, instance_type, zone, repeat, labels, driver_version, gpus, dra, dcgm_exporter, neuron, failures, auto_pods)`},
		{"unknown instance type", `nodes:
  - name: a
    instance_type: p9.huge
`, `s.yaml:3: nodes[0].instance_type: unknown instance type "p9.huge"`},
		{"wrong type", `nodes:
  - name: a
    instance_type: p5.48xlarge
    gpus: {count: eight}
`, `s.yaml:4: nodes[0].gpus.count: want an integer, got the string "eight"`},
		{"duration", `nodes:
  - name: a
    instance_type: p5.48xlarge
    failures:
      - gpu: 1
        at: 20
        xid: 79
`, `s.yaml:6: nodes[0].failures[0].at: want a duration such as "20m" or "1h30m", got the integer 20`},
		{"layout does not fit", `nodes:
  - name: a
    instance_type: p5.48xlarge
    gpus:
      mig:
        devices:
          - gpus: [0]
            layout: [4g.40gb, 4g.40gb]
`, `s.yaml:8: nodes[0].gpus.mig.devices[0].layout: at most 1 × 4g.40gb fit on one H100-80GB, layout has 2`},
		{"profile of another model", `nodes:
  - name: a
    instance_type: p4d.24xlarge
    gpus:
      mig:
        devices:
          - gpus: [0]
            layout: [3g.40gb]
`, `s.yaml:8: nodes[0].gpus.mig.devices[0].layout: unknown MIG profile "3g.40gb" for A100-40GB`},
		{"gpu index", base + `pods:
  - name: p
    node: gpu-a
    workload: {profile: idle}
    containers:
      - name: c
        gpus: [9]
`, `s.yaml:18: pods[0].containers[0].gpus[0]: GPU 9 does not exist (the node has 8: 0..7)`},
		{"whole GPU in MIG mode", base + `pods:
  - name: p
    node: gpu-a
    workload: {profile: idle}
    containers:
      - name: c
        gpus: [0]
`, `pods[0].containers[0].gpus[0]: GPU 0 is in MIG mode: request its MIG devices ("0:0" …)`},
		{"device held twice", base + `pods:
  - name: p
    node: gpu-a
    workload: {profile: idle}
    containers: [{name: c, mig: ["0:1"]}]
  - name: q
    node: gpu-a
    workload: {profile: idle}
    containers: [{name: c, mig: ["0:1"]}]
`, `s.yaml:20: pods[1].containers[0].mig[0]: MIG device 0:1 (2g.20gb) is already held by pod default/p container c`},
		{"whole GPU on a time-sliced node", base + `pods:
  - name: p
    node: l4
    workload: {profile: idle}
    containers: [{name: c, gpus: [1]}]
`, `node l4 shares GPUs by time-slicing: request replicas ("1::0"), not whole GPUs`},
		{"replica out of range", base + `pods:
  - name: p
    node: l4
    workload: {profile: idle}
    containers: [{name: c, replicas: ["1::7"]}]
`, `GPU 1 has 4 replicas (0..3), not 7`},
		{"unknown profile", base + `pods:
  - name: p
    node: l4
    workload: {profile: training-fast}
    containers: [{name: c, replicas: ["1::0"]}]
`, `s.yaml:15: pods[0].workload.profile: unknown profile "training-fast"`},
		{"knob of another profile", base + `pods:
  - name: p
    node: l4
    workload: {profile: inference-steady, degrade_after: 5m}
    containers: [{name: c, replicas: ["1::0"]}]
`, `pods[0].workload.degrade_after: degrade_after applies to the training-degrading profile, not inference-steady`},
		{"devices without workload", base + `pods:
  - name: p
    node: l4
    containers: [{name: c, replicas: ["1::0"]}]
`, `pods[0].workload: a pod that holds devices needs a workload`},
		{"unknown node", base + `pods:
  - name: p
    node: nowhere
    containers: [{name: c}]
`, `s.yaml:14: pods[0].node: unknown node "nowhere"`},
		{"neuron on nvidia", base + `pods:
  - name: p
    node: l4
    workload: {profile: idle}
    containers: [{name: c, neuron_cores: [0]}]
`, `node l4 has NVIDIA GPUs; neuron_cores and neuron_devices apply to Neuron nodes`},
		{"xid and row remap", `nodes:
  - name: a
    instance_type: p5.48xlarge
    failures:
      - {gpu: 1, at: 5m, xid: 48, row_remap: pending}
`, `nodes[0].failures[0]: give one of xid, row_remap and throttle`},
		{"claim on a device-plugin node", base + `resource_claims:
  - name: c1
    node: gpu-a
    gpus: [3]
`, `resource_claims[0].node: node gpu-a does not publish GPUs through DRA (set dra: true on it)`},
		{"inference without inference profile", `nodes:
  - name: a
    instance_type: p5.48xlarge
pods:
  - name: p
    node: a
    workload: {profile: training-steady}
    inference: {server: vllm}
    containers: [{name: c, gpus: [0]}]
`, `pods[0].inference: an inference server needs an inference workload profile`},
		{"unknown server", `nodes:
  - name: a
    instance_type: p5.48xlarge
pods:
  - name: p
    node: a
    workload: {profile: inference-steady}
    inference: {server: tgi}
    containers: [{name: c, gpus: [0]}]
`, `s.yaml:8: pods[0].inference.server: unknown inference server "tgi" (want vllm or sglang)`},
		{"field twice", `nodes:
  - name: a
    name: b
    instance_type: p5.48xlarge
`, `s.yaml:3: nodes[0].name: field given twice`},
		{"label value not a string", `nodes:
  - name: a
    instance_type: p5.48xlarge
    labels: {ready: true}
`, `nodes[0].labels.ready: want a string, got the boolean true (quote it)`},
		{"yaml syntax", "nodes:\n  - name: a\n   instance_type: x\n", `s.yaml:3: YAML syntax:`},
		{"yaml syntax without a line", "nodes:\n  - name: a\n    instance_type: p5: x\n", `s.yaml:3: YAML syntax: mapping values are not allowed in this context`},
		{"two documents", "nodes: []\n---\nnodes: []\n", `a scenario is one YAML document`},
		{"empty", "", `s.yaml:1: empty scenario`},
		{"no nodes", "cluster: x\n", `s.yaml:1: nodes: a scenario needs at least one node`},
		{"zone outside region", `region: eu-west-1
nodes:
  - name: a
    instance_type: p5.48xlarge
    zone: us-east-1a
`, `s.yaml:5: nodes[0].zone: zone "us-east-1a" is not in region eu-west-1`},
		{"single strategy mixing profiles", `nodes:
  - name: a
    instance_type: p4d.24xlarge
    gpus:
      count: 1
      mig:
        strategy: single
        devices:
          - gpus: [0]
            layout: [3g.20gb, 2g.10gb]
`, `strategy single needs every MIG device of the node to have one profile`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("s.yaml", []byte(c.yaml))
			if err == nil {
				t.Fatalf("accepted; want an error containing %q", c.want)
			}
			var es Errors
			if !errors.As(err, &es) || len(es) == 0 {
				t.Fatalf("error %T is not a scenario.Errors: %v", err, err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("got:\n%v\nwant it to contain:\n%s", err, c.want)
			}
			for _, e := range es {
				if e.Line < 1 || e.File != "s.yaml" {
					t.Errorf("error without a position: %+v", e)
				}
			}
		})
	}
}

// Several mistakes are all reported, in line order.
func TestAllErrorsReportedInOrder(t *testing.T) {
	_, err := Parse("s.yaml", []byte(`nodes:
  - name: a
    instance_type: p5.48xlarge
    gpus: {model: H300}
  - name: b
    instance_type: nope
pods:
  - name: p
    node: c
    containers: [{name: x}]
`))
	var es Errors
	if !errors.As(err, &es) || len(es) != 3 {
		t.Fatalf("want 3 errors, got %v", err)
	}
	for i := 1; i < len(es); i++ {
		if es[i].Line < es[i-1].Line {
			t.Errorf("errors out of order: %v", err)
		}
	}
}

func TestRepeatAndAutoPods(t *testing.T) {
	s, err := Parse("r.yaml", []byte(`nodes:
  - name: bulk
    instance_type: p5.48xlarge
    repeat: 3
    auto_pods: {team: load, devices_per_pod: 4}
pods:
  - name: x
    node: bulk-2
    workload: {profile: idle}
    containers: [{name: c, gpus: [0]}]
`))
	if err != nil {
		t.Fatal(err)
	}
	names := s.Nodes[0].ExpandedNames()
	if len(names) != 3 || names[2] != "bulk-2" {
		t.Errorf("expanded names %v", names)
	}
	if s.Nodes[0].AutoPods.Workload.Profile != ProfileTrainingSteady {
		t.Errorf("auto pods default workload: %+v", s.Nodes[0].AutoPods.Workload)
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "none.yaml"))
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("got %v", err)
	}
}

func TestDurationsAndAnchors(t *testing.T) {
	s, err := Parse("a.yaml", []byte(`nodes:
  - name: a
    instance_type: p5.48xlarge
    failures:
      - {gpu: 1, at: 1h30m, xid: 79}
workload_anchor: &w {profile: idle}
`))
	if err == nil {
		t.Fatalf("unknown top-level key accepted: %+v", s)
	}
	s, err = Parse("a.yaml", []byte(`nodes:
  - name: a
    instance_type: p5.48xlarge
    failures:
      - {gpu: 1, at: 1h30m, xid: 79}
pods:
  - name: p
    node: a
    workload: &w {profile: idle}
    containers: [{name: c, gpus: [2]}]
  - name: q
    node: a
    workload: *w
    containers: [{name: c, gpus: [3]}]
`))
	if err != nil {
		t.Fatal(err)
	}
	if s.Nodes[0].Failures[0].At != 90*time.Minute || s.Pods[1].Workload.Profile != ProfileIdle {
		t.Errorf("at %v, aliased workload %+v", s.Nodes[0].Failures[0].At, s.Pods[1].Workload)
	}
}

// FuzzParse feeds arbitrary documents to the decoder: it must never panic,
// and every error it returns must carry a position.
func FuzzParse(f *testing.F) {
	demo, err := os.ReadFile(demoPath())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(demo)
	f.Add([]byte("nodes:\n  - name: a\n    instance_type: p5.48xlarge\n"))
	f.Add([]byte("nodes: [{name: a, instance_type: trn2.48xlarge, neuron: {schema: legacy}}]\npods: [{name: p, node: a, workload: {profile: idle}, containers: [{name: c, neuron_cores: [1]}]}]"))
	f.Add([]byte("nodes:\n- &x {name: a}\n- *x\n"))
	f.Add([]byte("{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("f.yaml", data)
		if err != nil {
			var es Errors
			if !errors.As(err, &es) {
				t.Fatalf("unpositioned error %T: %v", err, err)
			}
			for _, e := range es {
				if e.Line < 1 {
					t.Fatalf("error without a line: %v", e)
				}
			}
			return
		}
		if len(s.Nodes) == 0 {
			t.Fatal("accepted a scenario without nodes")
		}
	})
}
