package kube

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/executor"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/plan"
)

// evictor asks the Eviction API to evict pods: the API server refuses
// (429) an eviction that a PodDisruptionBudget does not allow, which is
// returned as executor.Blocked so the engine waits and tries again until
// the step's time bound. A pod already gone counts as evicted; a pod of
// that name now on another node or with another UID is not touched.
type evictor struct{ *Cluster }

type evictResult struct {
	evicted, gone, blocked []string
}

func (r evictResult) String() string {
	var parts []string
	if len(r.evicted) > 0 {
		parts = append(parts, "evicted "+strings.Join(r.evicted, ", "))
	}
	if len(r.gone) > 0 {
		parts = append(parts, "already gone "+strings.Join(r.gone, ", "))
	}
	if len(r.blocked) > 0 {
		parts = append(parts, "blocked by a PodDisruptionBudget: "+strings.Join(r.blocked, ", "))
	}
	if len(parts) == 0 {
		return "no pod to evict"
	}
	return strings.Join(parts, "; ")
}

func (e evictor) evict(ctx context.Context, node string, pods []plan.Pod, dry bool) (evictResult, error) {
	var r evictResult
	var errs []error
	for _, h := range pods {
		name := h.Namespace + "/" + h.Name
		pod, err := e.CS.CoreV1().Pods(h.Namespace).Get(ctx, h.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			r.gone = append(r.gone, name)
			continue
		case err != nil:
			errs = append(errs, fmt.Errorf("pod %s: %w", name, err))
			continue
		}
		if pod.Spec.NodeName != node || (h.UID != "" && string(pod.UID) != h.UID) || pod.DeletionTimestamp != nil {
			r.gone = append(r.gone, name)
			continue
		}
		uid := pod.UID
		ev := &policyv1.Eviction{
			ObjectMeta:    metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace},
			DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}, DryRun: dryRun(dry)},
		}
		err = e.CS.PolicyV1().Evictions(pod.Namespace).Evict(ctx, ev)
		switch {
		case err == nil:
			r.evicted = append(r.evicted, name)
		case apierrors.IsNotFound(err):
			r.gone = append(r.gone, name)
		case apierrors.IsTooManyRequests(err):
			r.blocked = append(r.blocked, name)
		default:
			errs = append(errs, fmt.Errorf("evict %s: %w", name, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return r, err
	}
	if len(r.blocked) > 0 {
		return r, &executor.Blocked{Err: errors.New(r.String())}
	}
	return r, nil
}

func podsOf(pods []corev1.Pod) []plan.Pod {
	out := make([]plan.Pod, 0, len(pods))
	for i := range pods {
		out = append(out, plan.Pod{Namespace: pods[i].Namespace, Name: pods[i].Name, UID: string(pods[i].UID)})
	}
	return out
}
