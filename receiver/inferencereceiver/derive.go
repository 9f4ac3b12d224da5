package inferencereceiver // import "github.com/otelcol-accel/otelcol-accel/receiver/inferencereceiver"

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/receiver/inferencereceiver/internal/cumulative"
	"github.com/otelcol-accel/otelcol-accel/receiver/inferencereceiver/internal/normalize"
)

// deriveHitRatios adds gen_ai.server.prefix_cache.hit_ratio for each model
// whose server counts prefix-cache queries and hits (vLLM V1) but reports no
// ratio of its own: hits / queries over the last interval, the way vLLM's
// dashboards compute it. No point when nothing was looked up in the
// interval, or on a series' first scrape.
func deriveHitRatios(outs []cumulative.Output, now time.Time) []cumulative.Output {
	type pair struct {
		hits, queries *cumulative.Output
		hasRatio      bool
	}
	byModel := map[string]*pair{}
	get := func(m string) *pair {
		p := byModel[m]
		if p == nil {
			p = &pair{}
			byModel[m] = p
		}
		return p
	}
	for i := range outs {
		o := &outs[i]
		switch o.Metric {
		case accelschema.MetricPrefixCacheHits:
			get(o.Model).hits = o
		case accelschema.MetricPrefixCacheQueries:
			get(o.Model).queries = o
		case accelschema.MetricPrefixCacheHitRatio:
			get(o.Model).hasRatio = true
		}
	}
	added := false
	for model, p := range byModel {
		if p.hasRatio || p.hits == nil || p.queries == nil || !p.hits.HasDelta || !p.queries.HasDelta || p.queries.Delta <= 0 {
			continue
		}
		ratio := min(max(p.hits.Delta/p.queries.Delta, 0), 1)
		outs = append(outs, cumulative.Output{
			Model:  model,
			Metric: accelschema.MetricPrefixCacheHitRatio,
			Kind:   normalize.KindGauge,
			Time:   now,
			Value:  ratio,
		})
		added = true
	}
	if added {
		slices.SortStableFunc(outs, func(a, b cumulative.Output) int {
			return cmp.Or(strings.Compare(a.Model, b.Model), strings.Compare(a.Metric, b.Metric), strings.Compare(a.AttrValue, b.AttrValue))
		})
	}
	return outs
}
