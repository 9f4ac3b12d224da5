package kubeapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/uuid"
)

// maxBody bounds a request body, as the API server's 3 MiB.
const maxBody = 3 << 20

// write serves the verbs that change objects, as client-go sends them:
// POST (create; pods/eviction), PUT (update, with resourceVersion
// preconditions: 409 on a stale one), PATCH (JSON, merge and strategic
// merge patches), DELETE, on the main resource and the status
// subresource. dryRun=All validates and answers without storing. Every
// change records its field manager in managedFields and reaches watches.
func (s *Server) write(w http.ResponseWriter, r *http.Request) {
	t, ok := s.route(r)
	if !ok {
		notFound(w)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil || len(body) > maxBody {
		writeStatus(w, http.StatusRequestEntityTooLarge, metav1.StatusReasonRequestEntityTooLarge, "request body unreadable or over 3 MiB", nil)
		return
	}
	q := r.URL.Query()
	req := writeRequest{target: t, body: body, dry: slices.Contains(q["dryRun"], metav1.DryRunAll),
		manager: managerOf(q.Get("fieldManager"), r.UserAgent()), now: time.Now().UTC()}
	if d := q["dryRun"]; len(d) > 0 && !req.dry {
		writeStatus(w, http.StatusBadRequest, metav1.StatusReasonBadRequest, fmt.Sprintf("unsupported dryRun %q (only All)", d), nil)
		return
	}
	var e *entry
	code := http.StatusOK
	switch {
	case r.Method == http.MethodPost && t.name == "":
		e, err = s.create(req)
		code = http.StatusCreated
	case r.Method == http.MethodPost && t.subresource == "eviction":
		err = s.evict(req)
		code = http.StatusCreated
	case r.Method == http.MethodPut && t.name != "" && t.subresource != "eviction":
		e, err = s.replace(req)
	case r.Method == http.MethodPatch && t.name != "" && t.subresource != "eviction":
		e, err = s.patch(req, r.Header.Get("Content-Type"))
	case r.Method == http.MethodDelete && t.name != "" && t.subresource == "":
		e, err = s.remove(req)
	default:
		writeStatus(w, http.StatusMethodNotAllowed, metav1.StatusReasonMethodNotAllowed,
			fmt.Sprintf("%s is not supported on %s", r.Method, r.URL.Path), nil)
		return
	}
	var se *statusError
	switch {
	case errors.As(err, &se):
		writeStatus(w, se.code, se.reason, se.msg, se.details)
		return
	case err != nil:
		writeStatus(w, http.StatusInternalServerError, metav1.StatusReasonInternalError, err.Error(), nil)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if e == nil {
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusSuccess, Code: int32(code)})
		return
	}
	w.WriteHeader(code)
	_, _ = w.Write(e.full)
}

type writeRequest struct {
	target
	body    []byte
	dry     bool
	manager string
	now     time.Time
}

