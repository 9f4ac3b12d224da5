package k8sclient

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/flowcontrol"
)

// Client is what the informers read the API with. RESTClient is the
// collector's; tests adapt client-go's fake clientset to it
// (k8sclienttest).
type Client interface {
	// ListWatch lists and watches gvr's objects of every namespace, tweak
	// (when set) changing each request's options (its field selector).
	ListWatch(gvr schema.GroupVersionResource, tweak func(*metav1.ListOptions)) cache.ListerWatcher
	// ServerResourcesForGroupVersion is the API's discovery of one group
	// version ("resource.k8s.io/v1"): an error that IsNotFound when the
	// API does not serve it. Its name and meaning are client-go
	// discovery's; ctx ends the request (a component's shutdown).
	ServerResourcesForGroupVersion(ctx context.Context, groupVersion string) (*metav1.APIResourceList, error)
}

// The scheme knows only the API groups the collector's components read,
// so decoding links only their types. client-go's clientset (and its
// kubernetes/scheme, discovery and informer factory) register every API
// group's types, typed clients and apply configurations: about 15 MiB of
// the node agent's executable, paged in by every DaemonSet pod
// (docs/performance.md, Node agent build). Built on first use, so a
// collector without Kubernetes sources does not pay for it at start.
var codecs = sync.OnceValue(func() serializer.CodecFactory {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme, appsv1.AddToScheme, resourcev1.AddToScheme, autoscalingv2.AddToScheme,
	} {
		if err := add(s); err != nil {
			panic(fmt.Sprintf("k8sclient scheme: %v", err)) // only a programming error: the groups' own registrations
		}
	}
	return rest.CodecFactoryForGeneratedClient(s, serializer.NewCodecFactory(s))
})

// RESTClient reaches the API with one REST client per API group version,
// over one shared transport (and one rate limiter when kube_api_qps is
// set), as client-go's clientset does for its groups.
type RESTClient struct {
	config *rest.Config
	http   *http.Client

	mu   sync.Mutex
	byGV map[schema.GroupVersion]*rest.RESTClient
}

var _ Client = (*RESTClient)(nil)

// NewClient connects to the API server as c says. Components do not call
// it directly: they Acquire the shared informers, which build one client per
// distinct config.
func NewClient(c APIConfig) (*RESTClient, error) {
	cfg, err := c.RestConfig()
	if err != nil {
		return nil, err
	}
	return NewClientForConfig(cfg)
}

// NewClientForConfig is NewClient from a client-go configuration.
func NewClientForConfig(cfg *rest.Config) (*RESTClient, error) {
	cfg = rest.CopyConfig(cfg)
	if cfg.UserAgent == "" {
		cfg.UserAgent = userAgent
	}
	if cfg.RateLimiter == nil && cfg.QPS > 0 {
		// One limiter for every group's REST client (and the dynamic
		// client's), so kube_api_qps is the agent's, not each group's.
		cfg.Burst = burstFor(cfg.QPS, cfg.Burst)
		cfg.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(cfg.QPS, cfg.Burst)
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	c := &RESTClient{config: cfg, http: hc, byGV: map[schema.GroupVersion]*rest.RESTClient{}}
	// The core group is the one every agent reads (and discovery's path):
	// building it here reports a bad host now, not at the first watch.
	if _, err := c.rest(corev1.SchemeGroupVersion); err != nil {
		return nil, err
	}
	return c, nil
}

// burstFor is the burst of a limiter of qps: burst when set, else
// client-go's default 10, or qps rounded up where that is more (a bucket
// smaller than a second's requests would hold the rate below qps).
func burstFor(qps float32, burst int) int {
	if burst > 0 {
		return burst
	}
	return max(rest.DefaultBurst, int(math.Ceil(float64(qps))))
}

// Dynamic is the dynamic client of the custom resources, over c's
// transport and rate limiter.
func (c *RESTClient) Dynamic() (dynamic.Interface, error) {
	d, err := dynamic.NewForConfigAndClient(rest.CopyConfig(c.config), c.http)
	if err != nil {
		return nil, fmt.Errorf("kubernetes dynamic client: %w", err)
	}
	return d, nil
}

// rest is the REST client of gv, made on first use.
func (c *RESTClient) rest(gv schema.GroupVersion) (*rest.RESTClient, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if rc := c.byGV[gv]; rc != nil {
		return rc, nil
	}
	cfg := rest.CopyConfig(c.config)
	cfg.GroupVersion = &gv
	cfg.APIPath = "/apis"
	if gv.Group == "" {
		cfg.APIPath = "/api"
	}
	cfg.NegotiatedSerializer = codecs().WithoutConversion()
	rc, err := rest.RESTClientForConfigAndClient(cfg, c.http)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client for %s: %w", gv, err)
	}
	c.byGV[gv] = rc
	return rc, nil
}

// ListWatch implements Client. It is what client-go's typed informers
// build, over the group's REST client.
func (c *RESTClient) ListWatch(gvr schema.GroupVersionResource, tweak func(*metav1.ListOptions)) cache.ListerWatcher {
	rc, err := c.rest(gvr.GroupVersion())
	if err != nil {
		fail := func(context.Context, metav1.ListOptions) error { return err }
		return &cache.ListWatch{
			ListWithContextFunc:  func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return nil, fail(ctx, o) },
			WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) { return nil, fail(ctx, o) },
		}
	}
	if tweak == nil {
		tweak = func(*metav1.ListOptions) {}
	}
	return cache.ToListWatcherWithWatchListSemantics(cache.NewFilteredListWatchFromClient(rc, gvr.Resource, metav1.NamespaceAll, tweak), rc)
}

// discoveryTimeout is client-go discovery's default.
const discoveryTimeout = 32 * time.Second

// ServerResourcesForGroupVersion implements Client, as client-go's
// discovery client does (GET /api/v1 or /apis/<group>/<version>).
func (c *RESTClient) ServerResourcesForGroupVersion(ctx context.Context, groupVersion string) (*metav1.APIResourceList, error) {
	rc, err := c.rest(corev1.SchemeGroupVersion)
	if err != nil {
		return nil, err
	}
	path := "/apis/" + groupVersion
	if groupVersion == "v1" {
		path = "/api/v1"
	}
	// discovery's own timeout: a request that hangs is retried, not waited
	// on; and ctx's end (Release) ends it at once.
	ctx, cancel := context.WithTimeout(ctx, discoveryTimeout)
	defer cancel()
	raw, err := rc.Get().AbsPath(path).SetHeader("Accept", "application/json").Do(ctx).Raw()
	if err != nil {
		return nil, err
	}
	list := &metav1.APIResourceList{}
	if err := json.Unmarshal(raw, list); err != nil {
		return nil, fmt.Errorf("discovery of %s: %w", groupVersion, err)
	}
	list.GroupVersion = groupVersion
	return list, nil
}

// Get reads one object of gvr (namespace empty for a cluster-scoped
// kind) into into, which must be of the kind's Go type.
func (c *RESTClient) Get(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, into runtime.Object) error {
	rc, err := c.rest(gvr.GroupVersion())
	if err != nil {
		return err
	}
	req := rc.Get().Resource(gvr.Resource).Name(name)
	if namespace != "" {
		// client-go refuses a named request with an empty namespace set.
		req = req.Namespace(namespace)
	}
	return req.Do(ctx).Into(into)
}
