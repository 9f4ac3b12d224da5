package k8sclient

import (
	"errors"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/cache"
)

// Problem is one watch that does not work, with what to do about it.
type Problem struct {
	Kind Kind
	Err  error
	Hint string
}

// watchErrors keeps the last watch error of one informer.
type watchErrors struct {
	kind     Kind
	informer cache.SharedIndexInformer

	mu    sync.Mutex
	err   error
	errRV string // LastSyncResourceVersion when err happened
}

func (w *watchErrors) record(err error) {
	if err == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.err, w.errRV = err, w.informer.LastSyncResourceVersion()
}

// problem reports the last error unless the informer has made progress
// since, or it is a dropped watch the informer recovers from by itself.
func (w *watchErrors) problem() (Problem, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		return Problem{}, false
	}
	synced := w.informer.HasSynced()
	if synced && w.informer.LastSyncResourceVersion() != w.errRV {
		w.err = nil
		return Problem{}, false
	}
	denied := apierrors.IsForbidden(w.err) || apierrors.IsUnauthorized(w.err)
	if synced && !denied {
		// A dropped watch on a synced informer is routine; it re-lists.
		return Problem{}, false
	}
	return Problem{Kind: w.kind, Err: w.err, Hint: hint(w.kind, w.err)}, true
}

func hint(kind Kind, err error) string {
	group := kind.apiGroup()
	if group == "" {
		group = `""`
	}
	switch {
	case apierrors.IsForbidden(err):
		return fmt.Sprintf("the collector's service account may not list/watch %s: grant the verbs get, list, watch on %s (apiGroups: [%s]) in a ClusterRole bound to it", kind, kind, group)
	case apierrors.IsUnauthorized(err):
		return "the Kubernetes API refused the collector's credentials: check auth_type and kubeconfig"
	default:
		var st apierrors.APIStatus
		if errors.As(err, &st) {
			return fmt.Sprintf("the Kubernetes API answered %d for %s; retrying", st.Status().Code, kind)
		}
		return fmt.Sprintf("the Kubernetes API is unreachable for %s: check auth_type, kubeconfig and network policy; retrying", kind)
	}
}
