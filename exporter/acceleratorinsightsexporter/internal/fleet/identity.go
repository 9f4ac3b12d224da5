package fleet

import (
	"cmp"
	"math"
	"strconv"
	"strings"

	s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

// IdentityKeys are the resource attributes an Identity is read from; a
// backend reads exactly these (the Prometheus backend as their label names).
var IdentityKeys = []string{
	s.AttrHWID, s.AttrHWParent, s.AttrK8sNodeName, s.AttrHostName, s.AttrK8sClusterName, s.AttrKind, s.AttrHWVendor,
	s.AttrHWModel, s.AttrDeviceIndex, s.AttrHostType, s.AttrCloudZone, s.AttrCloudRegion, s.AttrPartitionType,
	s.AttrPartitionID, s.AttrPartitionProfile, s.AttrPartitionShare, s.AttrAllocationState, s.AttrK8sNamespaceName,
	s.AttrK8sPodName, s.AttrK8sPodUID, s.AttrK8sContainerName, s.AttrTeam, s.AttrWorkloadName, s.AttrWorkloadType,
}

// IdentityFrom reads an Identity through get, which returns an attribute's
// value as text ("" when absent).
func IdentityFrom(get func(key string) string) Identity {
	id := Identity{
		HWID: get(s.AttrHWID), Parent: get(s.AttrHWParent), Host: get(s.AttrHostName),
		Cluster: get(s.AttrK8sClusterName), Kind: get(s.AttrKind), Vendor: get(s.AttrHWVendor), Model: get(s.AttrHWModel),
		InstanceType: get(s.AttrHostType), Zone: get(s.AttrCloudZone), Region: get(s.AttrCloudRegion),
		PartitionType: get(s.AttrPartitionType), PartitionID: get(s.AttrPartitionID), Profile: get(s.AttrPartitionProfile),
		Allocation: get(s.AttrAllocationState), Namespace: get(s.AttrK8sNamespaceName), Pod: get(s.AttrK8sPodName),
		PodUID: get(s.AttrK8sPodUID), Container: get(s.AttrK8sContainerName), Team: get(s.AttrTeam),
		Workload: get(s.AttrWorkloadName), WorkType: get(s.AttrWorkloadType), Index: -1, Share: math.NaN(),
	}
	// A node is a Kubernetes node, or the host outside Kubernetes.
	id.Node = cmp.Or(get(s.AttrK8sNodeName), id.Host)
	if v := get(s.AttrDeviceIndex); v != "" {
		if n, err := strconv.Atoi(v); err == nil {
			id.Index = n
		}
	}
	if v := get(s.AttrPartitionShare); v != "" {
		if f, err := strconv.ParseFloat(v, 64); err == nil && f >= 0 && f <= 1 {
			id.Share = f
		}
	}
	return id
}

// HolderKey tells apart the consumer copies of one shared allocation (a
// shared DRA claim gives every consumer the same hw.id, partition type and
// id): the pod's uid, else its namespace and name, "" for no holder.
func (id *Identity) HolderKey() string {
	if id.PodUID != "" {
		return id.PodUID
	}
	if id.Pod != "" {
		return id.Namespace + "/" + id.Pod
	}
	return ""
}

// EndpointOf names an inference server: server.address[:server.port].
func EndpointOf(get func(string) string) string {
	addr, port := get(s.AttrServerAddress), get(s.AttrServerPort)
	if port != "" && !strings.Contains(addr, ":") {
		return addr + ":" + port
	}
	return addr
}

// ServerOf is an inference server's identity.
func ServerOf(get func(string) string) Server {
	id := IdentityFrom(get)
	return Server{Endpoint: EndpointOf(get), Provider: get(s.AttrGenAIProviderName), Model: get(s.AttrGenAIRequestModel),
		Node: id.Node, Cluster: id.Cluster, Namespace: id.Namespace, Pod: id.Pod, PodUID: id.PodUID, Team: id.Team,
		Workload: id.Workload}
}
