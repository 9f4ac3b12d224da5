package kubeapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/fleet"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/simtest"
)

// startAPI serves the demo fleet and returns a client-go config from the
// kubeconfig the simulator writes.
func startAPI(t *testing.T) (*Server, *fleet.Fleet, string) {
	srv, f, kc, _ := startRecordedAPI(t)
	return srv, f, kc
}

// requestLog records the query strings the server received.
type requestLog struct {
	mu      sync.Mutex
	queries []string
}

func (l *requestLog) has(substr string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, q := range l.queries {
		if strings.Contains(q, substr) {
			return true
		}
	}
	return false
}

func startRecordedAPI(t *testing.T) (*Server, *fleet.Fleet, string, *requestLog) {
	t.Helper()
	f := simtest.DemoFleet(t, 0)
	store, err := NewStore(Objects(f))
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(store)
	srv.Bookmark = 200 * time.Millisecond
	log := &requestLog{}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.mu.Lock()
		log.queries = append(log.queries, r.URL.Path+"?"+r.URL.RawQuery)
		log.mu.Unlock()
		srv.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { srv.Close(); hs.Close() })
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := WriteKubeconfig(kc, hs.URL, f.Cluster); err != nil {
		t.Fatal(err)
	}
	return srv, f, kc, log
}

func clientset(t *testing.T, kubeconfig string) *kubernetes.Clientset {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// Real client-go informers, as the attributes processor uses them (pods of
// one node by field selector, nodes, DRA objects), sync against the server
// and then follow changes through the watch.
func TestClientGoInformersListAndWatch(t *testing.T) {
	srv, f, kc, log := startRecordedAPI(t)
	cs := clientset(t, kc)
	const nodeName = "gpu-h200-a"
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = "spec.nodeName=" + nodeName
	}))
	podInf := factory.Core().V1().Pods()
	all := informers.NewSharedInformerFactory(cs, 0)
	nodeInf := all.Core().V1().Nodes()
	claimInf := all.Resource().V1().ResourceClaims()
	sliceInf := all.Resource().V1().ResourceSlices()
	podInf.Informer()
	nodeInf.Informer()
	claimInf.Informer()
	sliceInf.Informer()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	factory.Start(ctx.Done())
	all.Start(ctx.Done())
	start := time.Now()
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			t.Fatalf("%v did not sync", typ)
		}
	}
	for typ, ok := range all.WaitForCacheSync(ctx.Done()) {
		if !ok {
			t.Fatalf("%v did not sync", typ)
		}
	}
	defer func() { cancel(); factory.Shutdown(); all.Shutdown() }()
	t.Logf("informers synced in %v", time.Since(start))
	// client-go v0.37 streams the initial state (WatchList) by default.
	if !log.has("sendInitialEvents=true") {
		t.Errorf("client-go did not use the initial-events watch; requests: %v", log.queries)
	}

	pods, err := podInf.Lister().List(labels.Everything())
	if err != nil {
		t.Fatal(err)
	}
	n, _ := f.Node(nodeName)
	if len(pods) != len(n.Pods) {
		t.Fatalf("pods on %s: got %d, want %d", nodeName, len(pods), len(n.Pods))
	}
	for _, p := range pods {
		if p.Spec.NodeName != nodeName {
			t.Errorf("pod %s/%s is on %s: the field selector was not applied", p.Namespace, p.Name, p.Spec.NodeName)
		}
	}
	llm, err := podInf.Lister().Pods("chat").Get("llm-serving-0")
	if err != nil {
		t.Fatal(err)
	}
	if llm.Labels[fleet.LabelTeam] != "chat" || llm.Labels["leaderworkerset.sigs.k8s.io/name"] != "llm-serving" {
		t.Errorf("llm-serving-0 labels: %v", llm.Labels)
	}
	if len(llm.OwnerReferences) != 1 || llm.OwnerReferences[0].Kind != "StatefulSet" {
		t.Errorf("llm-serving-0 owners: %+v", llm.OwnerReferences)
	}
	if len(llm.Spec.ResourceClaims) != 1 || *llm.Spec.ResourceClaims[0].ResourceClaimName != "llm-serving-gpus" {
		t.Errorf("llm-serving-0 resource claims: %+v", llm.Spec.ResourceClaims)
	}

	node, err := nodeInf.Lister().Get(nodeName)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		"node.kubernetes.io/instance-type": "p5en.48xlarge",
		"topology.kubernetes.io/zone":      "us-east-1a",
		"topology.kubernetes.io/region":    "us-east-1",
		"nvidia.com/gpu.product":           "NVIDIA-H200",
		"nvidia.com/gpu.count":             "8",
		"nvidia.com/mig.strategy":          "mixed",
	} {
		if node.Labels[k] != want {
			t.Errorf("node label %s = %q, want %q", k, node.Labels[k], want)
		}
	}

	claim, err := claimInf.Lister().ResourceClaims("chat").Get("shared-h200")
	if err != nil {
		t.Fatal(err)
	}
	if claim.Status.Allocation == nil || len(claim.Status.Allocation.Devices.Results) != 1 ||
		claim.Status.Allocation.Devices.Results[0].Device != "gpu-4" || claim.Status.Allocation.Devices.Results[0].Pool != nodeName {
		t.Errorf("shared-h200 allocation: %+v", claim.Status.Allocation)
	}
	if len(claim.Status.ReservedFor) != 2 {
		t.Errorf("shared-h200 is reserved for %d pods, want 2", len(claim.Status.ReservedFor))
	}
	slices, _ := sliceInf.Lister().List(labels.Everything())
	if len(slices) != 1 || len(slices[0].Spec.Devices) != 9 { // 7 whole GPUs + 2 MIG devices
		t.Fatalf("resource slices: %d, devices %d", len(slices), len(slices[0].Spec.Devices))
	}

	// A change reaches the informer through the watch.
	changed := llm.DeepCopy()
	changed.Labels["rollout"] = "canary"
	if err := srv.Store().Apply(changed); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		p, err := podInf.Lister().Pods("chat").Get("llm-serving-0")
		return err == nil && p.Labels["rollout"] == "canary"
	}, "the watch to deliver the modified pod")
	if err := srv.Store().Delete(changed); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		_, err := podInf.Lister().Pods("chat").Get("llm-serving-0")
		return err != nil
	}, "the watch to deliver the deleted pod")
}

