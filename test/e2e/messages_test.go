//go:build e2e

package e2e

// unavailableSourceMessages are the log lines the agent must print on a
// machine without accelerators or Kubernetes (CI), one per missing source,
// each naming what is missing and how to fix it. They are the components'
// own messages (see their READMEs); a change there must change this list.
var unavailableSourceMessages = []string{
	// dcgm receiver, source nvml
	"NVIDIA driver library libnvidia-ml.so.1 not found: mount the driver's libraries into the container or use source: dcgm_exporter",
	// neuron receiver
	"neuron-monitor not found in PATH: install aws-neuronx-tools or set command: to its full path in the neuron receiver's config",
	// accelerator_attributes: no kubelet socket, no node name for the API
	"the socket /var/lib/kubelet/pod-resources/kubelet.sock does not exist: mount the host directory /var/lib/kubelet/pod-resources into the collector",
	"node_name is empty, so the Kubernetes API source is off",
	// inference receiver: discovery needs the node name too
	"inference pods are not discovered: node_name is empty",
}
