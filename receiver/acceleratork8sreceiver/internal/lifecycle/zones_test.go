package lifecycle

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestZoneImbalanceRule(t *testing.T) {
	for _, c := range []struct {
		counts ZoneCounts
		bad    bool
	}{
		{ZoneCounts{"a": 3, "b": 0}, true},
		{ZoneCounts{"a": 2, "b": 0}, true},
		{ZoneCounts{"a": 5, "b": 2}, true},
		{ZoneCounts{"a": 3, "b": 0, "c": 1}, true},
		{ZoneCounts{"a": 2, "b": 1}, false},
		{ZoneCounts{"a": 4, "b": 2}, false},
		{ZoneCounts{"a": 3, "b": 2, "c": 2}, false},
		{ZoneCounts{"a": 1, "b": 0}, false}, // one replica cannot be spread
		{ZoneCounts{"a": 6}, false},         // one zone offers it: nothing to balance
	} {
		evidence, bad := c.counts.Imbalance()
		assert.Equal(t, c.bad, bad, "%v", c.counts)
		if bad {
			assert.Contains(t, evidence, "replicas_a=")
		}
	}
	ev, _ := ZoneCounts{"us-east-1c": 1, "us-east-1a": 3, "us-east-1b": 0}.Imbalance()
	assert.Equal(t, "replicas_us-east-1a=3 replicas_us-east-1b=0 replicas_us-east-1c=1", ev)
}
