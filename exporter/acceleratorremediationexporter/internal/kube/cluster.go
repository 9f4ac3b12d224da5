// Package kube holds the Kubernetes executors, one step kind per file:
// the node condition, the node Event, cordon and taint, eviction of the
// failed device's holders, drain, workload restart and the DRA device taint;
// and what the engine reads from the cluster: approvals (a node annotation)
// and the node count per instance type (guard rails). Every call goes
// through the clientset of internal/k8sclient's APIConfig, under the
// remediator's own ServiceAccount; the verbs used here are exactly the
// shipped ClusterRole's (distributions/otelcol-accel/kubernetes).
package kube // import "github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/kube"

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/plan"
)

// ConditionType is the node condition the remediator sets.
const ConditionType = "AcceleratorHealthy"

// Cluster is what every Kubernetes executor shares.
type Cluster struct {
	CS kubernetes.Interface
	// Prefix is the annotation and taint key prefix
	// (<prefix>/approve, <prefix>/unhealthy).
	Prefix string
	// Component names the remediator in Events and field managers.
	Component string
}

// TaintKey is the key of the node and device taints.
func (c *Cluster) TaintKey() string { return c.Prefix + "/unhealthy" }

// ApproveKey is the node annotation an operator sets to the plan id.
func (c *Cluster) ApproveKey() string { return c.Prefix + "/approve" }

// onNode is the Applies of every Kubernetes step.
func onNode(s plan.Subject) (bool, string) {
	if s.Node == "" {
		return false, "the device is not on a Kubernetes node (no k8s.node.name)"
	}
	return true, ""
}

func dryRun(on bool) []string {
	if on {
		return []string{metav1.DryRunAll}
	}
	return nil
}
