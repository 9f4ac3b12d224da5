package discovery

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
)

func testRules(t *testing.T, selector string) Rules {
	sel, err := labels.Parse(selector)
	require.NoError(t, err)
	return Rules{
		NodeName:           "gpu-node-1",
		Selector:           sel,
		AnnotationPrefix:   "otelcol-accel.io",
		PrometheusFallback: true,
		ValidServer: func(s string) bool {
			switch s {
			case "vllm", "sglang", "triton", "tgi", "nim", "auto":
				return true
			}
			return false
		},
		DefaultServer: "auto",
		DefaultPort: func(kind string) int32 {
			if kind == "sglang" {
				return 30000
			}
			return 8000
		},
		DefaultPath: func(kind string) string {
			if kind == "nim" {
				return "/v1/metrics"
			}
			return "/metrics"
		},
	}
}

type podOpt func(*corev1.Pod)

func annotated(kv ...string) podOpt {
	return func(p *corev1.Pod) {
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		for i := 0; i < len(kv); i += 2 {
			p.Annotations[kv[i]] = kv[i+1]
		}
	}
}

func labelled(kv ...string) podOpt {
	return func(p *corev1.Pod) {
		if p.Labels == nil {
			p.Labels = map[string]string{}
		}
		for i := 0; i < len(kv); i += 2 {
			p.Labels[kv[i]] = kv[i+1]
		}
	}
}

func ports(ps ...corev1.ContainerPort) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "server", Ports: ps})
	}
}

func onNode(n string) podOpt { return func(p *corev1.Pod) { p.Spec.NodeName = n } }

func phase(ph corev1.PodPhase) podOpt { return func(p *corev1.Pod) { p.Status.Phase = ph } }

func pod(name string, opts ...podOpt) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "serving", UID: types.UID("uid-" + name)},
		Spec:       corev1.PodSpec{NodeName: "gpu-node-1"},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.1.2.3"},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

