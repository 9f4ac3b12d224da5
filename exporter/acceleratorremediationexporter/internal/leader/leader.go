// Package leader makes exactly one replica of the remediator act: replicas
// compete for a Kubernetes Lease (client-go leaderelection); the holder runs
// the plans, the others stand by and take over when the lease lapses.
package leader // import "github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/leader"

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// Config is the lease.
type Config struct {
	Enabled       bool          `mapstructure:"enabled"`
	Namespace     string        `mapstructure:"namespace"`
	LeaseName     string        `mapstructure:"lease_name"`
	LeaseDuration time.Duration `mapstructure:"lease_duration"`
	RenewDeadline time.Duration `mapstructure:"renew_deadline"`
	RetryPeriod   time.Duration `mapstructure:"retry_period"`
}

// Check checks the shape of the lease settings (not Validate, which the
// collector would call a second time on the embedded struct).
func (c Config) Check() error {
	if !c.Enabled {
		return nil
	}
	var errs []error
	if c.Namespace == "" || c.LeaseName == "" {
		errs = append(errs, errors.New("leader_election: namespace and lease_name must be set"))
	}
	if c.RetryPeriod <= 0 || c.RenewDeadline <= c.RetryPeriod || c.LeaseDuration <= c.RenewDeadline {
		errs = append(errs, errors.New("leader_election: needs lease_duration > renew_deadline > retry_period > 0"))
	}
	return errors.Join(errs...)
}

// Elector runs the election until its context ends.
type Elector struct {
	leading atomic.Bool
}

// Leading reports whether this replica holds the lease now.
func (e *Elector) Leading() bool { return e.leading.Load() }

// Run competes for the lease as identity until ctx ends, again after each
// lost term; onChange is told of every change of leadership.
func (e *Elector) Run(ctx context.Context, cs kubernetes.Interface, c Config, identity string, onChange func(leading bool)) error {
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: c.Namespace, Name: c.LeaseName},
		Client:     cs.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: identity},
	}
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   c.LeaseDuration,
		RenewDeadline:   c.RenewDeadline,
		RetryPeriod:     c.RetryPeriod,
		ReleaseOnCancel: true,
		Name:            c.LeaseName,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(context.Context) { e.leading.Store(true); onChange(true) },
			OnStoppedLeading: func() { e.leading.Store(false); onChange(false) },
		},
	})
	if err != nil {
		return err
	}
	for ctx.Err() == nil {
		le.Run(ctx) // returns when leadership is lost or ctx ends
	}
	return nil
}
