package kubetest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
)

// Decode reads the objects of a multi-document YAML file.
func Decode(path string) ([]runtime.Object, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []runtime.Object
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(doc, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, obj)
	}
}

// Apply creates (or replaces) the namespaces, service accounts and RBAC
// objects of the manifests, with the admin's client. Other kinds are
// refused: the harness runs no controllers that could use them.
func Apply(ctx context.Context, cs kubernetes.Interface, namespace string, objs ...runtime.Object) error {
	for _, obj := range objs {
		var err error
		switch o := obj.(type) {
		case *corev1.Namespace:
			_, err = cs.CoreV1().Namespaces().Create(ctx, o, metav1.CreateOptions{})
		case *corev1.ServiceAccount:
			o.Namespace = orDefault(o.Namespace, namespace)
			_, err = cs.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.ClusterRole:
			err = upsert(ctx, o, cs.RbacV1().ClusterRoles().Create, cs.RbacV1().ClusterRoles().Update)
		case *rbacv1.ClusterRoleBinding:
			err = upsert(ctx, o, cs.RbacV1().ClusterRoleBindings().Create, cs.RbacV1().ClusterRoleBindings().Update)
		case *rbacv1.Role:
			o.Namespace = orDefault(o.Namespace, namespace)
			err = upsert(ctx, o, cs.RbacV1().Roles(o.Namespace).Create, cs.RbacV1().Roles(o.Namespace).Update)
		case *rbacv1.RoleBinding:
			o.Namespace = orDefault(o.Namespace, namespace)
			err = upsert(ctx, o, cs.RbacV1().RoleBindings(o.Namespace).Create, cs.RbacV1().RoleBindings(o.Namespace).Update)
		default:
			return fmt.Errorf("kubetest.Apply: %T is not applied by the harness", obj)
		}
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	return nil
}

func orDefault(v, d string) string {
	if v == "" {
		return d
	}
	return v
}

type object interface{ GetName() string }

// upsert creates obj, or replaces the object of that name (a test that
// applies an edited role replaces the shipped one).
func upsert[T object](ctx context.Context, obj T,
	create func(context.Context, T, metav1.CreateOptions) (T, error),
	update func(context.Context, T, metav1.UpdateOptions) (T, error),
) error {
	if _, err := create(ctx, obj, metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
		return err
	}
	_, err := update(ctx, obj, metav1.UpdateOptions{})
	return err
}
