package scenario

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Error is one problem in a scenario file.
type Error struct {
	File string
	Line int
	Path string
	Msg  string
}

func (e *Error) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s: %s", e.File, e.Line, e.Path, e.Msg)
}

// Errors is every problem found, ordered by line.
type Errors []*Error

func (es Errors) Error() string {
	msgs := make([]string, len(es))
	for i, e := range es {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "\n")
}

// maxErrors bounds the report: after that many, the rest is noise.
const maxErrors = 50

// positions maps a field path ("nodes[1].gpus.model") to its line.
type positions map[string]int

// line returns the line of path, or of its closest recorded parent.
func (p positions) line(path string) int {
	for {
		if l, ok := p[path]; ok {
			return l
		}
		i := strings.LastIndexAny(path, ".[")
		if i <= 0 {
			return p[""]
		}
		path = path[:i]
	}
}

// Load reads and validates a scenario file.
func Load(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read scenario: %w", err)
	}
	return Parse(filepath.Base(path), data)
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// Parse decodes and validates a scenario; name is used in messages.
func Parse(name string, data []byte) (*Scenario, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, Errors{{File: name, Line: 1, Msg: "empty scenario (want at least `nodes:`)"}}
		}
		return nil, syntaxError(name, data, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, Errors{{File: name, Line: extra.Line, Msg: "a scenario is one YAML document; found a second one (remove the `---`)"}}
	} else if !errors.Is(err, io.EOF) {
		return nil, syntaxError(name, data, err)
	}
	d := &decoder{file: name, pos: positions{"": 1}}
	s := &Scenario{File: name}
	d.decode(&doc, reflect.ValueOf(s).Elem(), "")
	if len(d.errs) > 0 {
		return nil, d.sorted()
	}
	s.pos = d.pos
	v := &validator{s: s, errs: d.errs}
	v.run()
	if len(v.errs) > 0 {
		d.errs = v.errs
		return nil, d.sorted()
	}
	return s, nil
}

// syntaxError positions a YAML syntax error. yaml.v3 reports the line where
// the enclosing construct started, or no line at all ("mapping values are not
// allowed in this context"), so the line is found as the first prefix of
// the document that fails with the same message.
func syntaxError(name string, data []byte, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 1
	if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	lines := strings.SplitAfter(string(data), "\n")
	if len(lines) <= maxScanLines {
		var prefix strings.Builder
		for k, l := range lines {
			prefix.WriteString(l)
			var n yaml.Node
			perr := yaml.NewDecoder(strings.NewReader(prefix.String())).Decode(&n)
			if perr != nil && !errors.Is(perr, io.EOF) && strings.HasSuffix(perr.Error(), msg) {
				line = k + 1
				break
			}
		}
	}
	return Errors{{File: name, Line: line, Msg: "YAML syntax: " + msg}}
}

// maxScanLines bounds the search for a syntax error's line.
const maxScanLines = 5000

type decoder struct {
	file string
	pos  positions
	errs Errors
}

func (d *decoder) errorf(n *yaml.Node, path, format string, args ...any) {
	if len(d.errs) >= maxErrors {
		return
	}
	d.errs = append(d.errs, &Error{File: d.file, Line: n.Line, Path: path, Msg: fmt.Sprintf(format, args...)})
}

func (d *decoder) sorted() Errors {
	sort.SliceStable(d.errs, func(i, j int) bool { return d.errs[i].Line < d.errs[j].Line })
	return d.errs
}

var durationType = reflect.TypeOf(time.Duration(0))

// decode fills v from n, recording the line of every path it visits.
func (d *decoder) decode(n *yaml.Node, v reflect.Value, path string) {
	for n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	d.pos[path] = n.Line
	if isNull(n) {
		return // absent: keep the zero value, defaults apply later
	}
	switch {
	case v.Type() == durationType:
		d.duration(n, v, path)
	case v.Kind() == reflect.Pointer:
		elem := reflect.New(v.Type().Elem())
		d.decode(n, elem.Elem(), path)
		v.Set(elem)
	case v.Kind() == reflect.Struct:
		d.structure(n, v, path)
	case v.Kind() == reflect.Slice:
		d.sequence(n, v, path)
	case v.Kind() == reflect.Map:
		d.stringMap(n, v, path)
	default:
		d.scalar(n, v, path)
	}
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

func (d *decoder) structure(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.errorf(n, path, "want a mapping of fields, got %s", describe(n))
		return
	}
	fields := map[string]int{}
	var names []string
	for i := 0; i < v.NumField(); i++ {
		tag := v.Type().Field(i).Tag.Get("yaml")
		if tag == "" || tag == "-" {
			continue
		}
		fields[tag] = i
		names = append(names, tag)
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		key := k.Value
		fpath := joinPath(path, key)
		if k.Kind != yaml.ScalarNode || k.Tag == "!!merge" {
			d.errorf(k, path, "unsupported key %s (anchors may be used as values, not merged with <<)", describe(k))
			continue
		}
		if seen[key] {
			d.errorf(k, fpath, "field given twice")
			continue
		}
		seen[key] = true
		idx, ok := fields[key]
		if !ok {
			d.errorf(k, fpath, "unknown field %q (want one of %s)", key, strings.Join(names, ", "))
			continue
		}
		d.decode(val, v.Field(idx), fpath)
		d.pos[fpath] = k.Line
	}
}