func TestTargetResolution(t *testing.T) {
	tests := []struct {
		name     string
		pod      *corev1.Pod
		selected bool
		ok       bool
		endpoint string
		server   string
		model    string
		err      string
	}{
		{
			name:     "annotation with port and path",
			pod:      pod("a", annotated("otelcol-accel.io/inference-server", "vllm", "otelcol-accel.io/metrics-port", "8080", "otelcol-accel.io/metrics-path", "stats")),
			selected: true, ok: true, endpoint: "http://10.1.2.3:8080/stats", server: "vllm",
		},
		{
			name:     "prometheus.io fallback for port, path and scheme",
			pod:      pod("b", annotated("otelcol-accel.io/inference-server", "SGLang ", "prometheus.io/port", "30001", "prometheus.io/path", "/m", "prometheus.io/scheme", "https")),
			selected: true, ok: true, endpoint: "https://10.1.2.3:30001/m", server: "sglang",
		},
		{
			name:     "our annotation beats prometheus.io",
			pod:      pod("c", annotated("otelcol-accel.io/inference-server", "vllm", "otelcol-accel.io/metrics-port", "8000", "prometheus.io/port", "9090")),
			selected: true, ok: true, endpoint: "http://10.1.2.3:8000/metrics", server: "vllm",
		},
		{
			name:     "named metrics port",
			pod:      pod("d", annotated("otelcol-accel.io/inference-server", "triton"), ports(corev1.ContainerPort{Name: "http", ContainerPort: 8000}, corev1.ContainerPort{Name: "metrics", ContainerPort: 8002})),
			selected: true, ok: true, endpoint: "http://10.1.2.3:8002/metrics", server: "triton",
		},
		{
			name:     "the kind's default port when declared",
			pod:      pod("e", annotated("otelcol-accel.io/inference-server", "sglang"), ports(corev1.ContainerPort{ContainerPort: 8080}, corev1.ContainerPort{ContainerPort: 30000})),
			selected: true, ok: true, endpoint: "http://10.1.2.3:30000/metrics", server: "sglang",
		},
		{
			name:     "NIM path and model annotation",
			pod:      pod("f", annotated("otelcol-accel.io/inference-server", "nim", "otelcol-accel.io/model", "meta/llama-3.1-8b-instruct"), ports(corev1.ContainerPort{ContainerPort: 8000})),
			selected: true, ok: true, endpoint: "http://10.1.2.3:8000/v1/metrics", server: "nim", model: "meta/llama-3.1-8b-instruct",
		},
		{
			name:     "selected by label, kind auto",
			pod:      pod("g", labelled("app.kubernetes.io/component", "inference-server"), ports(corev1.ContainerPort{ContainerPort: 8000})),
			selected: true, ok: true, endpoint: "http://10.1.2.3:8000/metrics", server: "auto",
		},
		{
			name:     "named port annotation",
			pod:      pod("h", annotated("otelcol-accel.io/inference-server", "vllm", "otelcol-accel.io/metrics-port", "api"), ports(corev1.ContainerPort{Name: "api", ContainerPort: 8001})),
			selected: true, ok: true, endpoint: "http://10.1.2.3:8001/metrics", server: "vllm",
		},
		{name: "neither label nor annotation", pod: pod("i", ports(corev1.ContainerPort{ContainerPort: 8000}))},
		{
			name: "pending pod", selected: true,
			pod: pod("j", annotated("otelcol-accel.io/inference-server", "vllm"), phase(corev1.PodPending)),
		},
		{
			name: "other node", selected: true,
			pod: pod("k", annotated("otelcol-accel.io/inference-server", "vllm"), onNode("gpu-node-2"), ports(corev1.ContainerPort{ContainerPort: 8000})),
		},
		{
			name: "unknown kind", selected: true,
			pod: pod("l", annotated("otelcol-accel.io/inference-server", "ollama"), ports(corev1.ContainerPort{ContainerPort: 8000})),
			err: `pod serving/l: annotation otelcol-accel.io/inference-server="ollama" is not a known server kind`,
		},
		{
			name: "no port at all", selected: true,
			pod: pod("m", annotated("otelcol-accel.io/inference-server", "vllm")),
			err: "pod serving/m: no metrics port: annotate it with otelcol-accel.io/metrics-port or declare a container port",
		},
		{
			name: "bad port annotation", selected: true,
			pod: pod("n", annotated("otelcol-accel.io/inference-server", "vllm", "otelcol-accel.io/metrics-port", "99999")),
			err: `pod serving/n: metrics port "99999" is neither a port number nor a named container port`,
		},
		{
			name: "bad scheme", selected: true,
			pod: pod("o", annotated("otelcol-accel.io/inference-server", "vllm", "otelcol-accel.io/metrics-scheme", "grpc"), ports(corev1.ContainerPort{ContainerPort: 8000})),
			err: `pod serving/o: metrics scheme "grpc" is neither http nor https`,
		},
	}
	r := testRules(t, "app.kubernetes.io/component=inference-server")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.selected, r.Selected(tt.pod))
			if !tt.selected {
				return
			}
			got, ok, err := r.Target(tt.pod)
			if tt.err != "" {
				require.EqualError(t, err, tt.err)
				assert.False(t, ok)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.ok, ok)
			if !ok {
				return
			}
			assert.Equal(t, tt.endpoint, got.Endpoint)
			assert.Equal(t, tt.server, got.Server)
			assert.Equal(t, tt.model, got.Model)
			assert.Equal(t, Pod{Name: tt.pod.Name, Namespace: "serving", UID: "uid-" + tt.pod.Name, NodeName: "gpu-node-1"}, got.Pod)
		})
	}
}

func TestEmptySelectorSelectsByAnnotationOnly(t *testing.T) {
	r := testRules(t, "")
	assert.False(t, r.Selected(pod("a", labelled("app", "vllm"))))
	assert.True(t, r.Selected(pod("b", annotated("otelcol-accel.io/inference-server", ""))))
}
