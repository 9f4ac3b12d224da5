//go:generate mdatagen metadata.yaml

// Package k8stokenauthextension authenticates collectors to each other with
// Kubernetes service account tokens: the node agents send their pod's
// projected, audience-bound token (client side), and the gateway verifies
// it with the TokenReview API and passes the sender's identity (user, pod,
// node) on in client.Info.Auth (server side). What a sender may then speak
// for is decided by processor/acceleratorsenderprocessor.
package k8stokenauthextension // import "github.com/otelcol-accel/otelcol-accel/extension/k8stokenauthextension"
