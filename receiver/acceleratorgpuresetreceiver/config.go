package acceleratorgpuresetreceiver

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/otelcol-accel/otelcol-accel/internal/k8sclient"
)

// Config of the accelerator_gpu_reset receiver.
type Config struct {
	k8sclient.APIConfig `mapstructure:",squash"`
	// NodeName is the agent's own node (the downward API's spec.nodeName).
	NodeName string `mapstructure:"node_name"`
	// AnnotationPrefix must match the remediator's annotation_prefix.
	AnnotationPrefix string `mapstructure:"annotation_prefix"`
	// Command is the reset command and its arguments, run without a shell;
	// {uuid} is replaced by the GPU's UUID (hw.id), {plan} by the plan id.
	Command []string `mapstructure:"command"`
	// CommandTimeout bounds one run of the command.
	CommandTimeout time.Duration `mapstructure:"command_timeout"`
	// PollInterval is how often the node's annotations and the GPU's
	// holders are read.
	PollInterval time.Duration `mapstructure:"poll_interval"`
	// PodResourcesSocket is the kubelet's PodResources API socket.
	PodResourcesSocket string `mapstructure:"pod_resources_socket"`
}

// Validate checks the shape of the configuration.
func (c *Config) Validate() error {
	var errs []error
	if err := c.Check(); err != nil {
		errs = append(errs, err)
	}
	if c.NodeName == "" {
		errs = append(errs, errors.New("node_name is empty: set it to the agent's node, e.g. ${env:K8S_NODE_NAME} from the downward API's spec.nodeName"))
	}
	if c.AnnotationPrefix == "" || strings.ContainsAny(c.AnnotationPrefix, "/ ") {
		errs = append(errs, fmt.Errorf("annotation_prefix %q must be a DNS subdomain such as accelerator.otelcol-accel.io (the remediator's)", c.AnnotationPrefix))
	}
	if len(c.Command) == 0 || c.Command[0] == "" {
		errs = append(errs, errors.New(`command is empty: the reset command and its arguments, e.g. ["nvidia-smi", "-r", "-i", "{uuid}"]`))
	} else if !slices.ContainsFunc(c.Command, func(a string) bool { return strings.Contains(a, "{uuid}") }) {
		errs = append(errs, fmt.Errorf("command %q does not name the GPU: put {uuid} where the GPU's UUID goes", c.Command))
	}
	if c.CommandTimeout <= 0 || c.PollInterval <= 0 {
		errs = append(errs, errors.New("command_timeout and poll_interval must be positive"))
	}
	if c.PodResourcesSocket == "" {
		errs = append(errs, errors.New("pod_resources_socket is empty: the kubelet's PodResources socket, /var/lib/kubelet/pod-resources/kubelet.sock by default"))
	}
	return errors.Join(errs...)
}
