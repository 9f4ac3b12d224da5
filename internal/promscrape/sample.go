package promscrape

// Text is what a page is read from: a string (Parse) or the bytes of a
// buffer (Reader).
type Text interface{ string | []byte }

// Label is one name="value" pair of a sample.
type Label[T Text] struct {
	Name, Value T
}

// Sample is one sample line.
type Sample[T Text] struct {
	Name   T
	Labels []Label[T] // as written: in the page's order, duplicates kept
	Value  float64    // NaN, +Inf and -Inf included

	// Timestamp is in milliseconds since the epoch, when HasTimestamp: an
	// integer as in format 0.0.4, or OpenMetrics seconds with a fraction.
	Timestamp int64

	// Line is the line's number in the page, from 1.
	Line int

	HasTimestamp bool
	// HasExemplar: an OpenMetrics exemplar followed the sample and was
	// read (Page.Exemplar, Reader.Exemplar). Only pages read as
	// OpenMetrics have them.
	HasExemplar bool
	// Type is the declared type of the sample's family (Untyped without a
	// # TYPE line) and Part says which of its series the line is.
	Type MetricType
	Part Part
	// familyLen is the length of the family's name, a prefix of Name:
	// the fields are packed so that a Page's array of samples stays small.
	familyLen uint32
}

// Family is the metric family the line belongs to: Name less a _bucket,
// _sum, _count, _created or _total suffix when a # TYPE line declared the
// family without it, else Name.
func (s *Sample[T]) Family() T { return s.Name[:s.familyLen] }

// Label returns the value of the first label called name.
func (s *Sample[T]) Label(name string) (T, bool) {
	for _, l := range s.Labels {
		if string(l.Name) == name {
			return l.Value, true
		}
	}
	var zero T
	return zero, false
}

// Exemplar is the OpenMetrics exemplar of a sample line: `# {labels}
// value [timestamp]` after the sample's value (a trace's trace_id and
// span_id, usually), on a counter's _total or a histogram's _bucket line.
type Exemplar[T Text] struct {
	Labels []Label[T] // as written
	Value  float64
	// Timestamp is in milliseconds since the epoch, when HasTimestamp
	// (OpenMetrics writes seconds with a fraction).
	Timestamp    int64
	HasTimestamp bool
}

// Label returns the value of the first exemplar label called name.
func (e *Exemplar[T]) Label(name string) (T, bool) {
	for _, l := range e.Labels {
		if string(l.Name) == name {
			return l.Value, true
		}
	}
	var zero T
	return zero, false
}

// MaxExemplarRunes bounds the label names and values of an exemplar
// together, in UTF-8 characters (OpenMetrics 1.0: MUST NOT exceed 128).
const MaxExemplarRunes = 128

// MetricType is a family's type as its # TYPE line states it.
type MetricType uint8

// Metric types. A # TYPE line naming another type (or OpenMetrics'
// "unknown") makes the family Untyped.
const (
	Untyped MetricType = iota
	Counter
	Gauge
	Histogram
	GaugeHistogram
	Summary
	Info
	StateSet
)

var typeNames = [...]string{"untyped", "counter", "gauge", "histogram", "gaugehistogram", "summary", "info", "stateset"}

func (t MetricType) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return "untyped"
}

// Part is which series of its family a sample line is.
type Part uint8

// Parts.
const (
	// PartValue is the family's value: a counter's (also its _total
	// line), a gauge's, an untyped series', a summary's quantile (with a
	// quantile label), an info's or a stateset's.
	PartValue   Part = iota
	PartBucket       // a histogram's _bucket, with an le label
	PartSum          // _sum (a gauge histogram's _gsum)
	PartCount        // _count (_gcount)
	PartCreated      // _created: when the series was reset, in seconds
)

var partNames = [...]string{"value", "bucket", "sum", "count", "created"}

func (p Part) String() string {
	if int(p) < len(partNames) {
		return partNames[p]
	}
	return "value"
}
