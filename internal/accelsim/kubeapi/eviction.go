package kubeapi

import (
	"fmt"
	"net/http"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// evict is POST pods/NAME/eviction (policy/v1 Eviction, or v1beta1: the
// same body). As the API server's eviction REST: a pod already terminating
// or finished is deleted without asking; otherwise the one
// PodDisruptionBudget selecting the pod must allow a disruption (429
// TooManyRequests with a DisruptionBudget cause when it does not; 500 when
// several select it), and the eviction takes one from its
// status.disruptionsAllowed and records the pod in disruptedPods. The pod
// is then deleted at once (no kubelet drains it); watches see it go.
func (s *Server) evict(req writeRequest) error {
	if req.rt.plural != "pods" {
		return notFoundErr(req.rt, req.name)
	}
	ev := &policyv1.Eviction{}
	if _, err := decodeInto(req.body, ev); err != nil {
		return badRequest("Eviction: %v", err)
	}
	if ev.Name != "" && ev.Name != req.name {
		return badRequest("name in URL does not match name in Eviction object")
	}
	st := s.store
	st.mu.Lock()
	e, ok := st.objects[req.rt.key()][req.ns+"/"+req.name]
	if !ok {
		st.mu.Unlock()
		return notFoundErr(req.rt, req.name)
	}
	if ev.DeleteOptions != nil {
		if err := preconditions(req.rt, e, ev.DeleteOptions.Preconditions); err != nil {
			st.mu.Unlock()
			return err
		}
		// client-go sends an eviction's dry run in its DeleteOptions.
		req.dry = req.dry || slices.Contains(ev.DeleteOptions.DryRun, metav1.DryRunAll)
	}
	pod := e.obj.(*corev1.Pod)
	var evs []event
	if pod.DeletionTimestamp == nil && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed {
		pe, err := st.takeDisruption(pod, req.dry, req.now)
		if err != nil {
			st.mu.Unlock()
			return err
		}
		if pe != nil {
			evs = append(evs, event{typ: "MODIFIED", entry: pe})
		}
	}
	if !req.dry {
		evs = append(evs, event{typ: "DELETED", entry: st.deleteLocked(req.rt, e)})
	}
	st.mu.Unlock()
	st.notify(evs)
	return nil
}

// takeDisruption checks the pod's PodDisruptionBudget and takes one
// disruption from it; the store's lock is held.
func (s *Store) takeDisruption(pod *corev1.Pod, dry bool, now time.Time) (*entry, error) {
	var budgets []*entry
	for _, e := range s.objects[pdbType.key()] {
		pdb := e.obj.(*policyv1.PodDisruptionBudget)
		if pdb.Namespace != pod.Namespace || pdb.Spec.Selector == nil {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(pod.Labels)) {
			continue
		}
		budgets = append(budgets, e)
	}
	switch len(budgets) {
	case 0:
		return nil, nil
	case 1:
	default:
		return nil, &statusError{http.StatusInternalServerError, metav1.StatusReasonInternalError,
			"This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.", nil}
	}
	pdb := budgets[0].obj.(*policyv1.PodDisruptionBudget).DeepCopy()
	if pdb.Status.DisruptionsAllowed <= 0 {
		return nil, &statusError{http.StatusTooManyRequests, metav1.StatusReasonTooManyRequests,
			"Cannot evict pod as it would violate the pod's disruption budget.",
			&metav1.StatusDetails{Causes: []metav1.StatusCause{{
				Type:    policyv1.DisruptionBudgetCause,
				Message: fmt.Sprintf("The disruption budget %s needs %d healthy pods and has %d currently", pdb.Name, pdb.Status.DesiredHealthy, pdb.Status.CurrentHealthy),
			}}}}
	}
	if dry {
		return nil, nil
	}
	pdb.Status.DisruptionsAllowed--
	if pdb.Status.DisruptedPods == nil {
		pdb.Status.DisruptedPods = map[string]metav1.Time{}
	}
	pdb.Status.DisruptedPods[pod.Name] = metav1.NewTime(now.Truncate(time.Second))
	return s.put(pdb, true)
}
