package lifecycle

import (
	"regexp"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// Unschedulable reports whether the scheduler has said it cannot place the
// pod now: Pending, PodScheduled False with reason Unschedulable.
func Unschedulable(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodPending || p.Spec.NodeName != "" {
		return false
	}
	c, ok := condition(p, corev1.PodScheduled)
	return ok && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable
}

// insufficient finds `Insufficient <resource>` in the scheduler's message
// ("0/12 nodes are available: 4 Insufficient nvidia.com/gpu, 8 node(s)
// didn't match Pod's node affinity/selector.").
var insufficient = regexp.MustCompile(`Insufficient ([A-Za-z0-9./_-]+)`)

// Lacking names the accelerator resources a scheduling message says are
// insufficient, among those the pod requests; when the message names
// none of them (affinity, taints, a DRA allocation failure), every
// accelerator resource the pod requests, since it is the pod's
// accelerators that could not be placed.
func (m Matcher) Lacking(requested []string, message string) []string {
	var out []string
	for _, g := range insufficient.FindAllStringSubmatch(message, -1) {
		if m.Is(g[1]) && slices.Contains(requested, g[1]) && !slices.Contains(out, g[1]) {
			out = append(out, g[1])
		}
	}
	if len(out) == 0 {
		return requested
	}
	slices.Sort(out)
	return out
}
