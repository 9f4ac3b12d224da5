package lifecycle

import (
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// NodeClaim is what the insufficient-capacity view needs of a Karpenter
// NodeClaim (karpenter.sh/v1, read unstructured).
type NodeClaim struct {
	Name, UID string
	// Resources are the accelerator resources the claim asks for
	// (spec.resources.requests: the pods' it was made for).
	Resources []string
	Placement Placement
	// Insufficient: its Launched condition is not True and says the
	// cloud had no capacity (reason InsufficientCapacity, or a provider's
	// InsufficientCapacityError / InsufficientInstanceCapacity).
	Insufficient bool
	Reason       string
	Message      string
	At           time.Time
}

// NodeClaimOf reads a NodeClaim; ok is false for another object.
func (m Matcher) NodeClaimOf(u *unstructured.Unstructured) (NodeClaim, bool) {
	if u.GetKind() != "NodeClaim" {
		return NodeClaim{}, false
	}
	c := NodeClaim{Name: u.GetName(), UID: string(u.GetUID()), Placement: Placement{InstanceType: Any, Zone: Any}, At: u.GetCreationTimestamp().Time}
	if reqs, ok, _ := unstructured.NestedMap(u.Object, "spec", "resources", "requests"); ok {
		for name, v := range reqs {
			if !m.Is(name) {
				continue
			}
			if s, ok := v.(string); ok {
				if q, err := resource.ParseQuantity(s); err == nil && q.IsZero() {
					continue
				}
			}
			c.Resources = append(c.Resources, name)
		}
		slices.Sort(c.Resources)
	}
	requirements, _, _ := unstructured.NestedSlice(u.Object, "spec", "requirements")
	for _, r := range requirements {
		req, ok := r.(map[string]any)
		if !ok || req["operator"] != "In" {
			continue
		}
		values, _ := req["values"].([]any)
		if len(values) != 1 {
			continue
		}
		v, _ := values[0].(string)
		key, _ := req["key"].(string)
		switch {
		case slices.Contains(instanceTypeKeys, key):
			c.Placement.InstanceType = v
		case slices.Contains(zoneKeys, key):
			c.Placement.Zone = v
		}
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, x := range conds {
		cond, ok := x.(map[string]any)
		if !ok || cond["type"] != "Launched" || cond["status"] == "True" {
			continue
		}
		reason, _ := cond["reason"].(string)
		if strings.Contains(strings.ToLower(reason), "insufficientcapacity") || strings.Contains(strings.ToLower(reason), "insufficientinstancecapacity") {
			c.Insufficient, c.Reason = true, reason
			c.Message, _ = cond["message"].(string)
			if ts, _ := cond["lastTransitionTime"].(string); ts != "" {
				if t, err := time.Parse(time.RFC3339, ts); err == nil {
					c.At = t
				}
			}
		}
	}
	return c, true
}
