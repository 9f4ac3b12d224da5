package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/plan"
)

const (
	// planKey is the ConfigMap data key that holds the plan's JSON.
	planKey = "plan.json"
	// planLabel marks the remediator's plan ConfigMaps; its value is the
	// owner (the lease name), so two remediators in one namespace do not
	// read each other's plans.
	planLabel = "accelerator.otelcol-accel.io/remediation-plans"
)

// PlanStore keeps plans in the cluster, one ConfigMap per plan in the
// remediator's namespace (the Lease's), named <owner>-<plan id>. Every
// replica reads them, so the replica that takes the Lease resumes the old
// leader's plans where they stopped: a step saved as started or done by
// the old leader is seen as such, and not run again.
//
// Writes are optimistic: an update carries the resourceVersion this
// replica last read or wrote, so a write from a replica that lost the
// Lease but does not know it yet is refused (Conflict) rather than
// overwriting the new leader's progress, and the engine does not run the
// step it was about to record.
//
// The verbs: configmaps list (Load), create and update (Put), delete
// (Delete), in the namespace only (the shipped Role).
type PlanStore struct {
	CS        kubernetes.Interface
	Namespace string
	// Owner names and labels the ConfigMaps (the lease name).
	Owner string

	mu       sync.Mutex
	versions map[string]string // plan id → resourceVersion last read or written
}

var _ plan.Backend = (*PlanStore)(nil)

func (s *PlanStore) name(id string) string { return s.Owner + "-" + id }

// Load lists the plan ConfigMaps.
func (s *PlanStore) Load(ctx context.Context) ([]*plan.Plan, error) {
	list, err := s.CS.CoreV1().ConfigMaps(s.Namespace).List(ctx, metav1.ListOptions{LabelSelector: planLabel + "=" + s.Owner})
	if err != nil {
		return nil, fmt.Errorf("plans in ConfigMaps of %s: %w", s.Namespace, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.versions == nil {
		s.versions = map[string]string{}
	}
	out := make([]*plan.Plan, 0, len(list.Items))
	var bad []error
	for i := range list.Items {
		cm := &list.Items[i]
		var p plan.Plan
		if err := json.Unmarshal([]byte(cm.Data[planKey]), &p); err != nil || p.ID == "" {
			// One unreadable object (edited by hand) must not hide the
			// other plans: it is named, and left alone.
			bad = append(bad, fmt.Errorf("ConfigMap %s/%s: %s is not a plan (left alone): %v", s.Namespace, cm.Name, planKey, err))
			continue
		}
		s.versions[p.ID] = cm.ResourceVersion
		out = append(out, &p)
	}
	return out, errors.Join(bad...)
}

// Put creates the plan's ConfigMap, or updates it at the resourceVersion
// this replica last saw.
func (s *PlanStore) Put(ctx context.Context, p *plan.Plan, data []byte) error {
	s.mu.Lock()
	if s.versions == nil {
		s.versions = map[string]string{}
	}
	rv, known := s.versions[p.ID]
	s.mu.Unlock()
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name: s.name(p.ID), Namespace: s.Namespace, ResourceVersion: rv,
			Labels: map[string]string{planLabel: s.Owner, "app.kubernetes.io/managed-by": "otelcol-accel-remediator"},
		},
		Data: map[string]string{planKey: string(data)},
	}
	cms := s.CS.CoreV1().ConfigMaps(s.Namespace)
	var got *corev1.ConfigMap
	var err error
	if known {
		got, err = cms.Update(ctx, cm, metav1.UpdateOptions{FieldManager: "otelcol-accel-remediator"})
	} else {
		got, err = cms.Create(ctx, cm, metav1.CreateOptions{FieldManager: "otelcol-accel-remediator"})
	}
	switch {
	case apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err):
		return fmt.Errorf("plan %s was changed by another replica since this one read it (ConfigMap %s/%s); it is read again before it is acted on: %w",
			p.ID, s.Namespace, cm.Name, err)
	case err != nil:
		return fmt.Errorf("plan %s not saved in ConfigMap %s/%s: %w", p.ID, s.Namespace, cm.Name, err)
	}
	s.mu.Lock()
	s.versions[p.ID] = got.ResourceVersion
	s.mu.Unlock()
	return nil
}

// Delete removes the plans' ConfigMaps; one already gone is not an error.
func (s *PlanStore) Delete(ctx context.Context, ids []string) error {
	for _, id := range ids {
		err := s.CS.CoreV1().ConfigMaps(s.Namespace).Delete(ctx, s.name(id), metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("plan %s not deleted (ConfigMap %s/%s): %w", id, s.Namespace, s.name(id), err)
		}
		s.mu.Lock()
		delete(s.versions, id)
		s.mu.Unlock()
	}
	return nil
}
