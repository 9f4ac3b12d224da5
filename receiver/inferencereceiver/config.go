package inferencereceiver // import "github.com/otelcol-accel/otelcol-accel/receiver/inferencereceiver"

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/scraper/scraperhelper"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/otelcol-accel/otelcol-accel/internal/k8sclient"
	"github.com/otelcol-accel/otelcol-accel/receiver/inferencereceiver/internal/metadata"
	"github.com/otelcol-accel/otelcol-accel/receiver/inferencereceiver/internal/normalize"
)

// ServerAuto detects the server kind from the metric names of the first
// scrape.
const ServerAuto = "auto"

// Defaults.
const (
	defaultCollectionInterval = 15 * time.Second
	defaultScrapeTimeout      = 5 * time.Second
	defaultErrorLogInterval   = 5 * time.Minute
	defaultOperation          = "chat"
	defaultAnnotationPrefix   = "otelcol-accel.io"
	defaultMaxResponseBytes   = 16 << 20
)

// Config configures the inference receiver.
type Config struct {
	// collection_interval, initial_delay and timeout (which also bounds
	// each HTTP request).
	scraperhelper.ControllerConfig `mapstructure:",squash"`
	// tls, headers, auth, proxy_url, …: the HTTP client every target is
	// scraped with (confighttp); endpoint is not used (targets list them).
	confighttp.ClientConfig `mapstructure:",squash"`

	// Targets are inference servers at fixed endpoints.
	Targets []TargetConfig `mapstructure:"targets"`
	// Discovery finds inference servers among the pods of this node.
	Discovery DiscoveryConfig `mapstructure:"discovery"`

	// ScrapeTimeout bounds the scrape of each target that sets no timeout
	// of its own. Targets are scraped in parallel; one slow target never
	// holds up the others. Left unset, it is 5s, or collection_interval
	// when that is shorter.
	ScrapeTimeout time.Duration `mapstructure:"scrape_timeout"`
	// MaxResponseBytes caps one /metrics response.
	MaxResponseBytes int64 `mapstructure:"max_response_bytes"`
	// ErrorLogInterval is how often a failure that persists (a target
	// still unreachable, a server still serving unreadable lines) is
	// logged again after the first time.
	ErrorLogInterval time.Duration `mapstructure:"error_log_interval"`

	ResourceAttributes metadata.ResourceAttributesConfig `mapstructure:"resource_attributes"`
}

// TargetConfig is one statically configured inference server.
type TargetConfig struct {
	// Endpoint is the metrics URL, e.g. http://10.0.0.7:8000/metrics. A
	// missing scheme means http; a missing path means the server kind's
	// usual one (/metrics, NIM: /v1/metrics).
	Endpoint string `mapstructure:"endpoint"`
	// Server is vllm, sglang, triton, tgi, nim or auto (default).
	Server string `mapstructure:"server"`
	// Model names the model when the server's metrics carry no model
	// label (TGI), and is ignored otherwise.
	Model string `mapstructure:"model"`
	// Operation is the gen_ai.operation.name of the server (default chat).
	Operation string `mapstructure:"operation"`
	// Timeout overrides scrape_timeout for this target.
	Timeout time.Duration `mapstructure:"timeout"`
	// Pod names the pod the server runs in, for servers found without
	// discovery: a collector sidecar scraping localhost (from the downward
	// API), or a list generated from elsewhere. Its uid is what the
	// attributes processor joins on.
	Pod PodConfig `mapstructure:"pod"`
}

// PodConfig identifies a pod.
type PodConfig struct {
	Name      string `mapstructure:"name"`
	Namespace string `mapstructure:"namespace"`
	UID       string `mapstructure:"uid"`
	Node      string `mapstructure:"node"`
}

func (p PodConfig) set() bool { return p != PodConfig{} }

