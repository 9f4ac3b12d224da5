package kube

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/executor"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/plan"
	"github.com/otelcol-accel/otelcol-accel/internal/kubetest"
)

var round atomic.Int32

// exerciseAll runs every Kubernetes call the remediator makes, as the
// remediator, on fresh objects: every executor, the approval read, the node
// count and the leader lease. It returns the first error.
func exerciseAll(ctx context.Context, t *testing.T) error {
	n := round.Add(1)
	node, ns := fmt.Sprintf("rbac-%d", n), fmt.Sprintf("rbac-%d", n)
	mkNode(t, node, "p5.48xlarge")
	mkNamespace(t, ns)
	mkPod(t, ns, "holder", node, "ReplicaSet", nil)
	mkPod(t, ns, "app", node, "ReplicaSet", nil)
	mkPod(t, ns, "drained", node, "ReplicaSet", nil)
	mkNodeClaim(t, "claim-"+node, node)
	c := cluster()
	subj := plan.Subject{Node: node, DeviceID: "GPU-rbac", DRADriver: "gpu.nvidia.com", DRAPool: node, DRADevice: "gpu-0",
		HoldersKnown: true, Holders: []plan.Pod{{Namespace: ns, Name: "holder"}}}
	p := gpuPlan(t, 48, subj)
	app := gpuPlan(t, 13, plan.Subject{Node: node, HoldersKnown: true, Holders: []plan.Pod{{Namespace: ns, Name: "app"}}})
	steps := []func() error{
		func() error { _, err := (Approvals{c}).Approval(ctx, p); return err },
		func() error { _, err := c.CountNodes(ctx, "p5.48xlarge"); return err },
		func() error { _, err := (Condition{c}).Run(ctx, p, false); return err },
		func() error { _, err := (Event{c}).Run(ctx, p, false); return err },
		func() error { _, err := (DeviceTaint{c}).Run(ctx, p, false); return err },
		func() error { _, err := (Cordon{c}).Run(ctx, p, false); return err },
		func() error { _, err := (EvictHolders{c}).Run(ctx, p, false); return err },
		func() error { _, err := (RestartWorkload{c}).Run(ctx, app, false); return err },
		func() error { _, err := (Drain{c}).Run(ctx, p, false); return err },
		func() error {
			_, err := (ResetGPU{c}).Run(ctx, p, false)
			if executor.IsBlocked(err) { // asked the agent: waiting for its report
				return nil
			}
			return err
		},
		func() error { _, err := karpenter().Run(ctx, p, false); return err },
		func() error { return lease(ctx, c, "rbac-"+node) },
		func() error { return planRoundTrip(ctx, c, "rbac-"+node, p) },
		func() error { return watchNodes(ctx, c) },
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return err
		}
	}
	return nil
}

// lease makes the calls client-go's leader election makes on its Lease.
func lease(ctx context.Context, c *Cluster, name string) error {
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: namespace, Name: name},
		Client:     c.CS.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: "replica-a"},
	}
	_, _, err := lock.Get(ctx)
	if !apierrors.IsNotFound(err) {
		return fmt.Errorf("lease get: %w", err)
	}
	rec := resourcelock.LeaderElectionRecord{HolderIdentity: "replica-a", LeaseDurationSeconds: 15, AcquireTime: metav1.Now(), RenewTime: metav1.Now()}
	if err := lock.Create(ctx, rec); err != nil {
		return fmt.Errorf("lease create: %w", err)
	}
	if _, _, err := lock.Get(ctx); err != nil {
		return fmt.Errorf("lease get: %w", err)
	}
	rec.RenewTime = metav1.Now()
	if err := lock.Update(ctx, rec); err != nil {
		return fmt.Errorf("lease update: %w", err)
	}
	return nil
}

// watchNodes opens the watch the node label informer keeps open.
func watchNodes(ctx context.Context, c *Cluster) error {
	w, err := c.CS.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	w.Stop()
	return nil
}