func (s *Server) create(req writeRequest) (*entry, error) {
	if req.subresource != "" {
		return nil, badRequest("create is not supported on %s/%s", req.rt.plural, req.subresource)
	}
	obj, err := decode(req.rt, req.body)
	if err != nil {
		return nil, badRequest("%s: %v", req.rt.kind, err)
	}
	m, err := metaOf(obj)
	if err != nil {
		return nil, err
	}
	switch {
	case m.GetNamespace() == "":
		m.SetNamespace(req.ns)
	case m.GetNamespace() != req.ns:
		return nil, badRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	if m.GetName() == "" && m.GetGenerateName() != "" {
		m.SetName(m.GetGenerateName() + strings.ToLower(string(uuid.NewUUID())[:5]))
	}
	if m.GetName() == "" {
		return nil, invalid(req.rt, "", "metadata.name: Required value: name or generateName is required")
	}
	if m.GetResourceVersion() != "" {
		return nil, badRequest("resourceVersion should not be set on objects to be created")
	}
	m.SetUID(uuid.NewUUID())
	m.SetCreationTimestamp(metav1.NewTime(req.now.Truncate(time.Second)))
	m.SetManagedFields(nil)
	obj, err = s.fields.update(req.rt, "", req.rt.zero(), obj, req.manager)
	if err != nil {
		return nil, err
	}
	return s.store.create(req.rt, obj, req.dry)
}

func invalid(rt *resourceType, name, msg string) *statusError {
	return &statusError{http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, fmt.Sprintf("%s %q is invalid: %s", rt.kind, name, msg),
		&metav1.StatusDetails{Name: name, Group: rt.group, Kind: rt.kind}}
}

// replace is PUT: a stale resourceVersion is a conflict; an empty one
// updates unconditionally (as the API server allows for these kinds).
func (s *Server) replace(req writeRequest) (*entry, error) {
	obj, err := decode(req.rt, req.body)
	if err != nil {
		return nil, badRequest("%s: %v", req.rt.kind, err)
	}
	return s.store.mutate(req.rt, req.ns, req.name, req.dry, func(cur runtime.Object, curRV string) (runtime.Object, error) {
		return s.merge(req, cur, curRV, obj)
	})
}

// patch applies a patch to the current object.
func (s *Server) patch(req writeRequest, contentType string) (*entry, error) {
	mt, _, _ := mime.ParseMediaType(contentType)
	return s.store.mutate(req.rt, req.ns, req.name, req.dry, func(cur runtime.Object, curRV string) (runtime.Object, error) {
		orig, err := json.Marshal(cur)
		if err != nil {
			return nil, err
		}
		var patched []byte
		switch types.PatchType(mt) {
		case types.JSONPatchType:
			p, perr := jsonpatch.DecodePatch(req.body)
			if perr != nil {
				return nil, badRequest("json patch: %v", perr)
			}
			patched, err = p.Apply(orig)
		case types.MergePatchType:
			patched, err = jsonpatch.MergePatch(orig, req.body)
		case types.StrategicMergePatchType:
			if req.rt.unstructured {
				return nil, &statusError{http.StatusUnsupportedMediaType, metav1.StatusReasonUnsupportedMediaType,
					"strategic merge patch is not supported for custom resources; use a merge or JSON patch", nil}
			}
			patched, err = strategicpatch.StrategicMergePatch(orig, req.body, req.rt.zero())
		default:
			return nil, &statusError{http.StatusUnsupportedMediaType, metav1.StatusReasonUnsupportedMediaType,
				fmt.Sprintf("the body of the request was in an unknown format (%q): accepted media types: %s, %s, %s", contentType,
					types.JSONPatchType, types.MergePatchType, types.StrategicMergePatchType), nil}
		}
		if err != nil {
			return nil, invalid(req.rt, req.name, err.Error())
		}
		obj, err := decode(req.rt, patched)
		if err != nil {
			return nil, invalid(req.rt, req.name, err.Error())
		}
		return s.merge(req, cur, curRV, obj)
	})
}

// merge makes the stored object from the current one and the request's:
// the main resource does not change status and the status subresource
// changes only status (as the API server's strategies for these kinds);
// identity and creation time are the server's; the field manager records
// what the request's manager changed.
func (s *Server) merge(req writeRequest, cur runtime.Object, curRV string, obj runtime.Object) (runtime.Object, error) {
	m, err := metaOf(obj)
	if err != nil {
		return nil, err
	}
	if m.GetName() != req.name {
		return nil, badRequest("the name of the object (%s) does not match the name on the URL (%s)", m.GetName(), req.name)
	}
	if rv := m.GetResourceVersion(); rv != "" && rv != curRV {
		return nil, conflictErr(req.rt, req.name)
	}
	out, err := keepParts(req.rt, cur, obj, req.subresource == "status")
	if err != nil {
		return nil, err
	}
	om, _ := metaOf(out)
	cm, _ := metaOf(cur)
	om.SetUID(cm.GetUID())
	om.SetCreationTimestamp(cm.GetCreationTimestamp())
	om.SetNamespace(cm.GetNamespace())
	return s.fields.update(req.rt, req.subresource, cur, out, req.manager)
}

// keepParts returns obj with cur's status (main resource) or cur with
// obj's status (status subresource), for kinds that have a status.
func keepParts(rt *resourceType, cur, obj runtime.Object, status bool) (runtime.Object, error) {
	curMap, err := runtime.DefaultUnstructuredConverter.ToUnstructured(cur)
	if err != nil {
		return nil, err
	}
	objMap, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	zero, _ := runtime.DefaultUnstructuredConverter.ToUnstructured(rt.zero())
	if _, has := zero["status"]; !has && !rt.unstructured {
		return obj, nil
	}
	if status {
		md, _ := curMap["metadata"].(map[string]any)
		if nmd, ok := objMap["metadata"].(map[string]any); ok && md != nil {
			md["managedFields"] = nmd["managedFields"]
			md["resourceVersion"] = nmd["resourceVersion"]
		}
		curMap["status"] = objMap["status"]
		objMap = curMap
	} else if st, ok := curMap["status"]; ok {
		objMap["status"] = st
	} else {
		delete(objMap, "status")
	}
	raw, err := json.Marshal(objMap)
	if err != nil {
		return nil, err
	}
	return decode(rt, raw)
}

// remove is DELETE, with the UID and resourceVersion preconditions of its
// DeleteOptions. Pods go at once: there is no kubelet to wait for.
func (s *Server) remove(req writeRequest) (*entry, error) {
	opts := &metav1.DeleteOptions{}
	if len(req.body) > 0 {
		if _, err := decodeInto(req.body, opts); err != nil {
			return nil, badRequest("DeleteOptions: %v", err)
		}
	}
	return s.store.remove(req.rt, req.ns, req.name, req.dry, func(cur *entry) error {
		return preconditions(req.rt, cur, opts.Preconditions)
	})
}

func preconditions(rt *resourceType, cur *entry, p *metav1.Preconditions) error {
	if p == nil {
		return nil
	}
	if p.UID != nil && *p.UID != cur.meta.GetUID() {
		return &statusError{http.StatusConflict, metav1.StatusReasonConflict,
			fmt.Sprintf("Precondition failed: UID in precondition: %s, UID in object meta: %s", *p.UID, cur.meta.GetUID()),
			&metav1.StatusDetails{Name: cur.name, Group: rt.group, Kind: rt.plural}}
	}
	if p.ResourceVersion != nil && *p.ResourceVersion != cur.meta.GetResourceVersion() {
		return &statusError{http.StatusConflict, metav1.StatusReasonConflict,
			fmt.Sprintf("Precondition failed: ResourceVersion in precondition: %s, ResourceVersion in object meta: %s", *p.ResourceVersion, cur.meta.GetResourceVersion()),
			&metav1.StatusDetails{Name: cur.name, Group: rt.group, Kind: rt.plural}}
	}
	return nil
}
