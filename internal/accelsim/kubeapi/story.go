package kubeapi

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/catalog"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/fleet"
)

// The reliability story (issue 19) plays into the API what a cluster shows
// while an inference endpoint scales up: a Deployment `serve/vllm-burst`
// grows from 1 to 3 replicas, every new replica is scheduled, pulls its
// image, starts and becomes ready at known offsets, all in one zone while
// others have GPUs (a zone imbalance), and a pod asking for more GPUs than
// any node has stays unschedulable. An HPA decides the scale-up (its
// lastScaleTime is the decision), a LeaderWorkerSet grows from one group to
// two, and Karpenter fails to launch a NodeClaim for the big pod for want
// of capacity. The offsets are in simulated seconds from the story's start.
const (
	StoryNamespace  = "serve"
	StoryDeployment = "vllm-burst"
	StoryModel      = "meta-llama/Llama-3.1-8B-Instruct"
	// StoryUnschedulable is the pod that cannot be placed.
	StoryUnschedulable = "vllm-burst-8gpu"
	// StoryLeaderWorkerSet grows from one group of two pods to two.
	StoryLeaderWorkerSet = "llama-405b"
	// StoryNodeClaim is the NodeClaim Karpenter could not launch.
	StoryNodeClaim = "gpu-burst-ice01"
)

// Story offsets of a scaled-up replica, in seconds from the story's start.
const (
	StoryScaleAt     = 30
	StoryScheduledAt = 33
	StoryPullSeconds = 42.1
	StoryPulledAt    = 77
	StoryStartedAt   = 79
	StoryReadyAt     = 139
	// StoryCapacityAt is when Karpenter's launch of StoryNodeClaim fails.
	StoryCapacityAt = 40
	// StoryGroupReadyAt is when the LeaderWorkerSet's second group is ready.
	StoryGroupReadyAt = 160
)

// PlayStory applies the story's objects to s as their times come: start is
// the story's start and speed how many simulated seconds pass per second
// (the simulator's --speed). It returns when the story is over or ctx ends.
func PlayStory(ctx context.Context, s *Store, f *fleet.Fleet, start time.Time, speed float64) error {
	nodes := gpuNodes(f)
	if len(nodes) == 0 {
		return fmt.Errorf("kubeapi: the story needs an NVIDIA node; the fleet has none")
	}
	home := nodes[0]
	at := func(sec float64) metav1.Time {
		return metav1.NewTime(start.Add(time.Duration(sec * float64(time.Second))))
	}
	wait := func(sec float64) bool {
		d := time.Until(start.Add(time.Duration(sec / speed * float64(time.Second))))
		if d <= 0 {
			return ctx.Err() == nil
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(d):
			return true
		}
	}
	dep := storyDeployment(1, 1)
	first := storyPod(0, home.Name, at(-600), true)
	first.Status.Conditions = readyConditions(at(-597), at(-480))
	big := storyPod(99, "", at(0), false)
	big.Name = StoryUnschedulable
	big.Spec.Containers[0].Resources.Limits["nvidia.com/gpu"] = resource.MustParse("16")
	big.Spec.NodeSelector = map[string]string{"node.kubernetes.io/instance-type": home.InstanceType}
	big.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
		Reason: corev1.PodReasonUnschedulable, LastTransitionTime: at(1)}}
	failed := storyEvent(big, "FailedScheduling",
		fmt.Sprintf("0/%d nodes are available: %d Insufficient nvidia.com/gpu. preemption: 0/%d nodes are available.", len(f.Nodes), len(nodes), len(f.Nodes)), at(1))
	for _, o := range []runtime.Object{dep, first, big, failed, storyHPA(1, 1, nil, "ReadyForNewScale"), storyLWS(1, 1)} {
		if err := s.Apply(o); err != nil {
			return err
		}
	}

	if !wait(StoryScaleAt) {
		return nil
	}
	dep = storyDeployment(3, 1)
	pods := []*corev1.Pod{storyPod(1, "", at(StoryScaleAt), false), storyPod(2, "", at(StoryScaleAt), false)}
	// The HPA scales the Deployment, then writes its own status.
	decided := at(StoryScaleAt)
	for _, o := range []runtime.Object{dep, storyHPA(3, 1, &decided, "SucceededRescale"), storyLWS(2, 1)} {
		if err := s.Apply(o); err != nil {
			return err
		}
	}
	for _, p := range pods {
		if err := s.Apply(p.DeepCopy()); err != nil {
			return err
		}
	}
	steps := []struct {
		sec  float64
		step func(p *corev1.Pod) []runtime.Object
	}{
		{StoryScheduledAt, func(p *corev1.Pod) []runtime.Object {
			p.Spec.NodeName = home.Name // one zone: the imbalance
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: at(StoryScheduledAt)}}
			return []runtime.Object{p.DeepCopy()}
		}},
		{StoryCapacityAt, func(p *corev1.Pod) []runtime.Object {
			if p.Name != pods[0].Name {
				return nil
			}
			return []runtime.Object{storyNodeClaim(home, at(StoryCapacityAt))}
		}},
		{StoryPulledAt, func(p *corev1.Pod) []runtime.Object {
			return []runtime.Object{storyEvent(p, "Pulled", fmt.Sprintf(`Successfully pulled image "vllm/vllm-openai:v0.11.0" in %.1fs (%.1fs including waiting). Image size: 9876543210 bytes.`,
				StoryPullSeconds, StoryPullSeconds+0.4), at(StoryPulledAt))}
		}},
		{StoryStartedAt, func(p *corev1.Pod) []runtime.Object {
			p.Status.Phase = corev1.PodRunning
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "vllm", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at(StoryStartedAt)}}}}
			return []runtime.Object{p.DeepCopy()}
		}},
		{StoryReadyAt, func(p *corev1.Pod) []runtime.Object {
			p.Status.Conditions = readyConditions(at(StoryScheduledAt), at(StoryReadyAt))
			return []runtime.Object{p.DeepCopy()}
		}},
	}
	for _, st := range steps {
		if !wait(st.sec) {
			return nil
		}
		for _, p := range pods {
			for _, o := range st.step(p) {
				if err := s.Apply(o); err != nil {
					return err
				}
			}
		}
	}
	for _, o := range []runtime.Object{storyDeployment(3, 3), storyHPA(3, 3, &decided, "ReadyForNewScale")} {
		if err := s.Apply(o); err != nil {
			return err
		}
	}
	if !wait(StoryGroupReadyAt) {
		return nil
	}
	return s.Apply(storyLWS(2, 2))
}