// Metadata-only informers (how the owner chain is usually walked) get
// PartialObjectMetadata lists and watches.
func TestMetadataInformer(t *testing.T) {
	_, _, kc := startAPI(t)
	cfg, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		t.Fatal(err)
	}
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	factory := metadatainformer.NewSharedInformerFactory(mc, 0)
	rs := factory.ForResource(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"})
	rs.Informer()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	factory.Start(ctx.Done())
	defer func() { cancel(); factory.Shutdown() }()
	if !cache.WaitForCacheSync(ctx.Done(), rs.Informer().HasSynced) {
		t.Fatal("replicaset metadata informer did not sync")
	}
	objs, err := rs.Lister().ByNamespace("search").List(labels.Everything())
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, o := range objs {
		m := o.(*metav1.PartialObjectMetadata)
		if strings.HasPrefix(m.Name, "vllm-llama-") {
			found = true
			if len(m.OwnerReferences) != 1 || m.OwnerReferences[0].Kind != "Deployment" || m.OwnerReferences[0].Name != "vllm-llama" {
				t.Errorf("replicaset %s owners: %+v", m.Name, m.OwnerReferences)
			}
		}
	}
	if !found {
		t.Errorf("no vllm-llama ReplicaSet in %d objects", len(objs))
	}
}

