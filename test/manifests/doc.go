// Package manifests checks the deployment manifests in
// distributions/otelcol-accel: every kustomize overlay is rendered with the
// real kustomize library and each object decoded strictly into its
// client-go type, the ECS JSON into the ECS API's input types, and the
// invariants that keep a deployment working (least-privilege RBAC, the mounts
// and ports the collector configs need, probes on the health endpoint) are
// asserted. It is its own module so kustomize's dependencies stay out of the
// collector's build.
package manifests
