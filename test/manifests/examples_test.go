package manifests

import (
	"bytes"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// The sidecar example must decode strictly, run the sidecar config it ships,
// probe its health endpoint, and send to the node agent's hostPort.
func TestSidecarExample(t *testing.T) {
	var docs [][]byte
	for _, f := range []string{"inference-sidecar.yaml", "sidecar-config.yaml"} {
		raw, err := os.ReadFile(filepath.Join(kubernetesDir(), "examples", f))
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, bytes.Split(raw, []byte("\n---\n"))...)
	}
	objs, err := decodeFile(docs)
	if err != nil {
		t.Fatal(err)
	}
	var dep *appsv1.Deployment
	var cm *corev1.ConfigMap
	for _, o := range objs {
		switch v := o.(type) {
		case *appsv1.Deployment:
			dep = v
		case *corev1.ConfigMap:
			cm = v
		}
	}
	if dep == nil || cm == nil {
		t.Fatal("want a Deployment and the sidecar's ConfigMap")
	}
	spec := dep.Spec.Template.Spec
	c, ok := findContainer(spec, "otelcol-accel")
	if !ok {
		t.Fatal("no otelcol-accel sidecar")
	}
	if !strings.HasPrefix(c.Image, "ghcr.io/otelcol-accel/otelcol-accel-agent:") {
		t.Errorf("the sidecar runs the node agent's image (ghcr.io/otelcol-accel/otelcol-accel-agent), not %q", c.Image)
	}
	files := configArgs(c)
	if len(files) != 1 {
		t.Fatalf("sidecar configs: %v", files)
	}
	if _, ok := cm.Data[path.Base(files[0])]; !ok {
		t.Errorf("ConfigMap %s has no %s", cm.Name, path.Base(files[0]))
	}
	if v, _ := volume(spec, mustMount(t, c, path.Dir(files[0])).Name); v.ConfigMap == nil || v.ConfigMap.Name != cm.Name {
		t.Errorf("the sidecar's config directory is not the %s ConfigMap", cm.Name)
	}
	env := containerEnv(c)
	if env["OTELCOL_ACCEL_AGENT_ENDPOINT"] != "$(K8S_NODE_IP):4317" {
		t.Errorf("the sidecar must send to its node agent's hostPort: %q", env["OTELCOL_ACCEL_AGENT_ENDPOINT"])
	}
	for _, v := range []string{"K8S_POD_UID", "K8S_POD_NAME", "K8S_NAMESPACE_NAME", "K8S_NODE_IP"} {
		if _, ok := env[v]; !ok {
			t.Errorf("%s (downward API) is missing: the pod identity is the join key to its devices", v)
		}
	}
	cfg, err := loadConfig(path.Base(files[0]))
	if err != nil {
		t.Fatal(err)
	}
	checkNamedPort(t, "sidecar", c, "health", portOf(resolveIn([]map[string]any{cfg}, env, "extensions", "healthcheckv2", "http", "endpoint")))
	// The node agent opens the hostPort the sidecar sends to.
	agent, err := os.ReadFile(filepath.Join(kubernetesDir(), "base", "agent-nvidia.yaml"))
	if err != nil || !bytes.Contains(agent, []byte("hostPort: 4317")) {
		t.Error("the NVIDIA agent DaemonSet must expose OTLP gRPC on hostPort 4317 for sidecars")
	}
}

func mustMount(t *testing.T, c corev1.Container, dir string) corev1.VolumeMount {
	t.Helper()
	m, ok := mountFor(c, dir)
	if !ok {
		t.Fatalf("%s is not mounted", dir)
	}
	return m
}
