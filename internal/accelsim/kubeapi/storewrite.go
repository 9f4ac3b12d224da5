package kubeapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
)

// statusError is an API error as the API server reports it (a Status).
type statusError struct {
	code    int
	reason  metav1.StatusReason
	msg     string
	details *metav1.StatusDetails
}

func (e *statusError) Error() string { return e.msg }

func notFoundErr(rt *resourceType, name string) *statusError {
	return &statusError{http.StatusNotFound, metav1.StatusReasonNotFound, fmt.Sprintf("%s %q not found", rt.plural, name),
		&metav1.StatusDetails{Name: name, Group: rt.group, Kind: rt.plural}}
}

func conflictErr(rt *resourceType, name string) *statusError {
	return &statusError{http.StatusConflict, metav1.StatusReasonConflict,
		fmt.Sprintf("Operation cannot be fulfilled on %s %q: the object has been modified; please apply your changes to the latest version and try again", rt.plural, name),
		&metav1.StatusDetails{Name: name, Group: rt.group, Kind: rt.plural}}
}

func badRequest(format string, args ...any) *statusError {
	return &statusError{http.StatusBadRequest, metav1.StatusReasonBadRequest, fmt.Sprintf(format, args...), nil}
}

// decode reads an object of rt's kind from JSON.
func decode(rt *resourceType, data []byte) (runtime.Object, error) {
	if rt.unstructured {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(data); err != nil {
			return nil, err
		}
		return u, nil
	}
	return decodeInto(data, rt.zero())
}

// decodeInto reads a request body the way client-go may send it: JSON,
// YAML or, for built-in kinds, protobuf (client-go's default for them).
func decodeInto(data []byte, into runtime.Object) (runtime.Object, error) {
	obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(data, nil, into)
	if err != nil {
		return nil, err
	}
	return obj, nil
}

// Observe calls fn after every change made through the API (ADDED,
// MODIFIED, DELETED and the object), outside the store's lock: the
// simulator's device state follows the cluster (an evicted pod no longer
// holds its devices).
func (s *Store) Observe(fn func(typ string, obj runtime.Object)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.observers = append(s.observers, fn)
}

func (s *Store) notify(evs []event) {
	s.mu.RLock()
	obs := s.observers
	s.mu.RUnlock()
	for _, ev := range evs {
		for _, fn := range obs {
			fn(ev.typ, ev.entry.obj)
		}
	}
}

// dryEntry is what storing obj would give, without storing it.
func dryEntry(obj runtime.Object) (*entry, error) {
	full, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	return &entry{obj: obj, full: full}, nil
}

// create stores a new object; the namespace must exist.
func (s *Store) create(rt *resourceType, obj runtime.Object, dry bool) (*entry, error) {
	m, err := metaOf(obj)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if rt.namespaced {
		if _, ok := s.objects["/namespaces"]["/"+m.GetNamespace()]; !ok {
			s.mu.Unlock()
			return nil, &statusError{http.StatusNotFound, metav1.StatusReasonNotFound, fmt.Sprintf("namespaces %q not found", m.GetNamespace()),
				&metav1.StatusDetails{Name: m.GetNamespace(), Kind: "namespaces"}}
		}
	}
	if _, ok := s.objects[rt.key()][m.GetNamespace()+"/"+m.GetName()]; ok {
		s.mu.Unlock()
		return nil, &statusError{http.StatusConflict, metav1.StatusReasonAlreadyExists, fmt.Sprintf("%s %q already exists", rt.plural, m.GetName()),
			&metav1.StatusDetails{Name: m.GetName(), Group: rt.group, Kind: rt.plural}}
	}
	if dry {
		s.mu.Unlock()
		return dryEntry(obj)
	}
	e, err := s.put(obj, true)
	s.mu.Unlock()
	if err == nil {
		s.notify([]event{{typ: "ADDED", entry: e}})
	}
	return e, err
}

// mutate replaces an object with what fn makes of a fresh copy of it,
// atomically: fn sees the current object and no write comes between.
func (s *Store) mutate(rt *resourceType, ns, name string, dry bool, fn func(cur runtime.Object, curRV string) (runtime.Object, error)) (*entry, error) {
	s.mu.Lock()
	e, ok := s.objects[rt.key()][ns+"/"+name]
	if !ok {
		s.mu.Unlock()
		return nil, notFoundErr(rt, name)
	}
	cur, err := decode(rt, e.full)
	if err != nil {
		s.mu.Unlock()
		return nil, err
	}
	obj, err := fn(cur, strconv.FormatUint(e.rv, 10))
	if err != nil {
		s.mu.Unlock()
		return nil, err
	}
	if dry {
		s.mu.Unlock()
		return dryEntry(obj)
	}
	ne, err := s.put(obj, true)
	s.mu.Unlock()
	if err == nil {
		s.notify([]event{{typ: "MODIFIED", entry: ne}})
	}
	return ne, err
}

// remove deletes an object; check (when set) may refuse on the current
// object (a precondition).
func (s *Store) remove(rt *resourceType, ns, name string, dry bool, check func(cur *entry) error) (*entry, error) {
	s.mu.Lock()
	e, ok := s.objects[rt.key()][ns+"/"+name]
	if !ok {
		s.mu.Unlock()
		return nil, notFoundErr(rt, name)
	}
	if check != nil {
		if err := check(e); err != nil {
			s.mu.Unlock()
			return nil, err
		}
	}
	if dry {
		s.mu.Unlock()
		return e, nil
	}
	gone := s.deleteLocked(rt, e)
	s.mu.Unlock()
	s.notify([]event{{typ: "DELETED", entry: gone}})
	return gone, nil
}

func (s *Store) deleteLocked(rt *resourceType, e *entry) *entry {
	delete(s.objects[rt.key()], e.namespace+"/"+e.name)
	s.rv++
	gone := *e
	gone.rv = s.rv
	s.record(rt, event{typ: "DELETED", rv: s.rv, entry: &gone}, true)
	return &gone
}

func metaOf(obj runtime.Object) (metav1.Object, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u, nil
	}
	a, ok := obj.(metav1.ObjectMetaAccessor)
	if !ok {
		return nil, fmt.Errorf("kubeapi: %T has no metadata", obj)
	}
	return a.GetObjectMeta(), nil
}
