package kubeapi

import (
	"errors"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/client-go/kubernetes/scheme"
)

// fieldManagers record managedFields as the API server does, with
// apimachinery's own field manager: every write names its manager (the
// request's fieldManager, else the User-Agent's product, as the API server
// derives it) and the fields it set, with the time. The remediator reads
// who approved a plan from them. The simulator has no OpenAPI models, so
// the types are deduced from the objects: maps (labels, annotations) are
// tracked key by key as the real server does, lists as a whole.
type fieldManagers struct {
	mu sync.Mutex
	m  map[string]*managedfields.FieldManager
}

func (f *fieldManagers) get(rt *resourceType, subresource string) (*managedfields.FieldManager, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	key := rt.key() + "/" + subresource
	if fm, ok := f.m[key]; ok {
		return fm, nil
	}
	gvk := schema.GroupVersionKind{Group: rt.group, Version: rt.version, Kind: rt.kind}
	fm, err := managedfields.NewDefaultFieldManager(managedfields.NewDeducedTypeConverter(), sameVersion{}, noDefaults{},
		scheme.Scheme, gvk, gvk.GroupVersion(), subresource, nil)
	if err != nil {
		return nil, err
	}
	if f.m == nil {
		f.m = map[string]*managedfields.FieldManager{}
	}
	f.m[key] = fm
	return fm, nil
}

// update records manager's changes from live to obj in obj's
// managedFields. Custom resources (unstructured) are left as they come.
func (f *fieldManagers) update(rt *resourceType, subresource string, live, obj runtime.Object, manager string) (runtime.Object, error) {
	if rt.unstructured {
		return obj, nil
	}
	fm, err := f.get(rt, subresource)
	if err != nil {
		return nil, err
	}
	gvk := schema.GroupVersionKind{Group: rt.group, Version: rt.version, Kind: rt.kind}
	live.GetObjectKind().SetGroupVersionKind(gvk)
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	if lm, err := metaOf(live); err == nil && lm.GetUID() != "" && len(lm.GetManagedFields()) == 0 {
		// The simulator's own objects come without managedFields; the
		// field manager tracks nothing on an object without them (as the
		// API server for objects from before server-side apply), so they
		// are first attributed to the simulator, as their creator.
		base, err := f.get(rt, "")
		if err != nil {
			return nil, err
		}
		seeded, err := base.Update(rt.zero(), live.DeepCopyObject(), "accelsim")
		if err != nil {
			return nil, err
		}
		sm, _ := metaOf(seeded)
		lm.SetManagedFields(sm.GetManagedFields())
		if om, err := metaOf(obj); err == nil && len(om.GetManagedFields()) == 0 {
			om.SetManagedFields(sm.GetManagedFields())
		}
	}
	return fm.Update(live, obj, manager)
}

// managerOf is the request's field manager: fieldManager, else the
// User-Agent up to its first "/" (kubectl/v1.35.0 → kubectl), as the API
// server names managers that do not say.
func managerOf(fieldManager, userAgent string) string {
	if fieldManager != "" {
		return fieldManager
	}
	name, _, _ := strings.Cut(userAgent, "/")
	if name == "" {
		return "unknown"
	}
	return name
}

// sameVersion is the conversion of a server with one version per kind:
// none.
type sameVersion struct{}

func (sameVersion) Convert(_, _, _ any) error {
	return errors.New("kubeapi: one version per kind, nothing to convert")
}
func (sameVersion) ConvertToVersion(in runtime.Object, _ runtime.GroupVersioner) (runtime.Object, error) {
	return in, nil
}
func (sameVersion) ConvertFieldLabel(_ schema.GroupVersionKind, label, value string) (string, string, error) {
	return label, value, nil
}

// noDefaults: the simulator applies no defaulting.
type noDefaults struct{}

func (noDefaults) Default(runtime.Object) {}
