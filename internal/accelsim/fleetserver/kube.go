package fleetserver

import "github.com/otelcol-accel/otelcol-accel/internal/accelsim/kubeapi"

// Kube is the fleet's simulated Kubernetes API, for what plays into it
// (the reliability story, kubeapi.PlayStory).
func (r *Running) Kube() *kubeapi.Server { return r.kube }
