package inferencereceiver // import "github.com/otelcol-accel/otelcol-accel/receiver/inferencereceiver"

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver"
	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/otelcol-accel/otelcol-accel/internal/k8sclient"
	"github.com/otelcol-accel/otelcol-accel/internal/promscrape"
	"github.com/otelcol-accel/otelcol-accel/receiver/inferencereceiver/internal/discovery"
)

// keyKubernetes is the problem key of the Kubernetes API in health.
const keyKubernetes = "kubernetes"

// clientRetry is how often a failed Kubernetes client is built again.
const clientRetry = time.Minute

// errNoNodeName explains why discovery cannot run without a node name.
var errNoNodeName = errors.New("node_name is empty (is K8S_NODE_NAME set from spec.nodeName with the downward API?)")

// inferenceScraper scrapes every target once per collection interval, in
// parallel, each with its own timeout, and emits what the healthy ones
// served. Per-target failures are logged and reported as status here, not
// returned: the scraper controller would log every returned error at every
// interval, without limit.
type inferenceScraper struct {
	cfg    *Config
	logger *zap.Logger
	opts   options

	client    *promscrape.Client
	telemetry component.TelemetrySettings
	userAgent string
	emitter   emitter
	health    *health
	host      component.Host

	watcher      *discovery.Watcher
	watchStarted time.Time
	// clientErr is why discovery has no Kubernetes client yet; it is
	// retried every clientRetry, so an agent started before the API (or
	// off Kubernetes altogether) keeps scraping its static targets.
	clientErr     error
	clientAttempt time.Time

	static  []*target
	targets map[string]*target // by id: static and discovered
	// leaveFirstRequests unregisters this receiver as a producer of first
	// requests (firstrequest.go).
	leaveFirstRequests func()
}

func newScraper(cfg *Config, set receiver.Settings, opts options) *inferenceScraper {
	return &inferenceScraper{
		cfg:       cfg,
		logger:    set.Logger,
		opts:      opts,
		telemetry: set.TelemetrySettings,
		userAgent: "otelcol-accel/" + set.BuildInfo.Version + " (inference receiver)",
		emitter:   emitter{resourceAttrs: cfg.ResourceAttributes, scopeVersion: set.BuildInfo.Version},
		health:    newHealth(set.Logger, cfg.ErrorLogInterval),
		targets:   map[string]*target{},
	}
}

func (s *inferenceScraper) start(ctx context.Context, host component.Host) error {
	s.host = host
	// Fails only on configuration (a TLS file that cannot be read, an auth
	// extension that is not there), never because a server is not up.
	client, err := promscrape.NewClient(ctx, &s.cfg.ClientConfig, host, s.telemetry, promscrape.ClientOptions{
		// OpenMetrics first: the format with exemplars.
		Accept:       promscrape.AcceptOpenMetricsOrText,
		UserAgent:    s.userAgent,
		MaxBodyBytes: s.cfg.MaxResponseBytes,
	})
	if err != nil {
		return fmt.Errorf("inference receiver http client: %w", err)
	}
	s.client = client

	for _, tc := range s.cfg.Targets {
		u, err := tc.url()
		if err != nil {
			return err // Validate has already refused this.
		}
		timeout := tc.Timeout
		if timeout == 0 {
			timeout = s.cfg.ScrapeTimeout
		}
		var pod *discovery.Pod
		if tc.Pod.set() {
			pod = &discovery.Pod{Name: tc.Pod.Name, Namespace: tc.Pod.Namespace, UID: tc.Pod.UID, NodeName: tc.Pod.Node}
		}
		t := newTarget("static/"+u.String(), u, tc.server(), tc.Model, tc.Operation, timeout, pod)
		s.static = append(s.static, t)
		s.targets[t.id] = t
	}

	if s.cfg.Discovery.Enabled {
		s.startDiscovery(s.opts.now())
	}
	if s.opts.firstRequests != nil {
		s.leaveFirstRequests = s.opts.firstRequests.AddProducer()
	}
	return nil
}

// startDiscovery builds the Kubernetes client and starts watching this
// node's pods. Failing that (no node name, not in a cluster, a broken
// kubeconfig) is not fatal: the node agent must run on machines without
// Kubernetes too, so the reason is reported as status by refreshTargets and
// the attempt repeated every clientRetry.
func (s *inferenceScraper) startDiscovery(now time.Time) {
	s.clientAttempt = now
	if s.cfg.Discovery.NodeName == "" {
		s.clientErr = errNoNodeName
		return
	}
	registry := s.opts.registry
	if registry == nil {
		registry = k8sclient.Shared()
	}
	selector, _ := labels.Parse(s.cfg.Discovery.LabelSelector)
	watcher, err := discovery.NewWatcher(registry, s.cfg.Discovery.APIConfig, discovery.Rules{
		NodeName:           s.cfg.Discovery.NodeName,
		Selector:           selector,
		AnnotationPrefix:   s.cfg.Discovery.AnnotationPrefix,
		PrometheusFallback: s.cfg.Discovery.PrometheusAnnotations,
		ValidServer:        validServer,
		DefaultServer:      s.cfg.Discovery.Server,
		DefaultPort:        defaultPort,
		DefaultPath:        defaultPath,
	})
	if err == nil {
		err = watcher.Start()
		if err != nil {
			watcher.Stop()
		}
	}
	if err != nil {
		s.clientErr = err
		return
	}
	s.clientErr = nil
	s.watcher = watcher
	s.watchStarted = now
}

