// Package emfvalidate checks CloudWatch Embedded Metric Format documents
// against the specification, independently of the encoder that wrote them:
// the fake CloudWatch Logs server runs it on every event it receives, and the
// encoder's tests and fuzz target run it on everything the encoder produces.
//
// Besides the specification's rules it checks what this project promises on
// top of them: no dimension with an empty value, at most 100 metric
// definitions per event, and histogram value objects whose Count, Min and
// Max agree with their Values and Counts.
package emfvalidate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"unicode/utf8"
)

// Limits of the specification (current version).
const (
	MaxEventBytes        = 1<<20 - 26
	MaxNamespaceChars    = 1024
	MaxDimensionsPerSet  = 30
	MaxDimensionKeyChars = 250
	MaxDimensionValChars = 1024
	MaxMetricsPerDirect  = 100
	MaxMetricNameChars   = 1024
	MaxValuesPerArray    = 100
)

var validUnits = map[string]bool{}

func init() {
	for _, u := range []string{"Seconds", "Microseconds", "Milliseconds", "Bytes", "Kilobytes", "Megabytes",
		"Gigabytes", "Terabytes", "Bits", "Kilobits", "Megabits", "Gigabits", "Terabits", "Percent", "Count",
		"Bytes/Second", "Kilobytes/Second", "Megabytes/Second", "Gigabytes/Second", "Terabytes/Second",
		"Bits/Second", "Kilobits/Second", "Megabits/Second", "Gigabits/Second", "Terabits/Second",
		"Count/Second", "None"} {
		validUnits[u] = true
	}
}

// Document is a parsed EMF event: its root members in order, and the
// metric values it defines, keyed by directive and metric name.
type Document struct {
	Timestamp int64
	Root      map[string]json.RawMessage
	Keys      []string
	Metrics   []MetricRef
}

// MetricRef is one MetricDefinition of a document with the dimension sets of
// its directive.
type MetricRef struct {
	Namespace  string
	Name       string
	Unit       string
	Dimensions [][]string
	Value      json.RawMessage
}

