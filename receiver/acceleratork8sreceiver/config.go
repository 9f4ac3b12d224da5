package acceleratork8sreceiver

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/otelcol-accel/otelcol-accel/internal/k8sclient"
)

// Config of the accelerator_k8s receiver.
type Config struct {
	k8sclient.APIConfig `mapstructure:",squash"`
	// NodeName limits the pods watched to one node (a node agent); empty
	// watches the whole cluster, which is what unschedulable pods need
	// (they have no node yet): run it so in one collector per cluster.
	NodeName string `mapstructure:"node_name"`
	// CollectionInterval is how often the histograms and gauges are emitted.
	CollectionInterval time.Duration `mapstructure:"collection_interval"`
	// Resources are the accelerator resource names (a trailing * matches a
	// prefix) whose pods are followed.
	Resources []string `mapstructure:"resources"`
	// Buckets are the cold-start histograms' upper bounds, in seconds.
	Buckets []float64 `mapstructure:"buckets"`
	// ModelLabels are the pod labels or annotations, first found wins,
	// that name the model a pod serves.
	ModelLabels []string `mapstructure:"model_labels"`
	// ClusterName is set as k8s.cluster.name on every resource.
	ClusterName string `mapstructure:"cluster_name"`
	// FirstRequestWait is how long a cold start waits, after Ready, for
	// the pod's first finished request when an inference receiver runs in
	// the same collector; then it is reported without that phase.
	FirstRequestWait time.Duration `mapstructure:"first_request_wait"`
}

// Validate checks the shape of the configuration.
func (c *Config) Validate() error {
	var errs []error
	if err := c.Check(); err != nil {
		errs = append(errs, err)
	}
	if c.CollectionInterval <= 0 {
		errs = append(errs, fmt.Errorf("collection_interval must be positive, got %s", c.CollectionInterval))
	}
	if c.FirstRequestWait < 0 {
		errs = append(errs, fmt.Errorf("first_request_wait must not be negative, got %s", c.FirstRequestWait))
	}
	if len(c.Resources) == 0 {
		errs = append(errs, errors.New("resources is empty: name the accelerator resources to follow, e.g. nvidia.com/gpu, nvidia.com/mig-*, aws.amazon.com/neuron*"))
	}
	for _, r := range c.Resources {
		if r == "" || r == "*" || strings.Count(r, "*") > 1 || (strings.Contains(r, "*") && !strings.HasSuffix(r, "*")) {
			errs = append(errs, fmt.Errorf("resources: %q is not a resource name or a prefix ending in one *", r))
		}
	}
	for i, b := range c.Buckets {
		if b <= 0 || (i > 0 && b <= c.Buckets[i-1]) {
			errs = append(errs, fmt.Errorf("buckets must be positive and increasing; %v is not", c.Buckets))
			break
		}
	}
	return errors.Join(errs...)
}
