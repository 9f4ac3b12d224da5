//go:generate mdatagen metadata.yaml

// Package acceleratorremediationexporter turns accelerator health events
// into remediation plans and carries them out within guard rails: the steps
// for each failure mode come from internal/xid's catalogue; each step runs
// in recommend (the default), approve or automatic mode; plans are state
// machines kept in the cluster (shared by the replicas) or, without leader
// election, in the storage extension; one replica acts (a Kubernetes
// Lease); every plan and step is an audit log record and a metric. See
// docs/remediation.md.
package acceleratorremediationexporter // import "github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter"