// Event validates one log event message. It returns the parsed document and
// every rule the message breaks (joined), or nil when it is valid EMF.
func Event(msg []byte, maxBytes int) (*Document, error) {
	var errs []error
	fail := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if maxBytes <= 0 {
		maxBytes = MaxEventBytes
	}
	if len(msg) > maxBytes {
		fail("event is %d bytes, more than %d", len(msg), maxBytes)
	}
	if !utf8.Valid(msg) {
		fail("event is not valid UTF-8")
	}
	doc, err := parseRoot(msg)
	if err != nil {
		return nil, errors.Join(append(errs, err)...)
	}
	rawAWS, ok := doc.Root["_aws"]
	if !ok {
		return doc, errors.Join(append(errs, errors.New("root has no _aws member"))...)
	}
	var aws struct {
		Timestamp         *json.Number      `json:"Timestamp"`
		CloudWatchMetrics []json.RawMessage `json:"CloudWatchMetrics"`
	}
	if err := strictUnmarshal(rawAWS, &aws); err != nil {
		return doc, errors.Join(append(errs, fmt.Errorf("_aws: %w", err))...)
	}
	if aws.Timestamp == nil {
		fail("_aws.Timestamp is missing")
	} else if ts, err := aws.Timestamp.Int64(); err != nil || ts < 0 {
		fail("_aws.Timestamp %q is not a non-negative integer of milliseconds", aws.Timestamp.String())
	} else {
		doc.Timestamp = ts
	}
	if aws.CloudWatchMetrics == nil {
		fail("_aws.CloudWatchMetrics is missing or not an array")
	}
	total := 0
	for di, rawDir := range aws.CloudWatchMetrics {
		var dir struct {
			Namespace  *string           `json:"Namespace"`
			Dimensions [][]string        `json:"Dimensions"`
			Metrics    []json.RawMessage `json:"Metrics"`
		}
		if err := strictUnmarshal(rawDir, &dir); err != nil {
			fail("directive %d: %v", di, err)
			continue
		}
		if dir.Namespace == nil || *dir.Namespace == "" || utf8.RuneCountInString(*dir.Namespace) > MaxNamespaceChars {
			fail("directive %d: Namespace must be a string of 1 to %d characters", di, MaxNamespaceChars)
		}
		if len(dir.Dimensions) == 0 {
			fail("directive %d: Dimensions must hold at least one dimension set", di)
		}
		for si, set := range dir.Dimensions {
			if len(set) > MaxDimensionsPerSet {
				fail("directive %d: dimension set %d has %d keys, more than %d", di, si, len(set), MaxDimensionsPerSet)
			}
			seen := map[string]bool{}
			for _, key := range set {
				if seen[key] {
					fail("directive %d: dimension set %d repeats %q", di, si, key)
				}
				seen[key] = true
				if key == "" || utf8.RuneCountInString(key) > MaxDimensionKeyChars {
					fail("directive %d: dimension key %q must be 1 to %d characters", di, key, MaxDimensionKeyChars)
				}
				raw, ok := doc.Root[key]
				if !ok {
					fail("directive %d: dimension %q has no root member", di, key)
					continue
				}
				var v string
				if err := json.Unmarshal(raw, &v); err != nil {
					fail("directive %d: dimension %q is not a string: %s", di, key, raw)
					continue
				}
				if v == "" || utf8.RuneCountInString(v) > MaxDimensionValChars {
					fail("directive %d: dimension %q has a value of %d characters (want 1 to %d)", di, key, utf8.RuneCountInString(v), MaxDimensionValChars)
				}
			}
		}
		if dir.Metrics == nil {
			fail("directive %d: Metrics is missing", di)
		}
		if len(dir.Metrics) > MaxMetricsPerDirect {
			fail("directive %d: %d metrics, more than %d", di, len(dir.Metrics), MaxMetricsPerDirect)
		}
		total += len(dir.Metrics)
		names := map[string]bool{}
		for mi, rawDef := range dir.Metrics {
			var def struct {
				Name              *string      `json:"Name"`
				Unit              *string      `json:"Unit"`
				StorageResolution *json.Number `json:"StorageResolution"`
			}
			if err := strictUnmarshal(rawDef, &def); err != nil {
				fail("directive %d metric %d: %v", di, mi, err)
				continue
			}
			if def.Name == nil || *def.Name == "" || utf8.RuneCountInString(*def.Name) > MaxMetricNameChars {
				fail("directive %d metric %d: Name must be a string of 1 to %d characters", di, mi, MaxMetricNameChars)
				continue
			}
			name := *def.Name
			if names[name] {
				fail("directive %d: metric %q defined twice", di, name)
			}
			names[name] = true
			unit := "None"
			if def.Unit != nil {
				unit = *def.Unit
				if !validUnits[unit] {
					fail("metric %q: unit %q is not a CloudWatch unit", name, unit)
				}
			}
			if def.StorageResolution != nil {
				if r := def.StorageResolution.String(); r != "1" && r != "60" {
					fail("metric %q: StorageResolution %s is neither 1 nor 60", name, r)
				}
			}
			raw, ok := doc.Root[name]
			if !ok {
				fail("metric %q has no root member", name)
				continue
			}
			if err := checkValue(raw); err != nil {
				fail("metric %q: %v", name, err)
			}
			for _, set := range dir.Dimensions {
				for _, key := range set {
					if key == name {
						fail("metric %q is also a dimension", name)
					}
				}
			}
			ns := ""
			if dir.Namespace != nil {
				ns = *dir.Namespace
			}
			doc.Metrics = append(doc.Metrics, MetricRef{Namespace: ns, Name: name, Unit: unit, Dimensions: dir.Dimensions, Value: raw})
		}
	}
	if total > MaxMetricsPerDirect {
		fail("event defines %d metrics, more than %d", total, MaxMetricsPerDirect)
	}
	return doc, errors.Join(errs...)
}

// parseRoot reads the root object, rejecting anything before or after it and
// repeated keys (which JSON parsers resolve differently).
func parseRoot(msg []byte) (*Document, error) {
	dec := json.NewDecoder(bytes.NewReader(msg))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("root is not a JSON object")
	}
	doc := &Document{Root: map[string]json.RawMessage{}}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("root: %w", err)
		}
		key, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("root: expected a key, got %v", tok)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("root member %q: %w", key, err)
		}
		if _, dup := doc.Root[key]; dup {
			return nil, fmt.Errorf("root member %q appears twice", key)
		}
		doc.Root[key] = raw
		doc.Keys = append(doc.Keys, key)
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("root: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("something follows the root object")
	}
	return doc, nil
}

func strictUnmarshal(raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return dec.Decode(v)
}

