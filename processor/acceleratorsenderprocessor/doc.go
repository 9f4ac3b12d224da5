//go:generate mdatagen metadata.yaml

// Package acceleratorsenderprocessor is the gateway's check of who may
// speak for a node: health events, findings, GPU reset reports and device
// status reach what acts on them (the remediator) only from the node's own
// agent, as its verified service account token says (k8s_token_auth).
package acceleratorsenderprocessor // import "github.com/otelcol-accel/otelcol-accel/processor/acceleratorsenderprocessor"
