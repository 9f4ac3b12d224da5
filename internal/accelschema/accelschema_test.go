package accelschema

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func TestMetricsDocMatchesRegistry(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "metrics.md")
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v (run `make generate`)", path, err)
	}
	if want := Markdown(); !bytes.Equal(got, want) {
		t.Fatalf("%s is out of date with internal/accelschema: run `make generate` and commit the result", path)
	}
}

func TestRegistryIsConsistent(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range Metrics {
		if seen[m.Name] {
			t.Errorf("metric %q registered twice", m.Name)
		}
		seen[m.Name] = true
		if m.Unit == "" || m.Brief == "" || len(m.Emitters) == 0 {
			t.Errorf("metric %q needs a unit, a description and an emitter", m.Name)
		}
		if m.ValueType != "int" && m.ValueType != "double" {
			t.Errorf("metric %q: value type %q is neither int nor double", m.Name, m.ValueType)
		}
		for _, a := range m.Attributes {
			def, ok := LookupAttribute(a)
			if !ok {
				t.Errorf("metric %q uses unregistered attribute %q", m.Name, a)
				continue
			}
			if def.Scope != ScopeDataPoint {
				t.Errorf("metric %q uses %q, which is a %s attribute", m.Name, a, def.Scope)
			}
		}
	}
	seenAttr := map[string]bool{}
	for _, a := range Attributes {
		if seenAttr[a.Key] {
			t.Errorf("attribute %q registered twice", a.Key)
		}
		seenAttr[a.Key] = true
		if a.Brief == "" {
			t.Errorf("attribute %q needs a description", a.Key)
		}
	}
	for _, e := range Enums() {
		vals := map[string]bool{}
		for _, v := range e.Values {
			if vals[v.Value] {
				t.Errorf("enum %s lists %q twice", e.Name, v.Value)
			}
			vals[v.Value] = true
		}
	}
}

// TestEveryConstantIsRegistered keeps the Go constants and the registry (and
// so docs/metrics.md) from drifting apart: a Metric* or Attr* constant that is
// declared but not documented fails here.
func TestEveryConstantIsRegistered(t *testing.T) {
	fset := token.NewFileSet()
	for _, file := range []string{"metrics.go", "attributes.go"} {
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok || len(vs.Values) != 1 {
				return true
			}
			lit, ok := vs.Values[0].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			name := vs.Names[0].Name
			value, _ := strconv.Unquote(lit.Value)
			switch {
			case strings.HasPrefix(name, "Metric"):
				if _, ok := LookupMetric(value); !ok {
					t.Errorf("%s = %q is not in Metrics", name, value)
				}
			case strings.HasPrefix(name, "Attr"):
				if _, ok := LookupAttribute(value); !ok {
					t.Errorf("%s = %q is not in Attributes", name, value)
				}
			case strings.HasPrefix(name, "Event"):
				if !EnumEventName.Has(value) {
					t.Errorf("%s = %q is not in EnumEventName", name, value)
				}
			}
			return true
		})
	}
}

type metadataFile struct {
	Type               string                       `yaml:"type"`
	ResourceAttributes map[string]metadataAttribute `yaml:"resource_attributes"`
	Attributes         map[string]metadataAttribute `yaml:"attributes"`
	Metrics            map[string]struct {
		Description string   `yaml:"description"`
		Unit        string   `yaml:"unit"`
		Attributes  []string `yaml:"attributes"`
	} `yaml:"metrics"`
}

type metadataAttribute struct {
	NameOverride string `yaml:"name_override"`
}

func (a metadataAttribute) wireName(key string) string {
	if a.NameOverride != "" {
		return a.NameOverride
	}
	return key
}

// TestComponentMetadataUsesRegisteredNames makes internal/accelschema the
// single source of truth for mdatagen too: every metric, unit and attribute a
// component's metadata.yaml declares must be registered here.
func TestComponentMetadataUsesRegisteredNames(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "*", "*", "metadata.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	described := map[string]map[string]string{} // metric → file → description
	for _, path := range files {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var md metadataFile
		if err := yaml.Unmarshal(raw, &md); err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		for key, a := range md.ResourceAttributes {
			name := a.wireName(key)
			if def, ok := LookupAttribute(name); !ok || def.Scope != ScopeResource {
				t.Errorf("%s: resource attribute %q is not a registered resource attribute", path, name)
			}
		}
		for name, m := range md.Metrics {
			def, ok := LookupMetric(name)
			if !ok {
				t.Errorf("%s: metric %q is not registered in internal/accelschema", path, name)
				continue
			}
			if m.Unit != def.Unit {
				t.Errorf("%s: metric %q has unit %q, the schema says %q", path, name, m.Unit, def.Unit)
			}
			if described[name] == nil {
				described[name] = map[string]string{}
			}
			described[name][path] = m.Description
			for _, key := range m.Attributes {
				wire := md.Attributes[key].wireName(key)
				if !contains(def.Attributes, wire) {
					t.Errorf("%s: metric %q carries attribute %q, which the schema does not list for it", path, name, wire)
				}
			}
		}
	}
	// A backend keeps one description per name (the Prometheus exporter
	// logs a conflict on every scrape of a gateway that receives two): a
	// metric two components declare is described as the schema describes
	// it, the details in their READMEs.
	for name, byFile := range described {
		def, _ := LookupMetric(name)
		for path, d := range byFile {
			if len(byFile) > 1 && d != def.Brief {
				t.Errorf("%s: metric %q, declared by %d components, is described %q; the schema's description is %q", path, name, len(byFile), d, def.Brief)
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestEveryMetricIsCountedSomewhere walks the registry: a metric without a
// counting rule could be emitted on a parent and its partitions alike.
func TestEveryMetricIsCountedSomewhere(t *testing.T) {
	known := map[Counting]bool{}
	for _, c := range Countings {
		known[c.Counting] = true
	}
	for _, m := range Metrics {
		if !known[m.Counted] {
			t.Errorf("metric %q has counting %q; want one of %v", m.Name, m.Counted, Countings)
		}
		server := m.Counted == CountedPerServer
		inference := len(m.Emitters) == 1 && m.Emitters[0] == EmitterInference
		if server != inference {
			t.Errorf("metric %q: counted %q but emitted by %v (server metrics come from the inference receiver, and only they)", m.Name, m.Counted, m.Emitters)
		}
	}
	for _, s := range PerPodSources {
		for _, name := range s.Metrics {
			m, ok := LookupMetric(name)
			if !ok {
				t.Errorf("per-pod source names unregistered metric %q", name)
				continue
			}
			if m.Counted != CountedPerPartition {
				t.Errorf("per-pod metric %q is counted %q; a per-pod series is partition-scoped", name, m.Counted)
			}
		}
	}
}
