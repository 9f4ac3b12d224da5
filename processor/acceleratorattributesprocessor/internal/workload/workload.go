// Package workload reads who a pod works for: its team, its workload (the
// top of its owner chain, or what its labels say) and what kind of work it
// does, from the pod object alone. It needs no API calls beyond the pod, so
// the collector needs RBAC on pods only (not ReplicaSets or Jobs).
package workload

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

// Config says which labels and annotations carry team and workload. The
// first key present wins; annotations are read before labels.
type Config struct {
	TeamLabels              []string
	TeamAnnotations         []string
	WorkloadNameLabels      []string
	WorkloadNameAnnotations []string
	WorkloadTypeLabels      []string
	WorkloadTypeAnnotations []string
	// InferWorkloadType applies the owner-kind table (InferredTypes) to pods
	// whose labels say nothing.
	InferWorkloadType bool
	// PodLabels are copied as k8s.pod.label.<key>.
	PodLabels []string
}

// Meta is what the pod tells about its workload.
type Meta struct {
	UID       string
	Name      string
	Namespace string

	ReplicaSet, Deployment, StatefulSet, DaemonSet, Job, CronJob string

	// WorkloadName: label/annotation, else operator label, else top owner, else the pod.
	WorkloadName string
	// WorkloadKind is the kind of the top owner ("Deployment", "RayCluster", "Pod", …).
	WorkloadKind string
	// WorkloadType is an accelerator.workload.type value, or "" when nothing says.
	WorkloadType string
	// InvalidWorkloadType holds a label value that is not one of the enum
	// values, for a warning; WorkloadType is then "".
	InvalidWorkloadType string
	Team                string
	// Labels are the allowlisted labels as (key, value), in config order.
	Labels [][2]string
	// ContainerIDs maps runtime container ids (without the containerd:// prefix) to container names.
	ContainerIDs map[string]string
}

// operatorLabels name the workload of pods made by common operators, whose
// owner chain stops at an object that is not the workload the user thinks of
// (a LeaderWorkerSet's pods are owned by StatefulSets, a JobSet's by Jobs).
var operatorLabels = []struct{ label, kind string }{
	{"leaderworkerset.sigs.k8s.io/name", "LeaderWorkerSet"},
	{"trainer.kubeflow.org/trainjob-name", "TrainJob"},
	{"jobset.sigs.k8s.io/jobset-name", "JobSet"},
	{"training.kubeflow.org/job-name", "KubeflowJob"},
	{"serving.kserve.io/inferenceservice", "InferenceService"},
	{"ray.io/cluster", "RayCluster"},
	{"notebook-name", "Notebook"},
}

// InferredTypes is the owner-kind heuristic used when InferWorkloadType is
// on and no label or annotation gives the type. Only kinds whose purpose is
// unambiguous are listed: a plain Job or Deployment may train or serve.
var InferredTypes = map[string]string{
	"PyTorchJob":       accelschema.WorkloadTraining,
	"TFJob":            accelschema.WorkloadTraining,
	"MPIJob":           accelschema.WorkloadTraining,
	"JAXJob":           accelschema.WorkloadTraining,
	"XGBoostJob":       accelschema.WorkloadTraining,
	"PaddleJob":        accelschema.WorkloadTraining,
	"TrainJob":         accelschema.WorkloadTraining,
	"KubeflowJob":      accelschema.WorkloadTraining,
	"InferenceService": accelschema.WorkloadInference,
	"Notebook":         accelschema.WorkloadInteractive,
	"RayJob":           accelschema.WorkloadBatch,
}

