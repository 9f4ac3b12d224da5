package acceleratorsenderprocessor

import (
	"errors"
	"fmt"
	"strings"
)

// Config says who the node agents are.
type Config struct {
	// AgentServiceAccounts are the node agents' service accounts,
	// "<namespace>/<name>". A sender with another identity (an inference
	// sidecar, any other pod) never speaks for a node's devices.
	AgentServiceAccounts []string `mapstructure:"agent_service_accounts"`
	// AcceptUnauthenticated is the local mode (make run, tests): data from
	// a sender without any identity passes, its reporter "unauthenticated".
	// Senders with an identity are still checked. The processor says at
	// start that it runs so.
	AcceptUnauthenticated bool `mapstructure:"accept_unauthenticated"`
}

// Validate checks the shape: namespace/name pairs.
func (c *Config) Validate() error {
	var errs []error
	if len(c.AgentServiceAccounts) == 0 && !c.AcceptUnauthenticated {
		errs = append(errs, errors.New("agent_service_accounts is empty: name the node agents' service accounts as <namespace>/<name> (otelcol-accel/otelcol-accel in the shipped manifests)"))
	}
	for _, sa := range c.AgentServiceAccounts {
		ns, name, ok := strings.Cut(sa, "/")
		if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
			errs = append(errs, fmt.Errorf("agent_service_accounts: %q is not <namespace>/<name>", sa))
		}
	}
	return errors.Join(errs...)
}

// usernames are the Kubernetes user names of the agents' tokens.
func (c *Config) usernames() map[string]bool {
	out := map[string]bool{}
	for _, sa := range c.AgentServiceAccounts {
		ns, name, _ := strings.Cut(sa, "/")
		out["system:serviceaccount:"+ns+":"+name] = true
	}
	return out
}
