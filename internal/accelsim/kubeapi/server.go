package kubeapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/version"
)

// Defaults of watches, as the API server's.
const (
	defaultWatchTimeout = 30 * time.Minute
	bookmarkInterval    = 30 * time.Second
	initialEventsEnd    = "k8s.io/initial-events-end"
)

// Server is the simulated API server.
type Server struct {
	store  *Store
	fields fieldManagers
	stop   chan struct{}
	// Bookmark is how often watches that allow bookmarks get one.
	Bookmark time.Duration

	watches watchCounter
}

// NewServer serves the store.
func NewServer(s *Store) *Server {
	return &Server{store: s, stop: make(chan struct{}), Bookmark: bookmarkInterval}
}

// WatchCount is what the server has seen of the watches of one resource.
type WatchCount struct {
	// Started counts the watch requests it accepted.
	Started int
	// Open counts the watches streaming now.
	Open int
}

// Watches returns the watch counts by resource plural ("pods",
// "resourceclaims"), so tests can tell how many watches a collector opens.
func (s *Server) Watches() map[string]WatchCount { return s.watches.snapshot() }

type watchCounter struct {
	mu     sync.Mutex
	counts map[string]WatchCount
}

// open counts a watch of plural and returns the function that ends it.
func (c *watchCounter) open(plural string) (closed func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counts == nil {
		c.counts = map[string]WatchCount{}
	}
	n := c.counts[plural]
	n.Started++
	n.Open++
	c.counts[plural] = n
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		n := c.counts[plural]
		n.Open--
		c.counts[plural] = n
	}
}

func (c *watchCounter) snapshot() map[string]WatchCount {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.counts)
}

// Store is the served store (tests change objects through it).
func (s *Server) Store() *Store { return s.store }

// Close ends open watches, so an http.Server can shut down.
func (s *Server) Close() {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		s.write(w, r) // write.go
		return
	}
	p := strings.TrimSuffix(r.URL.Path, "/")
	switch p {
	case "/healthz", "/livez", "/readyz":
		_, _ = w.Write([]byte("ok"))
		return
	case "/version":
		writeJSON(w, version.Info{Major: "1", Minor: "35", GitVersion: "v1.35.0-accelsim", GitTreeState: "clean",
			BuildDate: "2026-01-05T08:00:00Z", GoVersion: "go1.26", Compiler: "gc", Platform: "linux/amd64"})
		return
	case "/api":
		writeJSON(w, metav1.APIVersions{TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: []string{"v1"},
			ServerAddressByClientCIDRs: []metav1.ServerAddressByClientCIDR{{ClientCIDR: "0.0.0.0/0", ServerAddress: r.Host}}})
		return
	case "/apis":
		writeJSON(w, s.groupList())
		return
	}
	segs := strings.Split(strings.TrimPrefix(p, "/"), "/")
	var group, ver string
	var rest []string
	switch {
	case len(segs) >= 2 && segs[0] == "api":
		group, ver, rest = "", segs[1], segs[2:]
	case len(segs) == 2 && segs[0] == "apis":
		if g, ok := s.group(segs[1]); ok {
			writeJSON(w, g)
			return
		}
		notFound(w)
		return
	case len(segs) >= 3 && segs[0] == "apis":
		group, ver, rest = segs[1], segs[2], segs[3:]
	default:
		notFound(w)
		return
	}
	if len(rest) == 0 {
		if list, ok := s.resourceList(group, ver); ok {
			writeJSON(w, list)
			return
		}
		notFound(w)
		return
	}
	var ns, plural, name string
	switch {
	case len(rest) >= 3 && rest[0] == "namespaces":
		ns, plural = rest[1], rest[2]
		if len(rest) == 4 {
			name = rest[3]
		} else if len(rest) > 4 {
			notFound(w)
			return
		}
	case len(rest) <= 2:
		plural = rest[0]
		if len(rest) == 2 {
			name = rest[1]
		}
	default:
		notFound(w)
		return
	}
	rt := s.lookup(group, ver, plural)
	if rt == nil || (ns != "" && !rt.namespaced) {
		notFound(w)
		return
	}
	if name != "" {
		s.get(w, r, rt, ns, name)
		return
	}
	s.listOrWatch(w, r, rt, ns)
}

func (s *Server) lookup(group, ver, plural string) *resourceType {
	for _, rt := range resourceTypes {
		if rt.group == group && rt.version == ver && rt.plural == plural {
			return rt
		}
	}
	return nil
}

// partial reports whether the client asked for metadata only.
func partial(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "as=PartialObjectMetadata")
}

