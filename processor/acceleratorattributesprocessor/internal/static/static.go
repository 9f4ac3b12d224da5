// Package static reads a mapping file that says who uses which device on
// hosts without an orchestrator that can tell (Slurm, bare metal): device →
// job id, team, workload name and type. The file is YAML or CSV (by its
// extension), is rejected at startup with file:line when malformed, and is
// reloaded when it changes; a bad reload keeps the previous mapping.
//
// YAML:
//
//	devices:
//	  - device: GPU-8f3c2a5e-…       # hw.id as the receivers emit it, or a GPU index
//	    job_id: "81234"
//	    team: research
//	    workload_name: llama-pretrain
//	    workload_type: training     # training|inference|batch|interactive|unknown
//	    share: 0.5                  # optional, (0,1]; default: split equally
//	    host: gpu-a-17              # optional: the row applies only on this host
//
// CSV: a header naming the same columns in any order, then one row per line.
package static

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

// Row is one device → holder line.
type Row struct {
	Line         int
	Device       string
	JobID        string
	Team         string
	WorkloadName string
	WorkloadType string
	Share        float64 // 0 when not given
	Host         string
}

// maxFileSize keeps a runaway file from filling memory.
const maxFileSize = 16 << 20

var columns = []string{"device", "job_id", "team", "workload_name", "workload_type", "share", "host"}

// CheckName says whether path names a mapping file by its extension, without
// reading it (configuration validation).
func CheckName(path string) error {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml", ".csv":
		return nil
	}
	return fmt.Errorf("%s: unknown mapping file type %q: use .yaml, .yml or .csv", path, filepath.Ext(path))
}

// Load reads and checks a mapping file.
func Load(path string) ([]Row, error) {
	if err := CheckName(path); err != nil {
		return nil, err
	}
	data, err := readBounded(path)
	if err != nil {
		return nil, err
	}
	if strings.ToLower(filepath.Ext(path)) == ".csv" {
		return parseCSV(path, data)
	}
	return parseYAML(path, data)
}

func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > maxFileSize {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, maxFileSize)
	}
	return data, nil
}

// ParseYAML parses YAML mapping data; path only names errors.
func ParseYAML(path string, data []byte) ([]Row, error) { return parseYAML(path, data) }

// ParseCSV parses CSV mapping data; path only names errors.
func ParseCSV(path string, data []byte) ([]Row, error) { return parseCSV(path, data) }

func parseYAML(path string, data []byte) ([]Row, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(doc.Content) == 0 {
		return nil, fmt.Errorf("%s:1: empty file: want a top-level devices: list", path)
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s:%d: want a mapping with a devices: list", path, top.Line)
	}
	var list *yaml.Node
	for i := 0; i+1 < len(top.Content); i += 2 {
		k := top.Content[i]
		if k.Value != "devices" {
			return nil, fmt.Errorf("%s:%d: unknown key %q (only devices: is allowed)", path, k.Line, k.Value)
		}
		list = top.Content[i+1]
	}
	if list == nil || list.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("%s:%d: devices: must be a list", path, top.Line)
	}
	rows := make([]Row, 0, len(list.Content))
	for _, item := range list.Content {
		if item.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("%s:%d: each devices entry must be a mapping", path, item.Line)
		}
		fields := map[string]string{}
		for i := 0; i+1 < len(item.Content); i += 2 {
			k, v := item.Content[i], item.Content[i+1]
			if !isColumn(k.Value) {
				return nil, fmt.Errorf("%s:%d: unknown key %q (want one of %s)", path, k.Line, k.Value, strings.Join(columns, ", "))
			}
			if v.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("%s:%d: %s must be a single value", path, v.Line, k.Value)
			}
			fields[k.Value] = v.Value
		}
		row, err := rowFrom(fields, item.Line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, item.Line, err)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

func parseCSV(path string, data []byte) ([]Row, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.Comment = '#'
	r.TrimLeadingSpace = true
	header, err := r.Read()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s:1: empty file: want a header such as device,job_id,team,workload_name,workload_type", path)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	line, _ := r.FieldPos(0)
	for i, h := range header {
		header[i] = strings.ToLower(strings.TrimSpace(h))
		if !isColumn(header[i]) {
			return nil, fmt.Errorf("%s:%d: unknown column %q (want %s)", path, line, h, strings.Join(columns, ", "))
		}
	}
	if !contains(header, "device") {
		return nil, fmt.Errorf("%s:%d: the header has no device column", path, line)
	}
	r.FieldsPerRecord = len(header)
	var rows []Row
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		line, _ := r.FieldPos(0)
		fields := make(map[string]string, len(header))
		for i, h := range header {
			fields[h] = strings.TrimSpace(rec[i])
		}
		row, err := rowFrom(fields, line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		rows = append(rows, row)
	}
}

func rowFrom(f map[string]string, line int) (Row, error) {
	row := Row{
		Line: line, Device: f["device"], JobID: f["job_id"], Team: f["team"],
		WorkloadName: f["workload_name"], WorkloadType: strings.ToLower(f["workload_type"]), Host: f["host"],
	}
	if row.Device == "" {
		return Row{}, errors.New("device is empty")
	}
	if strings.ContainsAny(row.Device, " \t") {
		return Row{}, fmt.Errorf("device %q contains spaces", row.Device)
	}
	if row.WorkloadType != "" && !accelschema.EnumWorkloadType.Has(row.WorkloadType) {
		return Row{}, fmt.Errorf("workload_type %q is not one of training, inference, batch, interactive, unknown", f["workload_type"])
	}
	if s := f["share"]; s != "" {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || !(v > 0 && v <= 1) {
			return Row{}, fmt.Errorf("share %q is not a number in (0, 1]", s)
		}
		row.Share = v
	}
	if row.JobID == "" && row.Team == "" && row.WorkloadName == "" {
		return Row{}, fmt.Errorf("device %s has no job_id, team or workload_name: say who uses it", row.Device)
	}
	return row, nil
}

func isColumn(s string) bool { return contains(columns, s) }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// File is a mapping file that is re-read when it changes.
type File struct {
	path string

	mu      sync.Mutex
	rows    []Row
	modTime time.Time
	size    int64
}

// Open loads path; a malformed file is an error here, so the collector does
// not start with a mapping it cannot read.
func Open(path string) (*File, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("mapping file: %w", err)
	}
	rows, err := Load(path)
	if err != nil {
		return nil, err
	}
	return &File{path: path, rows: rows, modTime: fi.ModTime(), size: fi.Size()}, nil
}

// Rows returns the current mapping.
func (f *File) Rows() []Row {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.rows
}

// Reload re-reads the file if its modification time or size changed. On
// error the previous mapping stays in force.
func (f *File) Reload() (changed bool, err error) {
	fi, err := os.Stat(f.path)
	if err != nil {
		return false, fmt.Errorf("mapping file: %w; keeping the previous mapping", err)
	}
	f.mu.Lock()
	same := fi.ModTime().Equal(f.modTime) && fi.Size() == f.size
	f.mu.Unlock()
	if same {
		return false, nil
	}
	rows, err := Load(f.path)
	if err != nil {
		return false, fmt.Errorf("%w; keeping the previous mapping", err)
	}
	f.mu.Lock()
	f.rows, f.modTime, f.size = rows, fi.ModTime(), fi.Size()
	f.mu.Unlock()
	return true, nil
}
