package workload

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

var defaults = Config{
	TeamLabels:              []string{"team"},
	TeamAnnotations:         []string{"otelcol-accel.io/team"},
	WorkloadNameLabels:      []string{"app.kubernetes.io/part-of"},
	WorkloadNameAnnotations: []string{"otelcol-accel.io/workload"},
	WorkloadTypeLabels:      []string{"otelcol-accel.io/workload-type"},
	WorkloadTypeAnnotations: []string{"otelcol-accel.io/workload-type"},
	InferWorkloadType:       true,
	PodLabels:               []string{"app", "missing"},
}

func pod(name string, labels, annotations map[string]string, owner ...metav1.OwnerReference) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name: name, Namespace: "ml", UID: types.UID("uid-" + name),
		Labels: labels, Annotations: annotations, OwnerReferences: owner,
	}}
}

func ctrl(kind, name string) metav1.OwnerReference {
	yes := true
	return metav1.OwnerReference{Kind: kind, Name: name, Controller: &yes}
}

func TestOwnerChains(t *testing.T) {
	tests := []struct {
		name   string
		pod    *corev1.Pod
		check  func(t *testing.T, m Meta)
		wlName string
		wlKind string
		wlType string
	}{
		{"deployment via replicaset", pod("vllm-7d9f8c-abcde", map[string]string{"pod-template-hash": "7d9f8c"}, nil, ctrl("ReplicaSet", "vllm-7d9f8c")),
			func(t *testing.T, m Meta) {
				assert.Equal(t, "vllm-7d9f8c", m.ReplicaSet)
				assert.Equal(t, "vllm", m.Deployment)
			},
			"vllm", "Deployment", ""},
		{"bare replicaset", pod("rs-x", nil, nil, ctrl("ReplicaSet", "rs")),
			func(t *testing.T, m Meta) { assert.Equal(t, "rs", m.ReplicaSet); assert.Empty(t, m.Deployment) },
			"rs", "ReplicaSet", ""},
		{"cronjob via job", pod("nightly-29012345-q", nil, nil, ctrl("Job", "nightly-29012345")),
			func(t *testing.T, m Meta) {
				assert.Equal(t, "nightly-29012345", m.Job)
				assert.Equal(t, "nightly", m.CronJob)
			},
			"nightly", "CronJob", ""},
		{"plain job", pod("finetune-v2-x", nil, nil, ctrl("Job", "finetune-v2")),
			func(t *testing.T, m Meta) { assert.Equal(t, "finetune-v2", m.Job); assert.Empty(t, m.CronJob) },
			"finetune-v2", "Job", ""},
		{"statefulset", pod("db-0", nil, nil, ctrl("StatefulSet", "db")),
			func(t *testing.T, m Meta) { assert.Equal(t, "db", m.StatefulSet) }, "db", "StatefulSet", ""},
		{"daemonset", pod("dcgm-x", nil, nil, ctrl("DaemonSet", "dcgm")),
			func(t *testing.T, m Meta) { assert.Equal(t, "dcgm", m.DaemonSet) }, "dcgm", "DaemonSet", ""},
		{"leaderworkerset", pod("llama-0-1", map[string]string{"leaderworkerset.sigs.k8s.io/name": "llama"}, nil, ctrl("StatefulSet", "llama-0")),
			func(t *testing.T, m Meta) { assert.Equal(t, "llama-0", m.StatefulSet) }, "llama", "LeaderWorkerSet", ""},
		{"raycluster", pod("ray-head", map[string]string{"ray.io/cluster": "rc1"}, nil, ctrl("RayCluster", "rc1")),
			nil, "rc1", "RayCluster", ""},
		{"pytorchjob is training", pod("pt-master-0", nil, nil, ctrl("PyTorchJob", "bert")),
			nil, "bert", "PyTorchJob", "training"},
		{"kserve is inference", pod("isvc-x", map[string]string{"serving.kserve.io/inferenceservice": "llm"}, nil, ctrl("ReplicaSet", "isvc-predictor-abc")),
			nil, "llm", "InferenceService", "inference"},
		{"no owner: the pod is the workload", pod("scratch", nil, nil), nil, "scratch", "Pod", ""},
		{"label beats owner", pod("w", map[string]string{"app.kubernetes.io/part-of": "search"}, nil, ctrl("StatefulSet", "db")),
			nil, "search", "", ""},
		{"annotation beats label", pod("w", map[string]string{"app.kubernetes.io/part-of": "search", "otelcol-accel.io/workload-type": "batch"},
			map[string]string{"otelcol-accel.io/workload": "ranker", "otelcol-accel.io/workload-type": "Training"}),
			nil, "ranker", "", "training"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := Resolve(tt.pod, defaults)
			if tt.check != nil {
				tt.check(t, m)
			}
			assert.Equal(t, tt.wlName, m.WorkloadName)
			assert.Equal(t, tt.wlKind, m.WorkloadKind)
			assert.Equal(t, tt.wlType, m.WorkloadType)
		})
	}
}

func TestTeamLabelsAndContainers(t *testing.T) {
	p := pod("a", map[string]string{"team": "search", "app": "ranker", "otelcol-accel.io/workload-type": "gaming"}, nil)
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", ContainerID: "containerd://abc123"}, {Name: "pending"}}
	m := Resolve(p, defaults)
	assert.Equal(t, "search", m.Team)
	assert.Equal(t, [][2]string{{"app", "ranker"}}, m.Labels)
	assert.Equal(t, map[string]string{"abc123": "main"}, m.ContainerIDs)
	assert.Empty(t, m.WorkloadType)
	assert.Equal(t, "gaming", m.InvalidWorkloadType)

	p.Annotations = map[string]string{"otelcol-accel.io/team": "ranking"}
	assert.Equal(t, "ranking", Resolve(p, defaults).Team)

	noInfer := defaults
	noInfer.InferWorkloadType = false
	assert.Empty(t, Resolve(pod("pt", nil, nil, ctrl("PyTorchJob", "bert")), noInfer).WorkloadType)
}
