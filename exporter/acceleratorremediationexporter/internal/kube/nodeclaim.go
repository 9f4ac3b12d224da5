package kube

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/executor"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/plan"
	"github.com/otelcol-accel/otelcol-accel/internal/xid"
)

// NodeClaims is Karpenter's NodeClaim resource (karpenter.sh/v1).
var NodeClaims = schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodeclaims"}

// ReplaceKarpenterNode replaces a Karpenter node by deleting its NodeClaim
// (Karpenter drains and terminates the instance and provisions a new one).
// The NodeClaim is the one whose status names the node. A node Karpenter
// does not manage (no such NodeClaim, or a cluster without the API) is
// reported as NotKarpenter, so the instance can be replaced another way.
type ReplaceKarpenterNode struct {
	*Cluster
	Dynamic dynamic.Interface
}

// NotKarpenter is the Outcome detail of a node Karpenter does not manage.
const NotKarpenter = "not a Karpenter node (no NodeClaim names it)"

func (ReplaceKarpenterNode) Step() xid.Step                        { return xid.StepMarkUnhealthy }
func (ReplaceKarpenterNode) Applies(s plan.Subject) (bool, string) { return onNode(s) }
func (ReplaceKarpenterNode) Idempotent() bool                      { return true }

func (r ReplaceKarpenterNode) Run(ctx context.Context, p *plan.Plan, dry bool) (executor.Outcome, error) {
	list, err := r.Dynamic.Resource(NodeClaims).List(ctx, metav1.ListOptions{})
	if apierrors.IsNotFound(err) {
		return executor.Outcome{Skipped: true, Detail: NotKarpenter}, nil
	}
	if err != nil {
		return executor.Outcome{}, fmt.Errorf("list karpenter.sh nodeclaims: %w", err)
	}
	var claim *unstructured.Unstructured
	for i := range list.Items {
		if name, _, _ := unstructured.NestedString(list.Items[i].Object, "status", "nodeName"); name == p.Subject.Node {
			claim = &list.Items[i]
			break
		}
	}
	if claim == nil {
		return executor.Outcome{Skipped: true, Detail: NotKarpenter}, nil
	}
	uid := claim.GetUID()
	err = r.Dynamic.Resource(NodeClaims).Delete(ctx, claim.GetName(), metav1.DeleteOptions{
		Preconditions: &metav1.Preconditions{UID: &uid}, DryRun: dryRun(dry),
	})
	if apierrors.IsNotFound(err) {
		return executor.Outcome{Detail: "NodeClaim " + claim.GetName() + " already gone"}, nil
	}
	if err != nil {
		return executor.Outcome{}, fmt.Errorf("delete NodeClaim %s: %w", claim.GetName(), err)
	}
	return executor.Outcome{Detail: "NodeClaim " + claim.GetName() + " deleted: Karpenter replaces node " + p.Subject.Node}, nil
}