// Resolve reads pod's metadata.
func Resolve(pod *corev1.Pod, cfg Config) Meta {
	m := Meta{UID: string(pod.UID), Name: pod.Name, Namespace: pod.Namespace}
	m.Team = lookup(pod, cfg.TeamAnnotations, cfg.TeamLabels)
	m.owners(pod)

	if name := lookup(pod, cfg.WorkloadNameAnnotations, cfg.WorkloadNameLabels); name != "" {
		m.WorkloadName = name
	} else {
		for _, ol := range operatorLabels {
			if v := pod.Labels[ol.label]; v != "" {
				m.WorkloadName, m.WorkloadKind = v, ol.kind
				break
			}
		}
	}
	if m.WorkloadName == "" {
		m.WorkloadName, m.WorkloadKind = m.topOwner(pod)
	}

	if t := lookup(pod, cfg.WorkloadTypeAnnotations, cfg.WorkloadTypeLabels); t != "" {
		if v := strings.ToLower(t); accelschema.EnumWorkloadType.Has(v) {
			m.WorkloadType = v
		} else {
			m.InvalidWorkloadType = t
		}
	}
	if m.WorkloadType == "" && cfg.InferWorkloadType {
		m.WorkloadType = InferredTypes[m.WorkloadKind]
	}

	for _, k := range cfg.PodLabels {
		if v, ok := pod.Labels[k]; ok {
			m.Labels = append(m.Labels, [2]string{k, v})
		}
	}
	for _, statuses := range [][]corev1.ContainerStatus{pod.Status.ContainerStatuses, pod.Status.InitContainerStatuses} {
		for _, cs := range statuses {
			if id := stripRuntime(cs.ContainerID); id != "" {
				if m.ContainerIDs == nil {
					m.ContainerIDs = map[string]string{}
				}
				m.ContainerIDs[id] = cs.Name
			}
		}
	}
	return m
}

func lookup(pod *corev1.Pod, annotations, labels []string) string {
	for _, k := range annotations {
		if v := pod.Annotations[k]; v != "" {
			return v
		}
	}
	for _, k := range labels {
		if v := pod.Labels[k]; v != "" {
			return v
		}
	}
	return ""
}

// owners fills the k8s.<kind>.name attributes from the controller reference.
// Deployments and CronJobs are read from their children's names, as the
// contrib k8sattributes processor does, so that no ReplicaSet or Job RBAC is
// needed: a ReplicaSet is named <deployment>-<pod-template-hash>, a CronJob's
// Job <cronjob>-<scheduled time in minutes>.
func (m *Meta) owners(pod *corev1.Pod) {
	ref := controllerOf(pod)
	if ref == nil {
		return
	}
	switch ref.Kind {
	case "ReplicaSet":
		m.ReplicaSet = ref.Name
		if hash := pod.Labels["pod-template-hash"]; hash != "" && strings.HasSuffix(ref.Name, "-"+hash) {
			m.Deployment = strings.TrimSuffix(ref.Name, "-"+hash)
		}
	case "StatefulSet":
		m.StatefulSet = ref.Name
	case "DaemonSet":
		m.DaemonSet = ref.Name
	case "Job":
		m.Job = ref.Name
		if i := strings.LastIndexByte(ref.Name, '-'); i > 0 && isCronSuffix(ref.Name[i+1:]) {
			m.CronJob = ref.Name[:i]
		}
	}
}

// isCronSuffix: the CronJob controller appends the scheduled time in minutes
// since the epoch, 8 digits or more since 1990.
func isCronSuffix(s string) bool {
	if len(s) < 8 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func (m *Meta) topOwner(pod *corev1.Pod) (name, kind string) {
	switch {
	case m.Deployment != "":
		return m.Deployment, "Deployment"
	case m.CronJob != "":
		return m.CronJob, "CronJob"
	}
	if ref := controllerOf(pod); ref != nil {
		return ref.Name, ref.Kind
	}
	return pod.Name, "Pod"
}

func controllerOf(pod *corev1.Pod) *metav1.OwnerReference {
	for i := range pod.OwnerReferences {
		if r := &pod.OwnerReferences[i]; r.Controller != nil && *r.Controller {
			return r
		}
	}
	if len(pod.OwnerReferences) == 1 {
		return &pod.OwnerReferences[0]
	}
	return nil
}

func stripRuntime(id string) string {
	if i := strings.Index(id, "://"); i >= 0 {
		return id[i+3:]
	}
	return id
}
