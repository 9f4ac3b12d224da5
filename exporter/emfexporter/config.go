package emfexporter // import "github.com/otelcol-accel/otelcol-accel/exporter/emfexporter"

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/exporter/exporterhelper"

	"github.com/otelcol-accel/otelcol-accel/exporter/emfexporter/internal/delta"
	"github.com/otelcol-accel/otelcol-accel/exporter/emfexporter/internal/emf"
	"github.com/otelcol-accel/otelcol-accel/exporter/emfexporter/internal/logname"
)

// Outputs.
const (
	OutputCloudWatchLogs = "cloudwatch_logs"
	OutputStdout         = "stdout"
	OutputFile           = "file"
)

// Fallbacks for a point none of whose dimension sets can be filled.
const (
	FallbackAvailable = "available"
	FallbackNone      = "none"
)

// Config of the cloudwatch_emf exporter.
type Config struct {
	TimeoutConfig exporterhelper.TimeoutConfig                             `mapstructure:",squash"`
	QueueConfig   configoptional.Optional[exporterhelper.QueueBatchConfig] `mapstructure:"sending_queue"`
	RetryConfig   configretry.BackOffConfig                                `mapstructure:"retry_on_failure"`

	// Output is where events go: cloudwatch_logs, stdout or file.
	Output string `mapstructure:"output"`

	// Namespace of the CloudWatch metrics.
	Namespace string `mapstructure:"namespace"`
	// Dimensions maps short CloudWatch dimension names to the attributes
	// they are read from (first present wins).
	Dimensions []DimensionConfig `mapstructure:"dimensions"`
	// DimensionSets apply to metrics no declaration selects. A set whose
	// dimensions are not all present on a point is skipped for that point.
	DimensionSets [][]string `mapstructure:"dimension_sets"`
	// MetricDeclarations give selected metrics their own dimension sets.
	MetricDeclarations []MetricDeclaration `mapstructure:"metric_declarations"`
	// DatapointDimensions appends data point attributes to every set.
	DatapointDimensions DatapointDimensionsConfig `mapstructure:"datapoint_dimensions"`
	// FallbackDimensionSet: "available" extracts a metric none of whose sets
	// apply with the dimensions the point does have; "none" writes it as a
	// log field only.
	FallbackDimensionSet string `mapstructure:"fallback_dimension_set"`
	// ResourceAttributesAsFields writes resource attributes into each EMF
	// event, for CloudWatch Logs Insights.
	ResourceAttributesAsFields bool `mapstructure:"resource_attributes_as_fields"`
	// Units overrides the CloudWatch unit of metrics, by name.
	Units map[string]string `mapstructure:"units"`
	// HighResolutionMetrics are regular expressions of metric names stored
	// at 1-second resolution (StorageResolution 1).
	HighResolutionMetrics []string `mapstructure:"high_resolution_metrics"`
	// MaxEventBytes caps one log event; 0 means 1 MiB minus 26 bytes.
	MaxEventBytes int `mapstructure:"max_event_bytes"`
	// Cumulative configures the cumulative-to-delta conversion.
	Cumulative CumulativeConfig `mapstructure:"cumulative"`

	// Region of CloudWatch Logs; empty: AWS_REGION, shared config, then the
	// instance metadata service.
	Region string `mapstructure:"region"`
	// Endpoint overrides the CloudWatch Logs endpoint.
	Endpoint string `mapstructure:"endpoint"`
	// RoleARN is assumed with STS on top of the default credentials chain.
	RoleARN string `mapstructure:"role_arn"`
	// LogGroupName and LogStreamName may hold {attribute} placeholders,
	// resolved from resource attributes.
	LogGroupName  string `mapstructure:"log_group_name"`
	LogStreamName string `mapstructure:"log_stream_name"`
	// PlaceholderFallback stands in for a placeholder whose attribute is
	// missing.
	PlaceholderFallback string `mapstructure:"placeholder_fallback"`
	// LogRetentionDays is set on log groups the exporter creates; 0 keeps
	// events forever.
	LogRetentionDays int32 `mapstructure:"log_retention_days"`

	// File configures the file output.
	File FileConfig `mapstructure:"file"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// DimensionConfig maps a dimension name to attributes.
type DimensionConfig struct {
	Name       string   `mapstructure:"name"`
	Attributes []string `mapstructure:"attributes"`
}

// MetricDeclaration gives the metrics matching one of its selectors their
// own dimension sets.
type MetricDeclaration struct {
	MetricNameSelectors []string   `mapstructure:"metric_name_selectors"`
	DimensionSets       [][]string `mapstructure:"dimension_sets"`
}

// DatapointDimensionsConfig configures data point attributes as dimensions.
type DatapointDimensionsConfig struct {
	Enabled bool     `mapstructure:"enabled"`
	Exclude []string `mapstructure:"exclude"`
}

// CumulativeConfig configures the cumulative-to-delta conversion.
type CumulativeConfig struct {
	// FirstPoint: start_time, baseline or emit (see README).
	FirstPoint string `mapstructure:"first_point"`
	// StateTTL: a series without points for this long is forgotten.
	StateTTL time.Duration `mapstructure:"state_ttl"`
}

// FileConfig configures the file output.
type FileConfig struct {
	Path string `mapstructure:"path"`
	// MaxMegabytes rotates the file before it grows past this size; 0 only
	// appends.
	MaxMegabytes int `mapstructure:"max_megabytes"`
	// MaxBackups rotated files are kept (at least 1 when rotating).
	MaxBackups int `mapstructure:"max_backups"`
}

// retentionDays are the values CloudWatch Logs accepts for a retention
// policy.
var retentionDays = []int32{1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653}

// Validate checks the configuration; the collector refuses to start with
// the first problem found, named so that it can be fixed.
func (c *Config) Validate() error {
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }

	switch c.Output {
	case OutputCloudWatchLogs, OutputStdout:
	case OutputFile:
		if c.File.Path == "" {
			add("output is file but file::path is empty")
		}
		if c.File.MaxMegabytes < 0 || c.File.MaxBackups < 0 {
			add("file::max_megabytes and file::max_backups must not be negative")
		}
	default:
		add("output %q: want cloudwatch_logs, stdout or file", c.Output)
	}

	switch {
	case c.Namespace == "" || len(c.Namespace) > 255:
		add("namespace must be 1 to 255 characters")
	case strings.HasPrefix(c.Namespace, ":") || strings.HasPrefix(c.Namespace, "AWS/"):
		add("namespace %q: must not start with ':' or 'AWS/' (reserved for AWS services)", c.Namespace)
	}

	names := map[string]bool{}
	for i, d := range c.Dimensions {
		if err := checkDimensionName(d.Name); err != nil {
			add("dimensions[%d]: %v", i, err)
		}
		if names[d.Name] {
			add("dimensions[%d]: %q is mapped twice", i, d.Name)
		}
		names[d.Name] = true
		if len(d.Attributes) == 0 || slices.Contains(d.Attributes, "") {
			add("dimensions[%d] (%s): attributes must list at least one non-empty attribute key", i, d.Name)
		}
	}
	if err := checkSets(c.DimensionSets); err != nil {
		add("dimension_sets: %v", err)
	}
	for i, d := range c.MetricDeclarations {
		if len(d.MetricNameSelectors) == 0 {
			add("metric_declarations[%d]: metric_name_selectors is empty", i)
		}
		for _, s := range d.MetricNameSelectors {
			if _, err := regexp.Compile(s); err != nil {
				add("metric_declarations[%d]: selector %q: %v", i, s, err)
			}
		}
		if len(d.DimensionSets) == 0 {
			add("metric_declarations[%d]: dimension_sets is empty (use [[]] for metrics without dimensions)", i)
		}
		if err := checkSets(d.DimensionSets); err != nil {
			add("metric_declarations[%d].dimension_sets: %v", i, err)
		}
	}
	switch c.FallbackDimensionSet {
	case FallbackAvailable, FallbackNone:
	default:
		add("fallback_dimension_set %q: want available or none", c.FallbackDimensionSet)
	}
	for name, u := range c.Units {
		if !emf.IsCloudWatchUnit(u) {
			add("units[%s]: %q is not a CloudWatch unit (%s)", name, u, strings.Join(emf.CloudWatchUnits, ", "))
		}
	}
	for _, s := range c.HighResolutionMetrics {
		if _, err := regexp.Compile(s); err != nil {
			add("high_resolution_metrics: %q: %v", s, err)
		}
	}
	if c.MaxEventBytes != 0 && (c.MaxEventBytes < 4096 || c.MaxEventBytes > emf.DefaultMaxEventBytes) {
		add("max_event_bytes %d: want 0 (default) or 4096 to %d", c.MaxEventBytes, emf.DefaultMaxEventBytes)
	}
	switch delta.FirstPoint(c.Cumulative.FirstPoint) {
	case delta.FirstPointStartTime, delta.FirstPointBaseline, delta.FirstPointEmit:
	default:
		add("cumulative::first_point %q: want start_time, baseline or emit", c.Cumulative.FirstPoint)
	}
	if c.Cumulative.StateTTL <= 0 {
		add("cumulative::state_ttl must be positive")
	}

	if _, err := logname.Parse(c.LogGroupName, logname.Group); err != nil {
		add("log_group_name: %v", err)
	}
	if _, err := logname.Parse(c.LogStreamName, logname.Stream); err != nil {
		add("log_stream_name: %v", err)
	}
	if err := logname.ValidateFallback(c.PlaceholderFallback); err != nil {
		add("placeholder_fallback: %v", err)
	}
	if c.LogRetentionDays != 0 && !slices.Contains(retentionDays, c.LogRetentionDays) {
		add("log_retention_days %d: CloudWatch Logs accepts 0 (never expire) or one of %v", c.LogRetentionDays, retentionDays)
	}
	if c.Endpoint != "" {
		if u, err := url.Parse(c.Endpoint); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			add("endpoint %q: want an http(s) URL such as https://logs.us-east-1.amazonaws.com", c.Endpoint)
		}
	}
	if c.RoleARN != "" && !strings.HasPrefix(c.RoleARN, "arn:") {
		add("role_arn %q: want an IAM role ARN (arn:aws:iam::<account>:role/<name>)", c.RoleARN)
	}
	return errors.Join(errs...)
}

func checkDimensionName(n string) error {
	if n == "" || len(n) > emf.MaxDimensionNameBytes {
		return fmt.Errorf("dimension name %q must be 1 to %d characters", n, emf.MaxDimensionNameBytes)
	}
	if n == "_aws" {
		return errors.New(`dimension name "_aws" is reserved by EMF`)
	}
	return nil
}

func checkSets(sets [][]string) error {
	var errs []error
	for i, s := range sets {
		if len(s) > emf.MaxDimensionsPerSet {
			errs = append(errs, fmt.Errorf("set %d has %d dimensions; CloudWatch allows %d", i, len(s), emf.MaxDimensionsPerSet))
		}
		for j, n := range s {
			if err := checkDimensionName(n); err != nil {
				errs = append(errs, fmt.Errorf("set %d: %w", i, err))
			}
			if slices.Contains(s[:j], n) {
				errs = append(errs, fmt.Errorf("set %d repeats %q", i, n))
			}
		}
		for k := 0; k < i; k++ {
			if slices.Equal(sets[k], s) {
				errs = append(errs, fmt.Errorf("set %d repeats set %d %v", i, k, s))
			}
		}
	}
	return errors.Join(errs...)
}

// encoderOptions turns the configuration into the encoder's options.
func (c *Config) encoderOptions() emf.Options {
	opts := emf.Options{
		Namespace:                  c.Namespace,
		DimensionSets:              c.DimensionSets,
		DatapointDimensions:        c.DatapointDimensions.Enabled,
		ExcludeDatapointDimensions: c.DatapointDimensions.Exclude,
		FallbackToAvailable:        c.FallbackDimensionSet == FallbackAvailable,
		ResourceAttributesAsFields: c.ResourceAttributesAsFields,
		Units:                      c.Units,
		MaxEventBytes:              c.maxEventBytes(),
	}
	for _, d := range c.Dimensions {
		opts.Dimensions = append(opts.Dimensions, emf.Dimension{Name: d.Name, Attributes: d.Attributes})
	}
	for _, d := range c.MetricDeclarations {
		decl := emf.Declaration{DimensionSets: d.DimensionSets}
		for _, s := range d.MetricNameSelectors {
			decl.MetricNameSelectors = append(decl.MetricNameSelectors, regexp.MustCompile(s))
		}
		opts.Declarations = append(opts.Declarations, decl)
	}
	for _, s := range c.HighResolutionMetrics {
		opts.HighResolution = append(opts.HighResolution, regexp.MustCompile(s))
	}
	return opts
}

func (c *Config) maxEventBytes() int {
	if c.MaxEventBytes == 0 {
		return emf.DefaultMaxEventBytes
	}
	return c.MaxEventBytes
}
