// Package kubeapi is a minimal Kubernetes API server that real client-go
// can list, watch and write (write.go: the verbs the remediator uses,
// eviction.go, managedfields.go): pods, nodes, namespaces, the controllers
// that own pods, Events, Leases, PodDisruptionBudgets, and DRA
// ResourceClaims, ResourceSlices and DeviceClasses,
// with field and label selectors, resourceVersion semantics, streaming JSON
// watches (including the WatchList initial-events stream client-go uses by
// default) and metadata-only (PartialObjectMetadata) responses.
package kubeapi

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// resourceType describes one served resource.
type resourceType struct {
	group, version, plural, singular, kind string
	namespaced                             bool
	// unstructured kinds are custom resources kept as
	// *unstructured.Unstructured, told apart by apiVersion and kind.
	unstructured bool
	// fieldsOf returns the fields a field selector may use.
	fieldsOf func(obj runtime.Object) fields.Set
	// zero makes an empty object, to learn the supported field labels.
	zero func() runtime.Object
}

// supportsField reports whether a field selector may use the field label.
func (rt *resourceType) supportsField(label string) bool {
	_, ok := rt.fieldsOf(rt.zero())[label]
	return ok
}

func (rt *resourceType) groupVersion() string {
	if rt.group == "" {
		return rt.version
	}
	return rt.group + "/" + rt.version
}

func (rt *resourceType) key() string { return rt.group + "/" + rt.plural }

// entry is one stored object with its encodings.
type entry struct {
	obj       runtime.Object
	meta      metav1.Object
	rv        uint64
	full      []byte // JSON of the object
	partial   []byte // JSON of its PartialObjectMetadata
	namespace string
	name      string
	fields    fields.Set
}

// event is one change, kept so watches can resume from a resourceVersion.
type event struct {
	typ   string // ADDED, MODIFIED, DELETED
	rv    uint64
	entry *entry
}

// Store holds the objects; it is safe for concurrent use.
type Store struct {
	mu      sync.RWMutex
	rv      uint64
	types   map[string]*resourceType
	objects map[string]map[string]*entry // type key → ns/name → entry
	history map[string][]event
	subs    map[string]map[chan event]struct{}
	// firstRV is the oldest resourceVersion a watch may resume from.
	firstRV uint64
	// observers follow changes made through the API (storewrite.go).
	observers []func(typ string, obj runtime.Object)
}

const historyLimit = 10000

// NewStore holds objs, giving each a resourceVersion in order.
func NewStore(objs []runtime.Object) (*Store, error) {
	s := &Store{rv: 1000, types: map[string]*resourceType{}, objects: map[string]map[string]*entry{},
		history: map[string][]event{}, subs: map[string]map[chan event]struct{}{}}
	for _, rt := range resourceTypes {
		s.types[rt.key()] = rt
		s.objects[rt.key()] = map[string]*entry{}
	}
	for _, o := range objs {
		if _, err := s.put(o, false); err != nil {
			return nil, err
		}
	}
	s.firstRV = s.rv
	return s, nil
}

// typeOf finds the resource type of an object by its kind.
// Objects read back from client-go caches have no TypeMeta, so the Go type
// decides; TypeMeta is set again before encoding.
func (s *Store) typeOf(obj runtime.Object) (*resourceType, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		// Custom resources (LeaderWorkerSets, Karpenter NodeClaims) are
		// unstructured: their apiVersion and kind decide.
		gvk := u.GroupVersionKind()
		for _, rt := range resourceTypes {
			if rt.unstructured && rt.group == gvk.Group && rt.version == gvk.Version && rt.kind == gvk.Kind {
				return rt, nil
			}
		}
		return nil, fmt.Errorf("kubeapi: %s is not a served kind", gvk)
	}
	t := reflect.TypeOf(obj)
	for _, rt := range resourceTypes {
		if !rt.unstructured && reflect.TypeOf(rt.zero()) == t {
			obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{Group: rt.group, Version: rt.version, Kind: rt.kind})
			return rt, nil
		}
	}
	return nil, fmt.Errorf("kubeapi: %T is not a served kind", obj)
}