// checkValue accepts a number, an array of at most 100 numbers, a histogram
// value object or a statistic set.
func checkValue(raw json.RawMessage) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return errors.New("empty value")
	}
	switch raw[0] {
	case '[':
		var arr []json.Number
		if bytes.Contains(raw, []byte(`"`)) {
			return errors.New("value array holds strings")
		}
		if err := strictUnmarshal(raw, &arr); err != nil {
			return fmt.Errorf("value array: %w", err)
		}
		if len(arr) == 0 || len(arr) > MaxValuesPerArray {
			return fmt.Errorf("value array has %d numbers (want 1 to %d)", len(arr), MaxValuesPerArray)
		}
		for _, n := range arr {
			if _, err := number(n); err != nil {
				return err
			}
		}
		return nil
	case '{':
		return checkDistribution(raw)
	case '"':
		return fmt.Errorf("value is a string, not a number: %s", raw)
	default:
		var n json.Number
		if err := strictUnmarshal(raw, &n); err != nil {
			return fmt.Errorf("value is neither a number, an array nor an object: %s", raw)
		}
		_, err := number(n)
		return err
	}
}

func checkDistribution(raw json.RawMessage) error {
	var obj map[string]json.RawMessage
	if err := strictUnmarshal(raw, &obj); err != nil {
		return err
	}
	get := func(k string) (float64, error) {
		r, ok := obj[k]
		if !ok {
			return 0, fmt.Errorf("value object has no %s", k)
		}
		var n json.Number
		if err := strictUnmarshal(r, &n); err != nil || bytes.HasPrefix(bytes.TrimSpace(r), []byte(`"`)) {
			return 0, fmt.Errorf("%s is not a number", k)
		}
		return number(n)
	}
	var errs []error
	stats := map[string]float64{}
	for _, k := range []string{"Max", "Min", "Count", "Sum"} {
		v, err := get(k)
		if err != nil {
			errs = append(errs, err)
		}
		stats[k] = v
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if stats["Min"] > stats["Max"] {
		return fmt.Errorf("value object has Min %v greater than Max %v", stats["Min"], stats["Max"])
	}
	if stats["Count"] <= 0 {
		return fmt.Errorf("value object has Count %v (want > 0)", stats["Count"])
	}
	_, hasV := obj["Values"]
	_, hasC := obj["Counts"]
	if !hasV && !hasC {
		return nil // statistic set
	}
	var values, counts []json.Number
	if bytes.Contains(obj["Values"], []byte(`"`)) || bytes.Contains(obj["Counts"], []byte(`"`)) {
		return errors.New("value object's Values and Counts must hold numbers, not strings")
	}
	if err := strictUnmarshal(obj["Values"], &values); err != nil {
		return fmt.Errorf("value object's Values: %w", err)
	}
	if err := strictUnmarshal(obj["Counts"], &counts); err != nil {
		return fmt.Errorf("value object's Counts: %w", err)
	}
	if len(values) == 0 || len(values) > MaxValuesPerArray {
		return fmt.Errorf("value object has %d Values (want 1 to %d)", len(values), MaxValuesPerArray)
	}
	if len(counts) != len(values) {
		return fmt.Errorf("value object has %d Counts for %d Values", len(counts), len(values))
	}
	seen := map[float64]bool{}
	total := 0.0
	for i := range values {
		v, err := number(values[i])
		if err != nil {
			return err
		}
		c, err := number(counts[i])
		if err != nil {
			return err
		}
		if seen[v] {
			return fmt.Errorf("value %v listed twice", v)
		}
		seen[v] = true
		if c <= 0 {
			return fmt.Errorf("count %v for value %v (want > 0)", c, v)
		}
		if v < stats["Min"] || v > stats["Max"] {
			return fmt.Errorf("value %v outside [Min %v, Max %v]", v, stats["Min"], stats["Max"])
		}
		total += c
	}
	if math.Abs(total-stats["Count"]) > 1e-9*math.Max(1, total) {
		return fmt.Errorf("value object's Count %v is not the sum of its Counts (%v)", stats["Count"], total)
	}
	return nil
}

var maxMagnitude = math.Ldexp(1, 360)

func number(n json.Number) (float64, error) {
	f, err := n.Float64()
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%q is not a finite number", n.String())
	}
	if f > maxMagnitude || f < -maxMagnitude {
		return 0, fmt.Errorf("%v is outside ±2^360", f)
	}
	return f, nil
}
