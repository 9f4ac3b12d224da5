package pricing

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Error is a problem at one place in a pricing file.
type Error struct {
	File string
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// maxErrors bounds how many problems one file reports, so a file in the
// wrong format gives a readable message rather than one line per row.
const maxErrors = 10

type errorList struct {
	errs    []error
	dropped int
}

func (l *errorList) add(file string, line int, format string, args ...any) {
	if len(l.errs) >= maxErrors {
		l.dropped++
		return
	}
	l.errs = append(l.errs, &Error{File: file, Line: line, Msg: fmt.Sprintf(format, args...)})
}

func (l *errorList) err() error {
	if l.dropped > 0 {
		l.errs = append(l.errs, fmt.Errorf("… and %d more problems", l.dropped))
	}
	return errors.Join(l.errs...)
}

// Parse reads a pricing file, choosing the format from the file name: .yaml
// or .yml is YAML, anything else CSV.
func Parse(name string, data []byte) ([]parsedRow, error) {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml":
		return ParseYAML(name, data)
	default:
		return ParseCSV(name, bytes.NewReader(data))
	}
}

// ParseCSV reads a CSV pricing table: a header naming columns from Columns
// (in any order; instance_type required), then one row per line. Lines
// starting with # are comments.
func ParseCSV(name string, r io.Reader) ([]parsedRow, error) {
	cr := csv.NewReader(r)
	cr.Comment = '#'
	cr.FieldsPerRecord = -1 // checked below, with a better message
	cr.TrimLeadingSpace = true

	var errs errorList
	header, err := cr.Read()
	if err == io.EOF {
		return nil, &Error{File: name, Msg: "empty file: want a header line naming the columns (" + strings.Join(Columns, ",") + ")"}
	}
	if err != nil {
		return nil, csvError(name, err)
	}
	headerLine, _ := cr.FieldPos(0)
	seen := map[string]bool{}
	hasType := false
	for i, h := range header {
		h = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))
		header[i] = h
		switch {
		case !knownColumn(h):
			errs.add(name, headerLine, "unknown column %q (known columns: %s)", h, strings.Join(Columns, ", "))
		case seen[h]:
			errs.add(name, headerLine, "column %q appears twice", h)
		}
		seen[h] = true
		hasType = hasType || h == "instance_type"
	}
	if !hasType {
		errs.add(name, headerLine, "the header has no instance_type column")
	}
	if err := errs.err(); err != nil {
		return nil, err
	}

	var rows []parsedRow
	for {
		record, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			errs.add(name, csvLine(err), "%v", unwrapCSV(err))
			// encoding/csv cannot resynchronise after a quoting error.
			var pe *csv.ParseError
			if errors.As(err, &pe) && !errors.Is(pe.Err, csv.ErrFieldCount) {
				break
			}
			continue
		}
		line, _ := cr.FieldPos(0)
		if len(record) != len(header) {
			errs.add(name, line, "%d fields, the header has %d (%s)", len(record), len(header), strings.Join(header, ","))
			continue
		}
		p := parsedRow{file: name, line: line}
		ok := true
		for i, cell := range record {
			if err := p.setColumn(header[i], cell); err != nil {
				errs.add(name, line, "%v", err)
				ok = false
			}
		}
		if ok && p.InstanceType == "" {
			errs.add(name, line, "instance_type is empty")
			ok = false
		}
		if ok {
			rows = append(rows, p)
		}
	}
	return rows, errs.err()
}

func csvError(name string, err error) error {
	return &Error{File: name, Line: csvLine(err), Msg: unwrapCSV(err).Error()}
}

func csvLine(err error) int {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return pe.Line
	}
	return 0
}

func unwrapCSV(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// ParseYAML reads a YAML pricing table:
//
//	prices:
//	  - instance_type: p5.48xlarge
//	    region: eu-west-1
//	    price_per_hour: 66.5
//
// Keys are the CSV column names; unknown keys are errors.
func ParseYAML(name string, data []byte) ([]parsedRow, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, &Error{File: name, Line: yamlLine(err), Msg: err.Error()}
	}
	if len(doc.Content) == 0 {
		return nil, &Error{File: name, Msg: "empty file: want a top-level `prices:` list"}
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		return nil, &Error{File: name, Line: top.Line, Msg: "want a mapping with a `prices:` list at the top level"}
	}
	var errs errorList
	var list *yaml.Node
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], top.Content[i+1]
		if k.Value != "prices" {
			errs.add(name, k.Line, "unknown key %q at the top level (want `prices:`)", k.Value)
			continue
		}
		list = v
	}
	if list == nil {
		errs.add(name, top.Line, "no `prices:` list")
		return nil, errs.err()
	}
	if list.Kind != yaml.SequenceNode {
		errs.add(name, list.Line, "`prices` must be a list of rows")
		return nil, errs.err()
	}
	var rows []parsedRow
	for _, item := range list.Content {
		if item.Kind != yaml.MappingNode {
			errs.add(name, item.Line, "a price row must be a mapping of column: value")
			continue
		}
		p := parsedRow{file: name, line: item.Line}
		ok := true
		for i := 0; i+1 < len(item.Content); i += 2 {
			k, v := item.Content[i], item.Content[i+1]
			if v.Kind != yaml.ScalarNode {
				errs.add(name, v.Line, "%s must be a single value", k.Value)
				ok = false
				continue
			}
			if err := p.setColumn(strings.ToLower(k.Value), v.Value); err != nil {
				errs.add(name, k.Line, "%v", err)
				ok = false
			}
		}
		if ok && p.InstanceType == "" {
			errs.add(name, item.Line, "instance_type is missing")
			ok = false
		}
		if ok {
			rows = append(rows, p)
		}
	}
	return rows, errs.err()
}

// yamlLine digs the line number out of a yaml.v3 syntax error ("yaml: line
// 7: …"), which has no structured form.
func yamlLine(err error) int {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		return 0
	}
	msg := err.Error()
	if i := strings.Index(msg, "line "); i >= 0 {
		n := 0
		for j, c := range msg[i+5:] {
			if c < '0' || c > '9' || j >= 9 {
				break
			}
			n = n*10 + int(c-'0')
		}
		return n
	}
	return 0
}