// storyHPA scales the story's Deployment between 1 and 4 replicas.
func storyHPA(desired, current int32, lastScale *metav1.Time, reason string) *autoscalingv2.HorizontalPodAutoscaler {
	minReplicas := int32(1)
	return &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: StoryNamespace, Name: StoryDeployment},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: StoryDeployment},
			MinReplicas:    &minReplicas, MaxReplicas: 4},
		Status: autoscalingv2.HorizontalPodAutoscalerStatus{DesiredReplicas: desired, CurrentReplicas: current, LastScaleTime: lastScale,
			Conditions: []autoscalingv2.HorizontalPodAutoscalerCondition{
				{Type: autoscalingv2.AbleToScale, Status: corev1.ConditionTrue, Reason: reason},
				{Type: autoscalingv2.ScalingActive, Status: corev1.ConditionTrue, Reason: "ValidMetricFound"},
			}}}
}

// storyLWS is a LeaderWorkerSet (leaderworkerset.x-k8s.io/v1) of groups
// of two pods with 8 GPUs each.
func storyLWS(replicas, ready int64) *unstructured.Unstructured {
	tmpl := map[string]any{
		"metadata": map[string]any{"labels": map[string]any{"otelcol-accel.io/model": "meta-llama/Llama-3.1-405B-Instruct"}},
		"spec": map[string]any{"containers": []any{map[string]any{"name": "vllm", "image": "vllm/vllm-openai:v0.11.0",
			"resources": map[string]any{"limits": map[string]any{"nvidia.com/gpu": "8"}}}}},
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
		"metadata": map[string]any{"namespace": StoryNamespace, "name": StoryLeaderWorkerSet, "uid": "5f0e7d1c-0000-4000-8000-00000000a405"},
		"spec": map[string]any{"replicas": replicas, "leaderWorkerTemplate": map[string]any{"size": int64(2),
			"leaderTemplate": runtime.DeepCopyJSON(tmpl), "workerTemplate": runtime.DeepCopyJSON(tmpl)}},
		"status": map[string]any{"replicas": replicas, "readyReplicas": ready},
	}}
}