func (s *Server) get(w http.ResponseWriter, r *http.Request, rt *resourceType, ns, name string) {
	e, ok := s.store.get(rt, ns, name)
	if !ok {
		writeStatus(w, http.StatusNotFound, metav1.StatusReasonNotFound, fmt.Sprintf("%s %q not found", rt.plural, name),
			&metav1.StatusDetails{Name: name, Kind: rt.plural, Group: rt.group})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if partial(r) {
		_, _ = w.Write(e.partial)
		return
	}
	_, _ = w.Write(e.full)
}

// selector is a parsed request's filter.
type selector struct {
	ns     string
	labels labels.Selector
	fields fields.Selector
}

func (sel *selector) match(e *entry) bool {
	if sel.ns != "" && e.namespace != sel.ns {
		return false
	}
	return sel.labels.Matches(labels.Set(e.meta.GetLabels())) && sel.fields.Matches(e.fields)
}

func parseSelector(r *http.Request, rt *resourceType, ns string) (*selector, error) {
	q := r.URL.Query()
	ls, err := labels.Parse(q.Get("labelSelector"))
	if err != nil {
		return nil, fmt.Errorf("unable to parse labelSelector: %v", err)
	}
	fs, err := fields.ParseSelector(q.Get("fieldSelector"))
	if err != nil {
		return nil, fmt.Errorf("unable to parse fieldSelector: %v", err)
	}
	for _, req := range fs.Requirements() {
		if !rt.supportsField(req.Field) {
			return nil, fmt.Errorf("field label not supported: %s", req.Field)
		}
	}
	return &selector{ns: ns, labels: ls, fields: fs}, nil
}

func (s *Server) listOrWatch(w http.ResponseWriter, r *http.Request, rt *resourceType, ns string) {
	sel, err := parseSelector(r, rt, ns)
	if err != nil {
		writeStatus(w, http.StatusBadRequest, metav1.StatusReasonBadRequest, err.Error(), nil)
		return
	}
	q := r.URL.Query()
	if q.Get("watch") == "true" || q.Get("watch") == "1" {
		s.watch(w, r, rt, sel)
		return
	}
	items, rv := s.store.list(rt, sel.match)
	meta := partial(r)
	var b bytes.Buffer
	if meta {
		b.WriteString(`{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"`)
	} else {
		fmt.Fprintf(&b, `{"kind":"%sList","apiVersion":"%s","metadata":{"resourceVersion":"`, rt.kind, rt.groupVersion())
	}
	b.WriteString(strconv.FormatUint(rv, 10))
	b.WriteString(`"},"items":[`)
	for i, e := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		if meta {
			b.Write(e.partial)
		} else {
			b.Write(e.full)
		}
	}
	b.WriteString("]}")
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b.Bytes())
}

// watch streams events as the API server does: synthetic ADDED events for
// the current state (rv "" or "0", or sendInitialEvents=true, then a bookmark
// marking their end), or the changes after a given resourceVersion.
func (s *Server) watch(w http.ResponseWriter, r *http.Request, rt *resourceType, sel *selector) {
	q := r.URL.Query()
	rvParam := q.Get("resourceVersion")
	sendInitial := q.Get("sendInitialEvents") == "true"
	initial := sendInitial || rvParam == "" || rvParam == "0"
	var rv uint64
	if !initial {
		var err error
		rv, err = strconv.ParseUint(rvParam, 10, 64)
		if err != nil {
			writeStatus(w, http.StatusBadRequest, metav1.StatusReasonBadRequest, fmt.Sprintf("invalid resourceVersion %q", rvParam), nil)
			return
		}
	}
	timeout := defaultWatchTimeout
	if ts := q.Get("timeoutSeconds"); ts != "" {
		if n, err := strconv.Atoi(ts); err == nil && n > 0 {
			timeout = time.Duration(n) * time.Second
		}
	}
	bookmarks := q.Get("allowWatchBookmarks") == "true"
	meta := partial(r)
	defer s.watches.open(rt.plural)()
	flusher, _ := w.(http.Flusher)
	past, ch, current, tooOld := s.store.subscribe(rt, rv, initial)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Transfer-Encoding", "chunked")
	w.WriteHeader(http.StatusOK)
	if tooOld {
		st := metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure,
			Message: fmt.Sprintf("too old resource version: %d (%d)", rv, current), Reason: metav1.StatusReasonExpired, Code: http.StatusGone}
		raw, _ := json.Marshal(st)
		writeEvent(w, "ERROR", raw)
		return
	}
	defer s.store.unsubscribe(rt, ch)
	lastRV := current
	for _, ev := range past {
		if sel.match(ev.entry) {
			writeEvent(w, ev.typ, pick(ev.entry, meta))
		}
		lastRV = max(lastRV, ev.rv)
	}
	if sendInitial {
		writeEvent(w, "BOOKMARK", bookmark(rt, meta, lastRV, true))
	}
	if flusher != nil {
		flusher.Flush()
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	interval := s.Bookmark
	if interval <= 0 {
		interval = bookmarkInterval
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				return // too slow: the client re-lists
			}
			lastRV = ev.rv
			if sel.match(ev.entry) {
				writeEvent(w, ev.typ, pick(ev.entry, meta))
			}
		case <-tick.C:
			if !bookmarks {
				continue
			}
			writeEvent(w, "BOOKMARK", bookmark(rt, meta, max(lastRV, s.store.ResourceVersion()), false))
		case <-deadline.C:
			return
		case <-r.Context().Done():
			return
		case <-s.stop:
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
	}
}

