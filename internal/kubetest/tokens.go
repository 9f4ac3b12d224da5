package kubetest

import (
	"context"

	authv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// PodOnNode creates the namespace, the service account, the node and a
// pod of that account bound to that node (what a DaemonSet's pod is once
// scheduled), each unless it exists, and returns the pod. No kubelet runs
// it: it is there for the API server to bind tokens to.
func PodOnNode(ctx context.Context, cs kubernetes.Interface, namespace, serviceAccount, pod, node string) (*corev1.Pod, error) {
	create := func(err error) error {
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	}
	if err := create(Apply(ctx, cs, namespace,
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: serviceAccount, Namespace: namespace}})); err != nil {
		return nil, err
	}
	_, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}, metav1.CreateOptions{})
	if err := create(err); err != nil {
		return nil, err
	}
	p, err := cs.CoreV1().Pods(namespace).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: pod, Namespace: namespace},
		Spec: corev1.PodSpec{
			ServiceAccountName: serviceAccount,
			NodeName:           node,
			Containers:         []corev1.Container{{Name: "otelcol-accel", Image: "otelcol-accel:test"}},
		},
	}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return cs.CoreV1().Pods(namespace).Get(ctx, pod, metav1.GetOptions{})
	}
	return p, err
}

// BoundToken mints a token of the pod's service account bound to the pod
// (the TokenRequest API, as the kubelet does for a projected
// serviceAccountToken volume) for the audiences, valid ten minutes.
func BoundToken(ctx context.Context, cs kubernetes.Interface, pod *corev1.Pod, audiences ...string) (string, error) {
	expiry := int64(600)
	tr, err := cs.CoreV1().ServiceAccounts(pod.Namespace).CreateToken(ctx, pod.Spec.ServiceAccountName, &authv1.TokenRequest{
		Spec: authv1.TokenRequestSpec{
			Audiences:         audiences,
			ExpirationSeconds: &expiry,
			BoundObjectRef:    &authv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	return tr.Status.Token, nil
}

// AllowTokenReview binds the service account to system:auth-delegator
// (create TokenReviews and SubjectAccessReviews), as a gateway that
// verifies its senders' tokens is bound.
func AllowTokenReview(ctx context.Context, cs kubernetes.Interface, namespace, serviceAccount string) error {
	return Apply(ctx, cs, namespace, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: namespace + "-" + serviceAccount + "-tokenreview"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "system:auth-delegator"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: namespace, Name: serviceAccount}},
	})
}
