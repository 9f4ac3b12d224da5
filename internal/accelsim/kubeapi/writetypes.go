package kubeapi

import (
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The kinds only writers need: Leases (client-go leader election),
// ConfigMaps (the remediator keeps its plans in them when it elects a
// leader) and PodDisruptionBudgets (the Eviction API honours them). A scenario or test
// Applies PDBs with the status.disruptionsAllowed it wants; the simulator
// has no disruption controller, so the Eviction API reads and decrements
// that field as the real one does between the controller's passes.
var (
	leaseType = &resourceType{group: "coordination.k8s.io", version: "v1", plural: "leases", singular: "lease", kind: "Lease", namespaced: true,
		zero: func() runtime.Object { return &coordinationv1.Lease{} }, fieldsOf: objectFields}
	configMapType = &resourceType{group: "", version: "v1", plural: "configmaps", singular: "configmap", kind: "ConfigMap", namespaced: true,
		zero: func() runtime.Object { return &corev1.ConfigMap{} }, fieldsOf: objectFields}
	pdbType = &resourceType{group: "policy", version: "v1", plural: "poddisruptionbudgets", singular: "poddisruptionbudget", kind: "PodDisruptionBudget", namespaced: true,
		zero: func() runtime.Object { return &policyv1.PodDisruptionBudget{} }, fieldsOf: objectFields}
)

func init() { resourceTypes = append(resourceTypes, leaseType, configMapType, pdbType) }

// verbs are what discovery advertises: every served kind can be read,
// watched and written (subresources: nodes/status, pods/status,
// pods/eviction, poddisruptionbudgets/status).
var verbs = []string{"create", "delete", "get", "list", "patch", "update", "watch"}

// subresources of a kind that the write path serves.
func subresources(rt *resourceType) []string {
	switch rt.plural {
	case "pods":
		return []string{"status", "eviction"}
	case "nodes", "poddisruptionbudgets":
		return []string{"status"}
	}
	return nil
}

func subresourceVerbs(sub string) []string {
	if sub == "eviction" {
		return []string{"create"}
	}
	return []string{"get", "patch", "update"}
}