func (s *inferenceScraper) shutdown(context.Context) error {
	if s.leaveFirstRequests != nil {
		s.leaveFirstRequests()
	}
	if s.watcher != nil {
		s.watcher.Stop()
	}
	if s.client != nil {
		s.client.CloseIdleConnections()
	}
	return nil
}

func (s *inferenceScraper) scrape(ctx context.Context) (pmetric.Metrics, error) {
	now := s.opts.now()
	targets := s.refreshTargets(now)

	results := make([]scrapeResult, len(targets))
	var wg sync.WaitGroup
	for i, t := range targets {
		wg.Go(func() {
			page, err := t.fetch(ctx, s.client)
			if err != nil {
				results[i] = scrapeResult{err: err}
				return
			}
			results[i] = t.process(page, now)
		})
	}
	wg.Wait()

	md := pmetric.NewMetrics()
	for i, t := range targets {
		r := results[i]
		fields := targetFields(t)
		if r.err != nil {
			s.health.fail(t.id, t.describe(), r.err.Error(), now, fields...)
			continue
		}
		s.health.ok(t.id, now)
		if len(r.warnings) > 0 {
			s.health.note(t.id, "input", now, "Skipped unreadable input from an inference server; the rest of its metrics were kept",
				append(fields, zap.String("target", t.url), zap.String("server", r.kind), zap.Int("problems", len(r.warnings)), zap.String("details", joinWarnings(r.warnings, 5)))...)
		}
		s.emitter.emit(md, t, r.kind, r.outputs)
		s.recordFirstRequest(t, r.outputs, now)
	}
	s.health.report(s.host)
	return md, nil
}

func targetFields(t *target) []zap.Field {
	if t.pod == nil {
		return nil
	}
	return []zap.Field{zap.String("k8s.namespace.name", t.pod.Namespace), zap.String("k8s.pod.name", t.pod.Name)}
}

// refreshTargets returns this interval's targets, sorted by id: the static
// ones and the pods discovery currently sees. State of pods that went away
// is dropped.
func (s *inferenceScraper) refreshTargets(now time.Time) []*target {
	if s.cfg.Discovery.Enabled && s.watcher == nil {
		if !errors.Is(s.clientErr, errNoNodeName) && now.Sub(s.clientAttempt) >= clientRetry {
			s.startDiscovery(now)
		}
		if s.clientErr != nil {
			s.health.fail(keyKubernetes, "Kubernetes API", fmt.Sprintf("inference pods are not discovered: %v; static targets are still scraped (set discovery.auth_type and kubeconfig, or turn discovery off off Kubernetes)", s.clientErr), now)
		}
	}
	if s.watcher == nil {
		return s.static
	}
	if !s.watcher.Synced() {
		if now.Sub(s.watchStarted) >= s.cfg.Discovery.SyncTimeout {
			s.health.fail(keyKubernetes, "Kubernetes API", fmt.Sprintf("pods of node %s not listed within %s; discovered inference servers are not scraped until it answers (check auth_type, RBAC list/watch on pods, network)",
				s.cfg.Discovery.NodeName, s.cfg.Discovery.SyncTimeout), now)
		}
		return s.static
	}
	s.health.ok(keyKubernetes, now)

	found, errs := s.watcher.Targets()
	for _, err := range errs {
		key := "pod"
		var pe discovery.PodError
		if errors.As(err, &pe) {
			key = "pod/" + pe.Namespace + "/" + pe.Name
		}
		s.health.note(key, "discovery", now, "Inference pod selected but not scraped", zap.Error(err))
	}
	current := make(map[string]bool, len(found)+len(s.static))
	out := append([]*target(nil), s.static...)
	for _, t := range s.static {
		current[t.id] = true
	}
	for _, d := range found {
		current[d.ID] = true
		t := s.targets[d.ID]
		if t != nil && (t.url != d.Endpoint || t.server != d.Server || t.model != d.Model) {
			// The pod's annotations changed: start over.
			t = nil
			s.health.forget(d.ID)
		}
		if t == nil {
			u, err := url.Parse(d.Endpoint)
			if err != nil {
				s.health.note(d.ID, "discovery", now, "Inference pod has an unusable endpoint", zap.String("endpoint", d.Endpoint), zap.Error(err))
				continue
			}
			operation := s.cfg.Discovery.Operation
			pod := d.Pod
			t = newTarget(d.ID, u, d.Server, d.Model, operation, s.cfg.ScrapeTimeout, &pod)
			s.targets[d.ID] = t
		}
		out = append(out, t)
	}
	for id := range s.targets {
		if !current[id] {
			delete(s.targets, id)
			s.health.forget(id)
		}
	}
	slices.SortFunc(out, func(a, b *target) int { return strings.Compare(a.id, b.id) })
	return out
}
