// Package podresources is a client of the kubelet PodResources v1 API
// (k8s.io/kubelet/pkg/apis/podresources/v1): which devices, and which DRA
// claim results, the kubelet has assigned to each container on this node.
//
// One Client keeps one gRPC connection to the kubelet's unix socket for its
// whole life. gRPC re-dials it with exponential backoff whenever the kubelet
// restarts (the socket is removed and created again), so callers simply call
// List again on their next refresh; nothing is re-dialled per call, unlike
// dcgm-exporter, which dials on every scrape.
//
// Errors are *Error values that say what went wrong in terms a user can act
// on (Hint): the socket is not mounted, the collector may not open it, the
// kubelet is too old for Get or GetAllocatableResources.
//
// The results are plain Go values (Pod, Container, Devices, ClaimDevice), so
// callers do not depend on the generated protobuf types.
package podresources
