package kube

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/plan"
)

// Approvals reads `kubectl annotate node <node> <prefix>/approve=<plan id>`.
// Who approved is the field manager that set the annotation (kubectl's is
// kubectl-annotate) and when is that manager's time, both from the node's
// managedFields: the API server records them, the remediator does not
// trust a value anyone could write. An approval names one plan, so it
// cannot approve a later one.
type Approvals struct{ *Cluster }

func (a Approvals) Approval(ctx context.Context, p *plan.Plan) (*plan.Approval, error) {
	if p.Subject.Node == "" {
		return nil, nil
	}
	node, err := a.CS.CoreV1().Nodes().Get(ctx, p.Subject.Node, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", p.Subject.Node, err)
	}
	if strings.TrimSpace(node.Annotations[a.ApproveKey()]) != p.ID {
		return nil, nil
	}
	appr := &plan.Approval{By: "unknown", Via: "node annotation " + a.ApproveKey()}
	field := `"f:` + a.ApproveKey() + `"`
	for _, mf := range node.ManagedFields {
		if mf.FieldsV1 == nil || !strings.Contains(mf.FieldsV1.GetRawString(), field) {
			continue
		}
		appr.By = mf.Manager
		if mf.Time != nil {
			appr.At = mf.Time.UTC()
		}
	}
	return appr, nil
}