// DiscoveryConfig finds inference servers among the pods of this node.
type DiscoveryConfig struct {
	Enabled bool `mapstructure:"enabled"`

	// APIConfig is the agent's one way to the API (auth_type, kubeconfig,
	// ...): components with the same settings share the informers.
	k8sclient.APIConfig `mapstructure:",squash"`

	// NodeName is this node, usually ${env:K8S_NODE_NAME} from the
	// downward API; only its pods are watched.
	NodeName string `mapstructure:"node_name"`
	// LabelSelector selects inference pods by label, e.g.
	// "app.kubernetes.io/component=inference-server". Pods carrying the
	// <annotation_prefix>/inference-server annotation are selected too.
	LabelSelector string `mapstructure:"label_selector"`
	// AnnotationPrefix prefixes the annotations read from pods:
	// inference-server, metrics-port, metrics-path, metrics-scheme, model.
	AnnotationPrefix string `mapstructure:"annotation_prefix"`
	// PrometheusAnnotations lets prometheus.io/port, /path and /scheme
	// stand in for our port, path and scheme annotations.
	PrometheusAnnotations bool `mapstructure:"prometheus_annotations"`
	// Server is the kind of pods selected by label that have no
	// inference-server annotation (default auto).
	Server string `mapstructure:"server"`
	// Operation is the gen_ai.operation.name of discovered servers.
	Operation string `mapstructure:"operation"`
	// SyncTimeout is how long to wait for the first list of pods before
	// reporting the Kubernetes API as unreachable.
	SyncTimeout time.Duration `mapstructure:"sync_timeout"`
}

func createDefaultConfig() *Config {
	cc := scraperhelper.NewDefaultControllerConfig()
	cc.CollectionInterval = defaultCollectionInterval
	client := confighttp.NewDefaultClientConfig()
	// A connection kept for every server, however many the node runs: the
	// default cap of 100 idle connections for the whole client made a node
	// with more servers than that dial the rest again every scrape.
	if ka := client.Keepalive.Get(); ka != nil {
		ka.MaxIdleConns = 0
	}
	return &Config{
		ControllerConfig: cc,
		ClientConfig:     client,
		Discovery: DiscoveryConfig{
			APIConfig:             k8sclient.APIConfig{AuthType: k8sclient.AuthServiceAccount},
			AnnotationPrefix:      defaultAnnotationPrefix,
			PrometheusAnnotations: true,
			Server:                ServerAuto,
			Operation:             defaultOperation,
			SyncTimeout:           30 * time.Second,
		},
		ScrapeTimeout:      defaultScrapeTimeout,
		MaxResponseBytes:   defaultMaxResponseBytes,
		ErrorLogInterval:   defaultErrorLogInterval,
		ResourceAttributes: metadata.DefaultResourceAttributesConfig(),
	}
}

var _ confmap.Unmarshaler = (*Config)(nil)

// Unmarshal fits an unset scrape_timeout to a collection_interval shorter
// than its default, as Prometheus does with scrape intervals, so that a fast
// interval needs no second setting; a scrape_timeout that was set is kept as
// it is and checked by Validate.
func (cfg *Config) Unmarshal(conf *confmap.Conf) error {
	if err := conf.Unmarshal(cfg); err != nil {
		return err
	}
	if !conf.IsSet("scrape_timeout") && cfg.CollectionInterval > 0 && cfg.ScrapeTimeout > cfg.CollectionInterval {
		cfg.ScrapeTimeout = cfg.CollectionInterval
	}
	return nil
}

func validServer(s string) bool { return s == ServerAuto || normalize.Known(s) }

var serverChoices = strings.Join(append(append([]string(nil), normalize.Kinds...), ServerAuto), ", ")

