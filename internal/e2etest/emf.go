package e2etest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// EMFIndex records which metrics an EMF JSON-lines file (the cloudwatch_emf
// exporter's file output) declares under which namespace and dimension
// sets — what CloudWatch would extract from it. Update reads only what was
// appended since the last call, so a test can follow a growing file.
type EMFIndex struct {
	path   string
	offset int64
	line   int
	// namespace → metric → dimension set key (sorted, comma-joined)
	sets map[string]map[string]map[string]bool
}

// NewEMFIndex follows the file at path (which may not exist yet).
func NewEMFIndex(path string) *EMFIndex {
	return &EMFIndex{path: path, sets: map[string]map[string]map[string]bool{}}
}

// Update indexes the complete lines appended since the last call. A line
// that is not an EMF event is an error naming the line.
func (x *EMFIndex) Update() error {
	f, err := os.Open(x.path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Seek(x.offset, io.SeekStart); err != nil {
		return err
	}
	r := bufio.NewReaderSize(f, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if err == io.EOF {
			return nil // a partial last line waits for the next call
		}
		if err != nil {
			return err
		}
		x.offset += int64(len(line))
		x.line++
		if err := x.index(bytes.TrimSpace(line)); err != nil {
			return fmt.Errorf("%s line %d: %w", x.path, x.line, err)
		}
	}
}

func (x *EMFIndex) index(line []byte) error {
	var event struct {
		AWS *struct {
			CloudWatchMetrics []struct {
				Namespace  string     `json:"Namespace"`
				Dimensions [][]string `json:"Dimensions"`
				Metrics    []struct {
					Name string `json:"Name"`
				} `json:"Metrics"`
			} `json:"CloudWatchMetrics"`
		} `json:"_aws"`
	}
	if err := json.Unmarshal(line, &event); err != nil {
		return err
	}
	if event.AWS == nil {
		return fmt.Errorf("no _aws member: not an EMF event")
	}
	for _, d := range event.AWS.CloudWatchMetrics {
		byMetric := x.sets[d.Namespace]
		if byMetric == nil {
			byMetric = map[string]map[string]bool{}
			x.sets[d.Namespace] = byMetric
		}
		for _, m := range d.Metrics {
			keys := byMetric[m.Name]
			if keys == nil {
				keys = map[string]bool{}
				byMetric[m.Name] = keys
			}
			for _, set := range d.Dimensions {
				keys[setKey(set)] = true
			}
		}
	}
	return nil
}

// Has reports whether metric was declared in namespace under exactly the
// dimension set dims (in any order).
func (x *EMFIndex) Has(namespace, metric string, dims []string) bool {
	return x.sets[namespace][metric][setKey(dims)]
}

// Sets lists the dimension sets metric was declared under in namespace.
func (x *EMFIndex) Sets(namespace, metric string) []string {
	var out []string
	for k := range x.sets[namespace][metric] {
		out = append(out, "["+k+"]")
	}
	slices.Sort(out)
	return out
}

// Lines is how many events have been indexed.
func (x *EMFIndex) Lines() int { return x.line }

func setKey(dims []string) string {
	s := slices.Clone(dims)
	slices.Sort(s)
	return strings.Join(s, ",")
}