func TestBadRequestsGetAPIStatus(t *testing.T) {
	srv, _, _ := startAPI(t)
	hs := httptest.NewServer(srv)
	defer hs.Close()
	cases := []struct {
		path string
		code int
		msg  string
	}{
		{"/api/v1/pods?fieldSelector=spec.gpu%3Dx", 400, "field label not supported: spec.gpu"},
		{"/api/v1/pods?labelSelector=team+in+(", 400, "unable to parse labelSelector"},
		{"/api/v1/namespaces/chat/pods/nope", 404, `pods "nope" not found`},
		{"/api/v1/widgets", 404, "could not find the requested resource"},
		{"/apis/resource.k8s.io/v1/namespaces/chat/resourceslices", 404, "could not find"},
		{"/api/v1/pods?watch=true&resourceVersion=abc", 400, "invalid resourceVersion"},
	}
	for _, c := range cases {
		resp, err := http.Get(hs.URL + c.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var st metav1.Status
		if err := json.Unmarshal(body, &st); err != nil {
			t.Fatalf("%s: body is not a Status: %s", c.path, body)
		}
		if resp.StatusCode != c.code || int(st.Code) != c.code || !strings.Contains(st.Message, c.msg) {
			t.Errorf("%s: got %d %q, want %d containing %q", c.path, resp.StatusCode, st.Message, c.code, c.msg)
		}
	}
	resp, err := http.Post(hs.URL+"/api/v1/namespaces/chat/pods", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("POST of a pod without a name answered %d, want 422", resp.StatusCode)
	}
}

// A watch from a resourceVersion older than the server remembers gets the
// API server's 410 Gone ERROR event, so clients re-list.
func TestWatchTooOldResourceVersion(t *testing.T) {
	srv, _, _ := startAPI(t)
	hs := httptest.NewServer(srv)
	defer hs.Close()
	resp, err := http.Get(hs.URL + "/api/v1/pods?watch=true&resourceVersion=5")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var ev struct {
		Type   string        `json:"type"`
		Object metav1.Status `json:"object"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&ev); err != nil {
		t.Fatal(err)
	}
	if ev.Type != "ERROR" || ev.Object.Code != http.StatusGone {
		t.Errorf("got %s %+v, want ERROR 410", ev.Type, ev.Object)
	}
}

// Discovery answers what client-go's discovery client asks.
func TestDiscovery(t *testing.T) {
	_, _, kc := startAPI(t)
	cs := clientset(t, kc)
	v, err := cs.Discovery().ServerVersion()
	if err != nil || v.Major != "1" {
		t.Fatalf("server version: %v %v", v, err)
	}
	rl, err := cs.Discovery().ServerResourcesForGroupVersion("resource.k8s.io/v1")
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, r := range rl.APIResources {
		names[r.Name] = true
	}
	for _, want := range []string{"resourceclaims", "resourceslices", "deviceclasses"} {
		if !names[want] {
			t.Errorf("resource.k8s.io/v1 does not list %s", want)
		}
	}
	groups, err := cs.Discovery().ServerGroups()
	if err != nil {
		t.Fatal(err)
	}
	if len(groups.Groups) < 3 {
		t.Errorf("groups: %+v", groups.Groups)
	}
	pods, err := cs.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{LabelSelector: "team=search,otelcol-accel.io/workload-type=inference"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Labels["team"] != "search" {
			t.Errorf("label selector returned %s with team %q", p.Name, p.Labels["team"])
		}
	}
	if len(pods.Items) != 4 {
		t.Errorf("search inference pods: %d, want 4", len(pods.Items))
	}
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

// The classic list-then-watch protocol (clients with WatchList off): list
// gives a resourceVersion, a watch from it sees only later changes.
func TestListThenWatchFromResourceVersion(t *testing.T) {
	srv, _, _ := startAPI(t)
	hs := httptest.NewServer(srv)
	defer hs.Close()
	resp, err := http.Get(hs.URL + "/api/v1/namespaces/search/pods?labelSelector=team%3Dsearch")
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Kind     string          `json:"kind"`
		Metadata metav1.ListMeta `json:"metadata"`
		Items    []corev1.Pod    `json:"items"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if list.Kind != "PodList" || len(list.Items) != 4 || list.Metadata.ResourceVersion == "" {
		t.Fatalf("list: kind %s, %d items, rv %q", list.Kind, len(list.Items), list.Metadata.ResourceVersion)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, hs.URL+"/api/v1/namespaces/search/pods?watch=true&resourceVersion="+list.Metadata.ResourceVersion, nil)
	wresp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer wresp.Body.Close()
	p := list.Items[0].DeepCopy()
	p.Labels["version"] = "2"
	if err := srv.Store().Apply(p); err != nil {
		t.Fatal(err)
	}
	var ev struct {
		Type   string     `json:"type"`
		Object corev1.Pod `json:"object"`
	}
	if err := json.NewDecoder(wresp.Body).Decode(&ev); err != nil {
		t.Fatal(err)
	}
	if ev.Type != "MODIFIED" || ev.Object.Name != p.Name || ev.Object.Labels["version"] != "2" {
		t.Errorf("first event after the list: %s %s %v", ev.Type, ev.Object.Name, ev.Object.Labels)
	}
}

// FuzzRequests sends arbitrary paths, queries and Accept headers: the server
// must answer every one with a status, never panic. Watches are excluded
// (they stream until a timeout).
func FuzzRequests(f *testing.F) {
	store, err := NewStore(Objects(simtest.DemoFleet(f, 0)))
	if err != nil {
		f.Fatal(err)
	}
	srv := NewServer(store)
	f.Add("/api/v1/pods", "fieldSelector=spec.nodeName%3Dgpu-h100-a&labelSelector=team%3Dsearch", "application/json")
	f.Add("/api/v1/namespaces/chat/pods/llm-serving-0", "", "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1")
	f.Add("/apis/resource.k8s.io/v1/resourceslices", "fieldSelector=spec.driver!%3Dx", "")
	f.Add("/apis/apps", "", "")
	f.Add("/api/v1/namespaces//pods/", "labelSelector=a+in+(b,c)", "")
	f.Fuzz(func(t *testing.T, path, query, accept string) {
		if strings.Contains(query, "watch") {
			return
		}
		req := httptest.NewRequest(http.MethodGet, "http://x/", nil)
		req.URL.Path = path
		req.URL.RawQuery = query
		req.Header.Set("Accept", accept)
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code < 200 || rec.Code > 599 {
			t.Fatalf("status %d", rec.Code)
		}
		if rec.Code != http.StatusOK {
			var st metav1.Status
			if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil || st.Kind != "Status" {
				t.Fatalf("%d without a Status body: %s", rec.Code, rec.Body.Bytes())
			}
		}
	})
}