func (d *decoder) sequence(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.SequenceNode {
		d.errorf(n, path, "want a list, got %s", describe(n))
		return
	}
	s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, item := range n.Content {
		ipath := fmt.Sprintf("%s[%d]", path, i)
		if isNull(item) || (item.Kind == yaml.AliasNode && item.Alias != nil && isNull(item.Alias)) {
			d.errorf(item, ipath, "empty list item (remove the lone '-' or give it a value)")
			continue
		}
		d.decode(item, s.Index(i), ipath)
	}
	v.Set(s)
}

func (d *decoder) stringMap(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.errorf(n, path, "want a mapping, got %s", describe(n))
		return
	}
	m := reflect.MakeMapWithSize(v.Type(), len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if val.Kind == yaml.AliasNode {
			val = val.Alias
		}
		fpath := joinPath(path, k.Value)
		d.pos[fpath] = k.Line
		if m.MapIndex(reflect.ValueOf(k.Value)).IsValid() {
			d.errorf(k, fpath, "key given twice")
			continue
		}
		if val.Kind != yaml.ScalarNode || val.Tag != "!!str" {
			d.errorf(val, fpath, "want a string, got %s (quote it)", describe(val))
			continue
		}
		m.SetMapIndex(reflect.ValueOf(k.Value), reflect.ValueOf(val.Value))
	}
	v.Set(m)
}

func (d *decoder) scalar(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.ScalarNode {
		d.errorf(n, path, "want a %s, got %s", kindName(v.Kind()), describe(n))
		return
	}
	switch v.Kind() {
	case reflect.String:
		if n.Tag != "!!str" {
			d.errorf(n, path, "want a string, got %s (quote it)", describe(n))
			return
		}
		v.SetString(n.Value)
	case reflect.Int, reflect.Int64:
		if n.Tag != "!!int" {
			d.errorf(n, path, "want an integer, got %s", describe(n))
			return
		}
		i, err := strconv.ParseInt(n.Value, 0, 64)
		if err != nil {
			d.errorf(n, path, "want an integer, got %q", n.Value)
			return
		}
		v.SetInt(i)
	case reflect.Float64:
		if n.Tag != "!!int" && n.Tag != "!!float" {
			d.errorf(n, path, "want a number, got %s", describe(n))
			return
		}
		f, err := strconv.ParseFloat(n.Value, 64)
		if err != nil {
			d.errorf(n, path, "want a number, got %q", n.Value)
			return
		}
		v.SetFloat(f)
	case reflect.Bool:
		if n.Tag != "!!bool" {
			d.errorf(n, path, "want true or false, got %s", describe(n))
			return
		}
		v.SetBool(n.Value == "true" || n.Value == "True" || n.Value == "TRUE")
	default:
		d.errorf(n, path, "unsupported field type %s", v.Type())
	}
}

func (d *decoder) duration(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		d.errorf(n, path, "want a duration such as \"20m\" or \"1h30m\", got %s", describe(n))
		return
	}
	dur, err := time.ParseDuration(n.Value)
	if err != nil {
		d.errorf(n, path, "want a duration such as \"20m\" or \"1h30m\", got %q", n.Value)
		return
	}
	v.SetInt(int64(dur))
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!str":
			return fmt.Sprintf("the string %q", n.Value)
		case "!!int":
			return "the integer " + n.Value
		case "!!float":
			return "the number " + n.Value
		case "!!bool":
			return "the boolean " + n.Value
		}
		return fmt.Sprintf("%q", n.Value)
	}
	return "an unsupported node"
}

func kindName(k reflect.Kind) string {
	switch k {
	case reflect.String:
		return "string"
	case reflect.Int, reflect.Int64:
		return "integer"
	case reflect.Float64:
		return "number"
	case reflect.Bool:
		return "boolean"
	}
	return k.String()
}
