// Package acceleratorcostprocessor implements the accelerator_cost processor:
// it prices every accelerator device or partition resource from a price
// table, accrues its cost and the part of that cost wasted (by reason) from
// the timestamps of its data points, and raises findings — rightsizing,
// training efficiency, inference under capacity, unhealthy capacity — as log
// records with evidence, a recommended action and an estimated monthly
// saving. One instance serves both the metrics and the logs pipeline under
// one component ID: metrics gain cost, health events on the logs side mark
// devices unavailable, and findings leave through the logs pipeline.
// docs/cost-model.md writes down every formula.
package acceleratorcostprocessor

//go:generate ../../bin/mdatagen metadata.yaml
