//go:generate mdatagen metadata.yaml

// Package acceleratorgpuresetreceiver runs on a node agent and carries out
// the GPU resets the accelerator_remediation exporter asks for: it watches
// its own node for the annotation <prefix>/gpu-reset=<uuid>@<plan id>,
// runs the configured reset command once the kubelet's PodResources API
// says nothing holds the GPU, and reports the outcome as a log record that
// the agent's pipeline carries to the gateway's remediator. It only reads
// the cluster (its node) and the kubelet; the remediator does every write.
package acceleratorgpuresetreceiver // import "github.com/otelcol-accel/otelcol-accel/receiver/acceleratorgpuresetreceiver"