func (s *Store) put(obj runtime.Object, notify bool) (*entry, error) {
	rt, err := s.typeOf(obj)
	if err != nil {
		return nil, err
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	s.rv++
	m.SetResourceVersion(strconv.FormatUint(s.rv, 10))
	full, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("kubeapi: encode %s %s: %w", rt.kind, m.GetName(), err)
	}
	pm := metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{Kind: "PartialObjectMetadata", APIVersion: "meta.k8s.io/v1"}}
	if a, ok := obj.(metav1.ObjectMetaAccessor); ok {
		if om, ok := a.GetObjectMeta().(*metav1.ObjectMeta); ok {
			om.DeepCopyInto(&pm.ObjectMeta)
		}
	} else if u, ok := obj.(*unstructured.Unstructured); ok {
		pm.Name, pm.Namespace, pm.UID, pm.ResourceVersion = u.GetName(), u.GetNamespace(), u.GetUID(), u.GetResourceVersion()
		pm.Labels, pm.Annotations, pm.CreationTimestamp = u.GetLabels(), u.GetAnnotations(), u.GetCreationTimestamp()
	}
	partial, err := json.Marshal(&pm)
	if err != nil {
		return nil, err
	}
	e := &entry{obj: obj, meta: m, rv: s.rv, full: full, partial: partial, namespace: m.GetNamespace(), name: m.GetName(), fields: rt.fieldsOf(obj)}
	k := e.namespace + "/" + e.name
	typ := "ADDED"
	if _, exists := s.objects[rt.key()][k]; exists {
		typ = "MODIFIED"
	}
	s.objects[rt.key()][k] = e
	s.record(rt, event{typ: typ, rv: s.rv, entry: e}, notify)
	return e, nil
}

func (s *Store) record(rt *resourceType, ev event, notify bool) {
	h := append(s.history[rt.key()], ev)
	if len(h) > historyLimit {
		h = h[len(h)-historyLimit:]
		s.firstRV = h[0].rv - 1
	}
	s.history[rt.key()] = h
	if !notify {
		return
	}
	for ch := range s.subs[rt.key()] {
		select {
		case ch <- ev:
		default:
			// A watcher that cannot keep up is closed, as the API server
			// does; the client re-lists.
			delete(s.subs[rt.key()], ch)
			close(ch)
		}
	}
}

// Apply adds or replaces an object and notifies watchers.
func (s *Store) Apply(obj runtime.Object) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err := s.put(obj, true)
	return err
}

// Delete removes an object and notifies watchers.
func (s *Store) Delete(obj runtime.Object) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	rt, err := s.typeOf(obj)
	if err != nil {
		return err
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	k := m.GetNamespace() + "/" + m.GetName()
	old, ok := s.objects[rt.key()][k]
	if !ok {
		return fmt.Errorf("kubeapi: %s %s not found", rt.kind, k)
	}
	delete(s.objects[rt.key()], k)
	s.rv++
	gone := *old
	gone.rv = s.rv
	s.record(rt, event{typ: "DELETED", rv: s.rv, entry: &gone}, true)
	return nil
}

// ResourceVersion is the store's current resourceVersion.
func (s *Store) ResourceVersion() uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.rv
}

// list returns the matching entries sorted by namespace and name, and the
// resourceVersion they are current at.
func (s *Store) list(rt *resourceType, match func(*entry) bool) ([]*entry, uint64) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []*entry
	for _, e := range s.objects[rt.key()] {
		if match(e) {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].namespace != out[j].namespace {
			return out[i].namespace < out[j].namespace
		}
		return out[i].name < out[j].name
	})
	return out, s.rv
}

func (s *Store) get(rt *resourceType, ns, name string) (*entry, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	e, ok := s.objects[rt.key()][ns+"/"+name]
	return e, ok
}

// subscribe returns the events after rv (nil when rv is too old) and a
// channel of later ones. If initial is set, it returns the current objects
// as ADDED events instead of history.
func (s *Store) subscribe(rt *resourceType, rv uint64, initial bool) (past []event, ch chan event, current uint64, tooOld bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if initial {
		for _, e := range s.objects[rt.key()] {
			past = append(past, event{typ: "ADDED", rv: e.rv, entry: e})
		}
		sort.Slice(past, func(i, j int) bool { return past[i].rv < past[j].rv })
	} else {
		if rv < s.firstRV {
			return nil, nil, s.rv, true
		}
		for _, ev := range s.history[rt.key()] {
			if ev.rv > rv {
				past = append(past, ev)
			}
		}
	}
	ch = make(chan event, 256)
	if s.subs[rt.key()] == nil {
		s.subs[rt.key()] = map[chan event]struct{}{}
	}
	s.subs[rt.key()][ch] = struct{}{}
	return past, ch, s.rv, false
}

func (s *Store) unsubscribe(rt *resourceType, ch chan event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.subs[rt.key()][ch]; ok {
		delete(s.subs[rt.key()], ch)
		close(ch)
	}
}
