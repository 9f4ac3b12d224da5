package lifecycle

import (
	"fmt"
	"slices"
	"strings"
)

// ZoneCounts are one workload's ready replicas by zone, with a zero for
// each zone that offers what it requests but holds none of them.
type ZoneCounts map[string]int

// Imbalance is the zone rule: a workload with replicas in a zone set of
// at least two zones is unbalanced when the fullest zone has at least two
// more replicas than the emptiest, and the emptiest has less than half of
// the fullest (3/0, 2/0, 5/2 are; 2/1, 4/2, 3/2/2 are not). Losing the
// fullest zone would then take most of the endpoint's capacity, and its
// traffic crosses zones. ok is false when balanced; evidence lists every
// zone's count, sorted by zone.
func (z ZoneCounts) Imbalance() (evidence string, ok bool) {
	if len(z) < 2 {
		return "", false
	}
	lo, hi, total := -1, 0, 0
	for _, n := range z {
		total += n
		hi = max(hi, n)
		if lo < 0 || n < lo {
			lo = n
		}
	}
	if total < 2 || hi-lo < 2 || 2*lo >= hi {
		return "", false
	}
	zones := make([]string, 0, len(z))
	for zone := range z {
		zones = append(zones, zone)
	}
	slices.Sort(zones)
	parts := make([]string, len(zones))
	for i, zone := range zones {
		parts[i] = fmt.Sprintf("replicas_%s=%d", zone, z[zone])
	}
	return strings.Join(parts, " "), true
}
