package fleet

import (
	"fmt"
	"net/url"
	"slices"
)

// FilterKeys are the query parameters every aggregate endpoint accepts.
var FilterKeys = []string{"cluster", "node", "team", "namespace", "instance_type", "zone", "family", "model", "partition_type"}

// Filter selects devices: values of one key are alternatives, keys must all
// match. The zero Filter matches everything.
type Filter map[string][]string

// ParseFilter reads the filter keys from a query; other keys must be in
// allowed, else it is an error naming the key.
func ParseFilter(q url.Values, allowed ...string) (Filter, error) {
	f := Filter{}
	for k, vs := range q {
		switch {
		case slices.Contains(FilterKeys, k):
			for _, v := range vs {
				if v != "" {
					f[k] = append(f[k], v)
				}
			}
		case slices.Contains(allowed, k):
		default:
			return nil, fmt.Errorf("unknown query parameter %q (filters: %v; this endpoint also takes %v)", k, FilterKeys, allowed)
		}
	}
	return f, nil
}

func (f Filter) match(key, v string) bool {
	vs, ok := f[key]
	return !ok || slices.Contains(vs, v)
}

// identityMatches checks the keys that describe where a device is.
func (f Filter) placeMatches(id *Identity) bool {
	return f.match("cluster", id.Cluster) && f.match("node", id.Node) &&
		f.match("instance_type", id.InstanceType) && f.match("zone", id.Zone) &&
		f.match("family", id.Kind) && f.match("model", id.Model)
}

// Matches reports whether a device group is selected: its place keys
// match, and team, namespace and partition type match the device or any of
// its partitions or holders.
func (f Filter) Matches(g *Group) bool {
	if !f.placeMatches(&g.Device.Identity) {
		return false
	}
	for _, key := range []string{"team", "namespace", "partition_type"} {
		if _, ok := f[key]; !ok {
			continue
		}
		found := false
		g.each(func(r *Resource) {
			if found {
				return
			}
			var v string
			switch key {
			case "team":
				v = r.Team
			case "namespace":
				v = r.Namespace
			default:
				v = r.PartitionType
			}
			found = f.match(key, v)
		})
		if !found {
			return false
		}
	}
	return true
}

// matchesIdentity is Matches for one resource alone (findings, servers).
func (f Filter) matchesIdentity(id *Identity) bool {
	return f.placeMatches(id) && f.match("team", id.Team) && f.match("namespace", id.Namespace) &&
		f.match("partition_type", id.PartitionType)
}