// planRoundTrip makes every call the shared plan store makes: read the
// plans, record a new one, record its progress, prune it.
func planRoundTrip(ctx context.Context, c *Cluster, owner string, p *plan.Plan) error {
	s := &PlanStore{CS: c.CS, Namespace: namespace, Owner: owner}
	if _, err := s.Load(ctx); err != nil {
		return err
	}
	if err := s.Put(ctx, p, []byte(`{"id":"`+p.ID+`"}`)); err != nil {
		return err
	}
	if err := s.Put(ctx, p, []byte(`{"id":"`+p.ID+`","state":"running"}`)); err != nil {
		return err
	}
	return s.Delete(ctx, []string{p.ID})
}

// allowed asks the API server whether the remediator may do verb on
// resource now (RBAC changes reach the authorizer through its cache).
func allowed(ctx context.Context, t *testing.T, group, resource, verb, ns string) bool {
	t.Helper()
	res, sub, _ := strings.Cut(resource, "/")
	r, err := server.Client(remediator).AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
		Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: ns, Verb: verb, Group: group, Resource: res, Subresource: sub,
		}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	return r.Status.Allowed
}

func waitAuthorized(ctx context.Context, t *testing.T, group, resource, verb, ns string, want bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for allowed(ctx, t, group, resource, verb, ns) != want {
		if time.Now().After(deadline) {
			t.Fatalf("RBAC change for %s %s/%s not seen by the authorizer", verb, group, resource)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// The shipped ClusterRole and Role are enough for every call, and removing
// any one verb breaks one: the remediator holds nothing it does not use.
func TestShippedRoleIsExactlyEnough(t *testing.T) {
	ctx := context.Background()
	require.NoError(t, exerciseAll(ctx, t), "the shipped role must allow every call")

	objs, err := kubetest.Decode(shippedRBAC())
	require.NoError(t, err)
	admin := server.Client("")
	for _, obj := range objs {
		var rules []rbacv1.PolicyRule
		var ns string
		var with func([]rbacv1.PolicyRule) runtime.Object
		switch o := obj.(type) {
		case *rbacv1.ClusterRole:
			rules = o.Rules
			with = func(r []rbacv1.PolicyRule) runtime.Object { cp := o.DeepCopy(); cp.Rules = r; return cp }
		case *rbacv1.Role:
			rules, ns = o.Rules, namespace
			with = func(r []rbacv1.PolicyRule) runtime.Object { cp := o.DeepCopy(); cp.Rules = r; return cp }
		default:
			continue
		}
		for ri, rule := range rules {
			for _, verb := range rule.Verbs {
				for _, res := range rule.Resources {
					name := fmt.Sprintf("%s %s/%s", verb, rule.APIGroups[0], res)
					t.Run(name, func(t *testing.T) {
						less := make([]rbacv1.PolicyRule, len(rules))
						for i := range rules {
							less[i] = *rules[i].DeepCopy()
						}
						less[ri].Verbs = slices.DeleteFunc(slices.Clone(rule.Verbs), func(v string) bool { return v == verb })
						if len(less[ri].Verbs) == 0 { // a rule needs a verb: drop it
							less = slices.Delete(less, ri, ri+1)
						}
						require.NoError(t, kubetest.Apply(ctx, admin, namespace, with(less)))
						waitAuthorized(ctx, t, rule.APIGroups[0], res, verb, ns, false)
						err := exerciseAll(ctx, t)
						require.NoError(t, kubetest.Apply(ctx, admin, namespace, with(rules)))
						waitAuthorized(ctx, t, rule.APIGroups[0], res, verb, ns, true)
						require.Error(t, err, "without %s every call still succeeded: the verb is not needed", name)
						var status apierrors.APIStatus
						require.True(t, errors.As(err, &status) && apierrors.IsForbidden(err), "%v", err)
					})
				}
			}
		}
	}
}
