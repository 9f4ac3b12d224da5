package kube

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// InstanceTypeLabel is the well-known node label of the instance type.
const InstanceTypeLabel = "node.kubernetes.io/instance-type"

// Fleet counts the cluster's nodes of an instance type, for the guard rail
// on the share of a type under remediation. 0 means it could not count.
func (c *Cluster) Fleet(ctx context.Context) func(string) int {
	return func(instanceType string) int {
		n, err := c.CountNodes(ctx, instanceType)
		if err != nil {
			return 0 // the per-type rail cannot apply; max_nodes still does
		}
		return n
	}
}

// CountNodes counts the nodes labelled with the instance type.
func (c *Cluster) CountNodes(ctx context.Context, instanceType string) (int, error) {
	list, err := c.CS.CoreV1().Nodes().List(ctx, metav1.ListOptions{
		LabelSelector: labels.SelectorFromSet(labels.Set{InstanceTypeLabel: instanceType}).String(),
	})
	if err != nil {
		return 0, err
	}
	return len(list.Items), nil
}
