package inferencereceiver

import (
	"time"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/receiver/inferencereceiver/internal/cumulative"
)

// recordFirstRequest tells the process's first-request registry when a
// pod's server is first seen with a finished request, the last phase of
// the pod's cold start that the accelerator_k8s receiver measures. The time
// is the scrape's: the first request finished at most one collection
// interval before it.
func (s *inferenceScraper) recordFirstRequest(t *target, outs []cumulative.Output, now time.Time) {
	if t.pod == nil || t.pod.UID == "" || t.servedFirst || s.opts.firstRequests == nil {
		return
	}
	for i := range outs {
		if outs[i].Metric == accelschema.MetricRequests && outs[i].Value > 0 {
			t.servedFirst = true
			s.opts.firstRequests.Observe(t.pod.UID, now)
			return
		}
	}
}
