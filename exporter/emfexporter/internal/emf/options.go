package emf

import "regexp"

// Limits of the EMF specification and of CloudWatch that the encoder keeps by
// splitting, never by dropping.
const (
	// MaxMetricsPerEvent caps the MetricDefinitions of one event. The
	// specification caps a directive at 100; the encoder applies the cap to
	// the whole event, which keeps every directive within it as well.
	MaxMetricsPerEvent = 100
	// MaxDimensionsPerSet is the largest DimensionSet CloudWatch accepts.
	MaxDimensionsPerSet = 30
	// MaxValuesPerArray caps Values and Counts of a histogram value object.
	MaxValuesPerArray = 100
	// MaxDimensionValueBytes caps a dimension value (the specification says
	// 1,024 characters; bytes are never more than characters).
	MaxDimensionValueBytes = 1024
	// MaxDimensionNameBytes caps a dimension key.
	MaxDimensionNameBytes = 250
	// MaxMetricNameBytes is CloudWatch's limit on a metric name.
	MaxMetricNameBytes = 255
	// PerEventOverhead is what PutLogEvents adds to each message when it
	// measures a batch.
	PerEventOverhead = 26
	// MaxBatchBytes is the PutLogEvents batch limit, overhead included.
	MaxBatchBytes = 1 << 20
	// DefaultMaxEventBytes is the largest message that still fits a batch of
	// its own: 1 MiB minus the per-event overhead.
	DefaultMaxEventBytes = MaxBatchBytes - PerEventOverhead
)

// Dimension names a CloudWatch dimension and the attributes it is read from,
// first present (and non-empty) wins; data point attributes are looked at
// before resource attributes.
type Dimension struct {
	Name       string
	Attributes []string
}

// Declaration gives the metrics whose names match one of its selectors their
// own dimension sets instead of the default ones.
type Declaration struct {
	MetricNameSelectors []*regexp.Regexp
	DimensionSets       [][]string
}

// Options configure an Encoder.
type Options struct {
	Namespace string
	// Dimensions maps short CloudWatch dimension names to attributes. A name
	// used in a dimension set that is not listed here is an attribute key.
	Dimensions []Dimension
	// DimensionSets apply to every metric no declaration matches.
	DimensionSets [][]string
	Declarations  []Declaration
	// DatapointDimensions appends the data point attributes of each point
	// (minus ExcludeDatapointDimensions) to each of its dimension sets.
	DatapointDimensions        bool
	ExcludeDatapointDimensions []string
	// FallbackToAvailable: when none of a metric's dimension sets can be
	// filled for a point, extract it with the configured dimensions the point
	// does have (and its data point attributes); when false it is written as
	// a log field only.
	FallbackToAvailable bool
	// ResourceAttributesAsFields writes every resource attribute as a root
	// member, for CloudWatch Logs Insights.
	ResourceAttributesAsFields bool
	// Units overrides the CloudWatch unit of a metric, by metric name.
	Units map[string]string
	// HighResolution selects metrics stored at 1-second resolution.
	HighResolution []*regexp.Regexp
	// MaxEventBytes caps the size of one event; 0 means DefaultMaxEventBytes.
	MaxEventBytes int
}