// Validate reports configuration errors at startup.
func (cfg *Config) Validate() error {
	var errs []error
	if cfg.Endpoint != "" {
		errs = append(errs, fmt.Errorf("endpoint %q is not used by the inference receiver: list servers under targets (or set discovery.enabled)", cfg.Endpoint))
	}
	if len(cfg.Targets) == 0 && !cfg.Discovery.Enabled {
		errs = append(errs, errors.New("no inference servers to scrape: list targets, or set discovery.enabled to find them among this node's pods"))
	}
	if cfg.ScrapeTimeout <= 0 {
		errs = append(errs, fmt.Errorf("scrape_timeout must be positive, got %s", cfg.ScrapeTimeout))
	}
	if cfg.CollectionInterval > 0 && cfg.ScrapeTimeout > cfg.CollectionInterval {
		errs = append(errs, fmt.Errorf("scrape_timeout (%s) is longer than collection_interval (%s): scrapes would overlap; shorten scrape_timeout, or leave it unset to follow the interval", cfg.ScrapeTimeout, cfg.CollectionInterval))
	}
	if cfg.MaxResponseBytes <= 0 {
		errs = append(errs, fmt.Errorf("max_response_bytes must be positive, got %d", cfg.MaxResponseBytes))
	}
	if cfg.ErrorLogInterval <= 0 {
		errs = append(errs, fmt.Errorf("error_log_interval must be positive, got %s", cfg.ErrorLogInterval))
	}
	seen := map[string]int{}
	for i, t := range cfg.Targets {
		if err := t.validate(); err != nil {
			errs = append(errs, fmt.Errorf("targets[%d]: %w", i, err))
			continue
		}
		if cfg.CollectionInterval > 0 && t.Timeout > cfg.CollectionInterval {
			errs = append(errs, fmt.Errorf("targets[%d]: timeout (%s) is longer than collection_interval (%s)", i, t.Timeout, cfg.CollectionInterval))
		}
		u, _ := t.url()
		if j, dup := seen[u.String()]; dup {
			errs = append(errs, fmt.Errorf("targets[%d]: endpoint %s is already targets[%d]", i, u, j))
		}
		seen[u.String()] = i
	}
	if cfg.Discovery.Enabled {
		errs = append(errs, cfg.Discovery.validate()...)
	}
	return errors.Join(errs...)
}

func (t TargetConfig) validate() error {
	if strings.TrimSpace(t.Endpoint) == "" {
		return errors.New("endpoint is empty")
	}
	if t.server() != ServerAuto && !normalize.Known(t.server()) {
		return fmt.Errorf("server %q: use one of %s", t.Server, serverChoices)
	}
	if _, err := t.url(); err != nil {
		return err
	}
	if t.Timeout < 0 {
		return fmt.Errorf("timeout must not be negative, got %s", t.Timeout)
	}
	if t.Pod.set() && strings.TrimSpace(t.Pod.UID) == "" {
		return errors.New("pod.uid is empty: the pod's uid is what joins its inference metrics to its devices (downward API: metadata.uid)")
	}
	return nil
}

func (t TargetConfig) server() string {
	if s := strings.ToLower(strings.TrimSpace(t.Server)); s != "" {
		return s
	}
	return ServerAuto
}

// url parses the endpoint, adding a scheme and the server's usual path
// where they are missing.
func (t TargetConfig) url() (*url.URL, error) {
	raw := strings.TrimSpace(t.Endpoint)
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("endpoint %q is not a URL: %w", t.Endpoint, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("endpoint %q: scheme must be http or https", t.Endpoint)
	}
	if u.Hostname() == "" {
		return nil, fmt.Errorf("endpoint %q has no host", t.Endpoint)
	}
	if p := u.Port(); p != "" {
		if _, err := net.LookupPort("tcp", p); err != nil {
			return nil, fmt.Errorf("endpoint %q: bad port: %w", t.Endpoint, err)
		}
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = defaultPath(t.server())
	}
	return u, nil
}

func (d DiscoveryConfig) validate() []error {
	var errs []error
	if err := d.Check(); err != nil {
		errs = append(errs, err)
	}
	if _, err := labels.Parse(d.LabelSelector); err != nil {
		errs = append(errs, fmt.Errorf("label_selector %q: %w", d.LabelSelector, err))
	}
	if strings.TrimSpace(d.AnnotationPrefix) == "" {
		errs = append(errs, errors.New("annotation_prefix is empty"))
	}
	if !validServer(d.Server) {
		errs = append(errs, fmt.Errorf("server %q: use one of %s", d.Server, serverChoices))
	}
	if d.SyncTimeout <= 0 {
		errs = append(errs, fmt.Errorf("sync_timeout must be positive, got %s", d.SyncTimeout))
	}
	for i, err := range errs {
		errs[i] = fmt.Errorf("discovery: %w", err)
	}
	return errs
}

// defaultPath is where a server kind serves its metrics.
func defaultPath(kind string) string {
	if kind == normalize.NIM {
		return "/v1/metrics"
	}
	return "/metrics"
}

// defaultPort is the port a server kind serves its metrics on by default.
func defaultPort(kind string) int32 {
	switch kind {
	case normalize.VLLM, normalize.NIM:
		return 8000
	case normalize.SGLang:
		return 30000
	case normalize.Triton:
		return 8002
	case normalize.TGI:
		return 80
	}
	return 0
}
