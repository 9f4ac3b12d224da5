package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	v1 "k8s.io/kubelet/pkg/apis/podresources/v1"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/endpoints"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/simtest"
)

// binary is the accelsim built for these tests: neuron-monitor must be a
// real subprocess, and serve must shut down on a real signal.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "accelsim-bin")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "accelsim")
	out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build accelsim: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var (
	demoScenario = simtest.DemoScenarioPath()
	trn2Scenario = simtest.Trn2ScenarioPath()
)

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

func TestValidate(t *testing.T) {
	out, err := exec.Command(binary, "validate", "-scenario", demoScenario).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "ok: 6 nodes, 28 GPUs, 28 Neuron devices") {
		t.Fatalf("demo fleet: %v\n%s", err, out)
	}
	bad := filepath.Join(t.TempDir(), "fleet.yaml")
	if err := os.WriteFile(bad, []byte("nodes:\n  - name: a\n    instance_type: p5.48xlarge\n  - name: b\n    instance_type: p4d.24xlarge\n    gpus:\n      model: H300\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "validate", bad)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	want := `fleet.yaml:7: nodes[1].gpus.model: unknown model "H300" (want one of A100-40GB, H100-80GB, H200-141GB, L4)`
	if exitCode(err) != exitError || !strings.Contains(stderr.String(), want) {
		t.Errorf("exit %d, stderr:\n%s\nwant %s", exitCode(err), stderr.String(), want)
	}
	if code := exitCode(exec.Command(binary, "validate").Run()); code != exitUsage {
		t.Errorf("validate without a file: exit %d", code)
	}
	if code := exitCode(exec.Command(binary, "bogus").Run()); code != exitUsage {
		t.Errorf("unknown command: exit %d", code)
	}
}

// neuron-monitor is a real subprocess: one JSON report per line per period,
// and a clean exit on SIGTERM.
func TestNeuronMonitorSubprocess(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "monitor.conf")
	if err := os.WriteFile(cfg, []byte(`{"period":"200ms","neuron_runtimes":[{"tag_filter":".*","metrics":[{"type":"neuroncore_counters"},{"type":"execution_stats"}]}],"system_metrics":[{"type":"neuron_hw_counters"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "neuron-monitor", "-c", cfg)
	cmd.Env = append(os.Environ(), "ACCELSIM_SCENARIO="+trn2Scenario, "ACCELSIM_NODE=neuron-trn2-a", "ACCELSIM_SPEED=60")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for i := 0; i < 3; i++ {
		if !sc.Scan() {
			t.Fatalf("report %d missing: %v\n%s", i, sc.Err(), stderr.String())
		}
		var r struct {
			NeuronRuntimeData []struct {
				Tag    string `json:"neuron_runtime_tag"`
				Report struct {
					NeuroncoreCounters struct {
						Period float64                    `json:"period"`
						InUse  map[string]json.RawMessage `json:"neuroncores_in_use"`
					} `json:"neuroncore_counters"`
				} `json:"report"`
			} `json:"neuron_runtime_data"`
			SystemData struct {
				HW struct {
					Devices []json.RawMessage `json:"neuron_devices"`
				} `json:"neuron_hw_counters"`
			} `json:"system_data"`
			Hardware struct {
				DeviceType string `json:"neuron_device_type"`
			} `json:"neuron_hardware_info"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("report %d is not JSON: %v", i, err)
		}
		if len(r.NeuronRuntimeData) != 2 || len(r.NeuronRuntimeData[0].Report.NeuroncoreCounters.InUse) != 64 ||
			len(r.SystemData.HW.Devices) != 16 || r.Hardware.DeviceType != "trainium2" {
			t.Errorf("report %d: %+v", i, r)
		}
		if p := r.NeuronRuntimeData[0].Report.NeuroncoreCounters.Period; p < 0.15 || p > 1 {
			t.Errorf("report %d period %v", i, p)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// Drain what is left so the child never blocks on a full pipe; the copy
	// ends with an error once Wait closes the pipe, which is expected.
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit after SIGTERM: %v\n%s", err, stderr.String())
	}
}

func TestNeuronMonitorBadInput(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "monitor.conf")
	if err := os.WriteFile(cfg, []byte(`{"period":"1s","neuron_runtimes":[{"metrics":[{"type":"gpu_util"}]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "ACCELSIM_SCENARIO="+demoScenario, "ACCELSIM_NODE=neuron-inf2-a")
	cases := []struct {
		args []string
		env  []string
		want string
	}{
		{[]string{"-c", cfg}, env, `neuron_runtimes[0].metrics[0].type: unknown runtime metric group "gpu_util"`},
		{[]string{"-c", "/nonexistent.conf"}, env, "read configuration"},
		{nil, os.Environ(), "no simulated node"},
		{[]string{"--node", "gpu-h100-a"}, env, "has no Neuron devices"},
		{[]string{"--node", "nope"}, env, `no node "nope"`},
		{[]string{"--speed", "fast"}, env, `invalid speed "fast"`},
	}
	for _, c := range cases {
		cmd := exec.Command(binary, append([]string{"neuron-monitor"}, c.args...)...)
		cmd.Env = c.env
		out, err := cmd.CombinedOutput()
		if exitCode(err) != exitError || !strings.Contains(string(out), c.want) {
			t.Errorf("%v: exit %d, output %q, want %q", c.args, exitCode(err), out, c.want)
		}
	}
}

// serve starts the whole fleet, announces endpoints.json, serves real
// protocols, and stops cleanly on SIGTERM.
func TestServe(t *testing.T) {
	dir, err := os.MkdirTemp("", "asv")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	cmd := exec.Command(binary, "serve", "--scenario", demoScenario, "--state-dir", dir, "--speed", "600", "--seed", "42")
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// A safety net for a failed test: after a clean exit Kill reports
	// os.ErrProcessDone, which is nothing to act on.
	defer func() { _ = cmd.Process.Kill() }()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	want := "accelsim ready: " + filepath.Join(dir, "endpoints.json") + "\n"
	if err != nil || line != want {
		t.Fatalf("first line %q (%v), want %q\n%s", line, err, want, stderr.String())
	}
	f, err := endpoints.Read(filepath.Join(dir, "endpoints.json"))
	if err != nil {
		t.Fatal(err)
	}
	h200, _ := f.Node("gpu-h200-a")
	// dcgm-exporter, after the XID 79 at 30 simulated minutes (3 s here).
	deadline := time.Now().Add(40 * time.Second)
	for {
		resp, err := http.Get(h200.DCGMExporterURL)
		if err != nil {
			t.Fatal(err)
		}
		parser := expfmt.NewTextParser(model.LegacyValidation)
		fams, err := parser.TextToMetricFamilies(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		lost := false
		for _, m := range fams["DCGM_FI_DEV_XID_ERRORS"].GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "gpu" && l.GetValue() == "6" && m.GetGauge().GetValue() == 79 {
					lost = true
				}
			}
		}
		if lost {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("XID 79 never appeared on GPU 6")
		}
		time.Sleep(time.Second)
	}
	// kubelet PodResources over the node's socket.
	conn, err := grpc.NewClient("unix://"+h200.PodResourcesSocket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	list, err := v1.NewPodResourcesListerClient(conn).List(ctx, &v1.ListPodResourcesRequest{})
	if err != nil || len(list.GetPodResources()) != len(h200.Pods) {
		t.Fatalf("List: %v, %d pods", err, len(list.GetPodResources()))
	}
	// The Kubernetes API.
	resp, err := http.Get(f.KubernetesAPI + "/api/v1/nodes?labelSelector=node.kubernetes.io%2Finstance-type%3Dp5en.48xlarge")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Contains(body, []byte(`"name":"gpu-h200-a"`)) || bytes.Contains(body, []byte(`"name":"gpu-h100-a"`)) {
		t.Errorf("nodes by instance type: %.300s", body)
	}
	// The node's neuron-monitor wrapper takes the real binary's flags.
	inf2, _ := f.Node("neuron-inf2-a")
	cfg := filepath.Join(dir, "nm.json")
	if err := os.WriteFile(cfg, []byte(`{"period":"100ms","neuron_runtimes":[{"metrics":[{"type":"neuroncore_counters"}]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	nm := exec.Command(inf2.NeuronMonitor.Path, "-c", cfg)
	nmOut, _ := nm.StdoutPipe()
	if err := nm.Start(); err != nil {
		t.Fatal(err)
	}
	first, err := bufio.NewReader(nmOut).ReadString('\n')
	if err != nil || !strings.Contains(first, `"neuron_runtime_tag":"llama-inf2"`) {
		t.Errorf("wrapper report: %v %.200s", err, first)
	}
	if err := nm.Process.Signal(syscall.SIGTERM); err != nil {
		t.Errorf("SIGTERM to the wrapper: %v", err)
	}
	// As above: drain, and expect the copy to end when Wait closes the pipe.
	go func() { _, _ = io.Copy(io.Discard, nmOut) }()
	if err := nm.Wait(); err != nil {
		t.Errorf("wrapper exit after SIGTERM: %v", err)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v\n%s", err, stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not stop within 15 s of SIGTERM")
	}
	if _, err := os.Stat(h200.PodResourcesSocket); !os.IsNotExist(err) {
		t.Errorf("socket left behind: %v", err)
	}
}

func TestServeRejectsBadScenarioWithPosition(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "f.yaml")
	if err := os.WriteFile(bad, []byte("nodes:\n  - name: a\n    instance_type: p5.48xlarge\n    failures: [{gpu: 12, at: 1m, xid: 79}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(binary, "serve", "--scenario", bad, "--state-dir", t.TempDir()).CombinedOutput()
	if exitCode(err) != exitUsage || !strings.Contains(string(out), "f.yaml:4: nodes[0].failures[0].gpu: GPU 12 does not exist") {
		t.Errorf("exit %d: %s", exitCode(err), out)
	}
	out, err = exec.Command(binary, "serve", "--scenario", demoScenario).CombinedOutput()
	if exitCode(err) != exitUsage || !strings.Contains(string(out), "--state-dir is required") {
		t.Errorf("exit %d: %s", exitCode(err), out)
	}
}
