package dashboards

import (
	"bytes"
	"encoding/json"
	"os"
	"path"
	"regexp"
	"slices"
	"sort"
	"testing"

	"go.yaml.in/yaml/v3"
)

// decodeStrict decodes a provisioning file, rejecting keys Grafana's
// provisioning format (apiVersion 1) does not have.
func decodeStrict(t *testing.T, file string, v any) {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

type datasourceFile struct {
	APIVersion  int `yaml:"apiVersion"`
	Datasources []struct {
		Name      string         `yaml:"name"`
		UID       string         `yaml:"uid"`
		Type      string         `yaml:"type"`
		Access    string         `yaml:"access"`
		URL       string         `yaml:"url"`
		IsDefault bool           `yaml:"isDefault"`
		Editable  bool           `yaml:"editable"`
		JSONData  map[string]any `yaml:"jsonData"`
	} `yaml:"datasources"`
}

type providerFile struct {
	APIVersion int `yaml:"apiVersion"`
	Providers  []struct {
		Name                  string `yaml:"name"`
		OrgID                 int    `yaml:"orgId"`
		Folder                string `yaml:"folder"`
		Type                  string `yaml:"type"`
		DisableDeletion       bool   `yaml:"disableDeletion"`
		AllowUIUpdates        bool   `yaml:"allowUiUpdates"`
		UpdateIntervalSeconds int    `yaml:"updateIntervalSeconds"`
		Options               struct {
			Path                      string `yaml:"path"`
			FoldersFromFilesStructure bool   `yaml:"foldersFromFilesStructure"`
		} `yaml:"options"`
	} `yaml:"providers"`
}

// The data source is the one every dashboard's DS_PROMETHEUS variable
// resolves to: a variable of type prometheus with no fixed choice takes the
// default data source of that type.
func TestProvisionedDatasourceIsWhatTheDashboardsUse(t *testing.T) {
	var f datasourceFile
	decodeStrict(t, "provisioning/datasources/otelcol-accel.yaml", &f)
	if f.APIVersion != 1 || len(f.Datasources) != 1 {
		t.Fatalf("want apiVersion 1 and one data source, got %d and %d", f.APIVersion, len(f.Datasources))
	}
	ds := f.Datasources[0]
	if !ds.IsDefault || ds.UID == "" || ds.URL == "" || ds.Access != "proxy" {
		t.Errorf("the data source must be the default, with a uid, a url and proxy access: %+v", ds)
	}
	for name, d := range loadAll(t) {
		v, ok := d.Variable("DS_PROMETHEUS")
		if !ok {
			t.Fatalf("%s: no DS_PROMETHEUS variable", name)
		}
		if string(v.Query) != `"`+ds.Type+`"` {
			t.Errorf("%s: DS_PROMETHEUS selects data sources of type %s, the provisioned one is %s", name, v.Query, ds.Type)
		}
		raw, _ := Read(name)
		var cur struct {
			Templating struct {
				List []struct {
					Name    string `json:"name"`
					Current struct {
						Value any `json:"value"`
					} `json:"current"`
				} `json:"list"`
			} `json:"templating"`
		}
		if err := json.Unmarshal(raw, &cur); err != nil {
			t.Fatal(err)
		}
		for _, l := range cur.Templating.List {
			if l.Name == "DS_PROMETHEUS" && l.Current.Value != nil && l.Current.Value != ds.UID {
				t.Errorf("%s: DS_PROMETHEUS is fixed to %v, not the provisioned uid %s", name, l.Current.Value, ds.UID)
			}
		}
	}
}

var mountFlag = regexp.MustCompile(`-v "\$PWD/([^:"]+):([^:"]+)(:ro)?"`)

// The provider loads from a directory; README.md's command mounts into it
// exactly the Grafana dashboards, and the provisioning files where Grafana
// reads them.
func TestProvisionedProviderHoldsTheDashboards(t *testing.T) {
	var f providerFile
	decodeStrict(t, "provisioning/dashboards/otelcol-accel.yaml", &f)
	if f.APIVersion != 1 || len(f.Providers) != 1 {
		t.Fatalf("want apiVersion 1 and one provider, got %d and %d", f.APIVersion, len(f.Providers))
	}
	p := f.Providers[0]
	if p.Type != "file" || !path.IsAbs(p.Options.Path) || p.Folder == "" {
		t.Fatalf("want a file provider with an absolute path and a folder: %+v", p)
	}
	readme, err := os.ReadFile("provisioning/README.md")
	if err != nil {
		t.Fatal(err)
	}
	const here = "distributions/otelcol-accel/dashboards/"
	var mounted []string
	provisioning := map[string]string{}
	for _, m := range mountFlag.FindAllStringSubmatch(string(readme), -1) {
		src, dst := m[1], m[2]
		switch {
		case path.Dir(dst) == p.Options.Path:
			if path.Base(src) != path.Base(dst) || path.Dir(src)+"/" != here {
				t.Errorf("%s is mounted as %s", src, dst)
			}
			mounted = append(mounted, path.Base(src))
		case path.Dir(dst) == "/etc/grafana/provisioning":
			provisioning[path.Base(dst)] = src
		}
	}
	sort.Strings(mounted)
	want := slices.Clone(Grafana)
	sort.Strings(want)
	if !slices.Equal(mounted, want) {
		t.Errorf("the README mounts %v into %s, want the Grafana dashboards %v", mounted, p.Options.Path, want)
	}
	for _, dir := range []string{"datasources", "dashboards"} {
		if provisioning[dir] != here+"provisioning/"+dir {
			t.Errorf("the README mounts %q at /etc/grafana/provisioning/%s", provisioning[dir], dir)
		}
	}
}
