package promstore

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrIncomplete marks a query round that succeeded but found far fewer
// devices than the last complete one: a scrape of the gateway that failed
// or timed out makes Prometheus write staleness markers for every series of
// the target, and instant queries answer nothing for them until the next
// scrape is stored (Thanos or Mimir with a store down answer partially the
// same way). Such a round is not the fleet; the caller keeps its previous
// view.
var ErrIncomplete = errors.New("incomplete answer")

// dropBelievedAfter is how long a fleet must keep answering with fewer than
// half of the devices before the drop is believed (a cluster removed): well
// beyond a few scrape intervals of a target failing to be scraped.
const dropBelievedAfter = time.Minute

// completeness remembers the last complete round's device count.
type completeness struct {
	mu        sync.Mutex
	devices   int       // resources with hw.status in the last complete round
	dropSince time.Time // first round of a drop not yet believed
}

// check returns an ErrIncomplete when a round at now that found n devices
// is not to be believed yet.
func (c *completeness) check(n int, now time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.devices == 0 || 2*n >= c.devices {
		c.devices, c.dropSince = n, time.Time{}
		return nil
	}
	if c.dropSince.IsZero() {
		c.dropSince = now
	}
	if now.Sub(c.dropSince) >= dropBelievedAfter {
		c.devices, c.dropSince = n, time.Time{}
		return nil
	}
	return fmt.Errorf("%w: %d devices have hw.status, the last complete answer had %d (a failed scrape leaves its series stale until the next one; believed if it lasts %s)",
		ErrIncomplete, n, c.devices, dropBelievedAfter)
}