func pick(e *entry, meta bool) []byte {
	if meta {
		return e.partial
	}
	return e.full
}

// bookmark is an object of the watched kind carrying only a resourceVersion.
func bookmark(rt *resourceType, meta bool, rv uint64, end bool) []byte {
	kind, apiVersion := rt.kind, rt.groupVersion()
	if meta {
		kind, apiVersion = "PartialObjectMetadata", "meta.k8s.io/v1"
	}
	m := map[string]any{"resourceVersion": strconv.FormatUint(rv, 10)}
	if end {
		m["annotations"] = map[string]string{initialEventsEnd: "true"}
	}
	raw, _ := json.Marshal(map[string]any{"kind": kind, "apiVersion": apiVersion, "metadata": m})
	return raw
}

func writeEvent(w http.ResponseWriter, typ string, obj []byte) {
	var b bytes.Buffer
	b.Grow(len(obj) + 32)
	b.WriteString(`{"type":"`)
	b.WriteString(typ)
	b.WriteString(`","object":`)
	b.Write(obj)
	b.WriteString("}\n")
	_, _ = w.Write(b.Bytes())
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func writeStatus(w http.ResponseWriter, code int, reason metav1.StatusReason, msg string, details *metav1.StatusDetails) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure,
		Message: msg, Reason: reason, Details: details, Code: int32(code),
	})
}

func notFound(w http.ResponseWriter) {
	writeStatus(w, http.StatusNotFound, metav1.StatusReasonNotFound, "the server could not find the requested resource", &metav1.StatusDetails{})
}

// groups lists the served API groups in discovery order.
func groups() []string {
	var out []string
	seen := map[string]bool{}
	for _, rt := range resourceTypes {
		if rt.group != "" && !seen[rt.group] {
			seen[rt.group] = true
			out = append(out, rt.group)
		}
	}
	return out
}

// groupVersion is the one version served of a group (autoscaling/v2, the
// others v1).
func groupVersion(group string) string {
	for _, rt := range resourceTypes {
		if rt.group == group {
			return rt.version
		}
	}
	return "v1"
}

func (s *Server) group(name string) (metav1.APIGroup, bool) {
	for _, g := range groups() {
		if g == name {
			gv := metav1.GroupVersionForDiscovery{GroupVersion: g + "/" + groupVersion(g), Version: groupVersion(g)}
			return metav1.APIGroup{TypeMeta: metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}, Name: g,
				Versions: []metav1.GroupVersionForDiscovery{gv}, PreferredVersion: gv}, true
		}
	}
	return metav1.APIGroup{}, false
}

func (s *Server) groupList() metav1.APIGroupList {
	l := metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}}
	for _, g := range groups() {
		grp, _ := s.group(g)
		grp.TypeMeta = metav1.TypeMeta{}
		l.Groups = append(l.Groups, grp)
	}
	return l
}

func (s *Server) resourceList(group, ver string) (metav1.APIResourceList, bool) {
	gv := ver
	if group != "" {
		gv = group + "/" + ver
	}
	l := metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: gv}
	for _, rt := range resourceTypes {
		if rt.group == group && rt.version == ver {
			l.APIResources = append(l.APIResources, metav1.APIResource{
				Name: rt.plural, SingularName: rt.singular, Namespaced: rt.namespaced, Kind: rt.kind,
				Verbs: verbs,
			})
			for _, sub := range subresources(rt) {
				r := metav1.APIResource{Name: rt.plural + "/" + sub, Namespaced: rt.namespaced, Kind: rt.kind, Verbs: subresourceVerbs(sub)}
				if sub == "eviction" {
					r.Group, r.Version, r.Kind = "policy", "v1", "Eviction"
				}
				l.APIResources = append(l.APIResources, r)
			}
		}
	}
	return l, len(l.APIResources) > 0
}