// storyNodeClaim is the claim Karpenter made for the 16-GPU pod and could
// not launch: its Launched condition False, reason InsufficientCapacity.
func storyNodeClaim(home *fleet.Node, when metav1.Time) *unstructured.Unstructured {
	ts := when.UTC().Format(time.RFC3339)
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
		"metadata": map[string]any{"name": StoryNodeClaim, "uid": "5f0e7d1c-0000-4000-8000-00000000c1a1", "creationTimestamp": ts,
			"labels": map[string]any{"karpenter.sh/nodepool": "gpu"}},
		"spec": map[string]any{
			"resources": map[string]any{"requests": map[string]any{"nvidia.com/gpu": "16", "cpu": "8"}},
			"requirements": []any{
				map[string]any{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": []any{home.InstanceType}},
				map[string]any{"key": "topology.kubernetes.io/zone", "operator": "In", "values": []any{home.Zone}},
				map[string]any{"key": "karpenter.sh/capacity-type", "operator": "In", "values": []any{"on-demand"}},
			},
			"nodeClassRef": map[string]any{"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "gpu"},
		},
		"status": map[string]any{"conditions": []any{map[string]any{
			"type": "Launched", "status": "False", "reason": "InsufficientCapacity", "lastTransitionTime": ts,
			"message": "creating instance, insufficient capacity, InsufficientInstanceCapacity: We currently do not have sufficient " + home.InstanceType + " capacity in the Availability Zone you requested (" + home.Zone + ").",
		}}},
	}}
}

func gpuNodes(f *fleet.Fleet) []*fleet.Node {
	var out []*fleet.Node
	for _, n := range f.Nodes {
		if n.Kind == catalog.KindNVIDIA {
			out = append(out, n)
		}
	}
	return out
}

func storyDeployment(replicas, ready int32) *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: StoryNamespace, Name: StoryDeployment},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: storyLabels()},
			Spec:       storyPodSpec()}},
		Status: appsv1.DeploymentStatus{Replicas: replicas, ReadyReplicas: ready}}
}

func storyLabels() map[string]string {
	return map[string]string{"app": StoryDeployment, "pod-template-hash": "7c9d8", "otelcol-accel.io/model": StoryModel}
}

func storyPodSpec() corev1.PodSpec {
	return corev1.PodSpec{Containers: []corev1.Container{{Name: "vllm", Image: "vllm/vllm-openai:v0.11.0",
		Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}}}}}
}

// storyPod is replica i of the Deployment, created at created.
func storyPod(i int, node string, created metav1.Time, running bool) *corev1.Pod {
	yes := true
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: StoryNamespace, Name: fmt.Sprintf("%s-7c9d8-r%d", StoryDeployment, i),
		UID: types.UID(fmt.Sprintf("5f0e7d1c-0000-4000-8000-%012d", i)), CreationTimestamp: created, Labels: storyLabels(),
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: StoryDeployment + "-7c9d8", Controller: &yes}}},
		Spec: storyPodSpec(), Status: corev1.PodStatus{Phase: corev1.PodPending}}
	p.Spec.NodeName = node
	if running {
		p.Status.Phase = corev1.PodRunning
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "vllm", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: created}}}}
	}
	return p
}

func readyConditions(scheduled, ready metav1.Time) []corev1.PodCondition {
	return []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: scheduled},
		{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: ready},
	}
}

func storyEvent(p *corev1.Pod, reason, message string, when metav1.Time) *corev1.Event {
	typ := corev1.EventTypeNormal
	component := "kubelet"
	if reason == "FailedScheduling" {
		typ, component = corev1.EventTypeWarning, "default-scheduler"
	}
	return &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name + "." + reason, CreationTimestamp: when,
		UID: types.UID("ev-" + string(p.UID) + "-" + reason)},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: p.Namespace, Name: p.Name, UID: p.UID},
		Reason:         reason, Message: message, Type: typ, Count: 1, FirstTimestamp: when, LastTimestamp: when,
		Source: corev1.EventSource{Component: component, Host: p.Spec.NodeName}}
}
