package pricing

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every malformed table is rejected with the file and line of the problem.
func TestMalformedTablesNameFileAndLine(t *testing.T) {
	tests := []struct {
		name, file, text string
		want             string
	}{
		{"unknown column", "a.csv", "instance_type,price_per_hour,colour\np5.48xlarge,1,red\n", `a.csv:1: unknown column "colour"`},
		{"duplicate column", "a.csv", "instance_type,region,region\n", `a.csv:1: column "region" appears twice`},
		{"no instance_type column", "a.csv", "region,price_per_hour\nus-east-1,1\n", "a.csv:1: the header has no instance_type column"},
		{"too few fields", "a.csv", "instance_type,region,price_per_hour,accelerator_count\n\nx.large,us-east-1,3,1\ny.large,us-east-1\n", "a.csv:4: 2 fields, the header has 4"},
		{"too many fields", "a.csv", "instance_type,price_per_hour,accelerator_count\nx.large,3,1,9\n", "a.csv:2: 4 fields, the header has 3"},
		{"negative price", "a.csv", "instance_type,price_per_hour,accelerator_count\n# comment\nx.large,-3,1\n", `a.csv:3: price_per_hour "-3" is negative`},
		{"price not a number", "a.csv", "instance_type,price_per_hour,accelerator_count\nx.large,3 USD,1\n", `a.csv:2: price_per_hour "3 USD" is not a number`},
		{"NaN price", "a.csv", "instance_type,price_per_hour,accelerator_count\nx.large,NaN,1\n", `a.csv:2: price_per_hour "NaN" is not a number`},
		{"zero accelerators", "a.csv", "instance_type,price_per_hour,accelerator_count\nx.large,3,0\n", `a.csv:2: accelerator_count "0" must be at least 1`},
		{"fractional count", "a.csv", "instance_type,price_per_hour,accelerator_count\nx.large,3,1.5\n", `a.csv:2: accelerator_count "1.5" is not a whole number`},
		{"bad factor", "a.csv", "instance_type,price_factor\np5.48xlarge,0\n", `a.csv:2: price_factor "0" must be in (0, 10]`},
		{"bad date", "a.csv", "instance_type,price_per_hour,accelerator_count,date\nx.large,3,1,20/07/2026\n", `a.csv:2: date "20/07/2026" is not YYYY-MM-DD`},
		{"bare quote", "a.csv", "instance_type,price_per_hour,accelerator_count\nx.large,\"3,1\n", "a.csv:2"},
		{"empty instance type", "a.csv", "instance_type,price_per_hour,accelerator_count\n,3,1\n", "a.csv:2: instance_type is empty"},
		{"new row without price", "a.csv", "instance_type,accelerator_count\nx.large,1\n", `a.csv:2: row for "x.large" in "us-east-1" has no price`},
		{"new row without count", "a.csv", "instance_type,price_per_hour\nx.large,4\n", `a.csv:2: row for "x.large" in "us-east-1" has price_per_hour but no accelerator_count`},
		{"model row without model", "a.csv", "instance_type,price_per_accelerator_hour\n*,2\n", `a.csv:2: a row with instance_type "*" matches by model`},
		{"implausible price", "a.csv", "instance_type,price_per_accelerator_hour\nx.large,20000\n", "a.csv:2: row for \"x.large\" in \"us-east-1\" prices one accelerator at 20000.00 USD/h"},
		{"empty file", "a.csv", "", "a.csv: empty file"},
		{"yaml unknown key", "p.yaml", "prices:\n  - instance_type: x.large\n    price_per_hour: 3\n    accelerator_count: 1\n    gpus: 8\n", `p.yaml:5: unknown column "gpus"`},
		{"yaml negative", "p.yaml", "prices:\n  - instance_type: x.large\n    price_per_hour: -1\n", `p.yaml:3: price_per_hour "-1" is negative`},
		{"yaml syntax", "p.yml", "prices:\n  - instance_type: x.large\n    price_per_hour: 3\n  bad\n", "p.yml:4: yaml: line 4: could not find expected ':'"},
		{"yaml tab", "p.yml", "prices:\n  - instance_type: x.large\n\tprice_per_hour: 3\n", "p.yml:2: yaml: line 2: found a tab character"},
		{"yaml top-level key", "p.yaml", "price:\n  - instance_type: x.large\n", `p.yaml:1: unknown key "price"`},
		{"yaml not a list", "p.yaml", "prices: p5.48xlarge\n", "p.yaml:1: `prices` must be a list"},
		{"yaml nested value", "p.yaml", "prices:\n  - instance_type: [a, b]\n", "p.yaml:2: instance_type must be a single value"},
		{"yaml row not a mapping", "p.yaml", "prices:\n  - p5.48xlarge\n", "p.yaml:2: a price row must be a mapping"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), tt.file)
			if err := os.WriteFile(path, []byte(tt.text), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := Load([]string{path}, Options{})
			if err == nil {
				t.Fatal("accepted a malformed table")
			}
			want := filepath.Join(filepath.Dir(path), tt.want)
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("error %q does not contain %q", err, want)
			}
		})
	}
}

func TestManyErrorsAreBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("instance_type,price_per_hour,accelerator_count\n")
	for i := 0; i < 50; i++ {
		b.WriteString("x.large,-1,1\n")
	}
	_, err := ParseCSV("big.csv", strings.NewReader(b.String()))
	if err == nil || strings.Count(err.Error(), "big.csv:") != maxErrors || !strings.Contains(err.Error(), "and 40 more problems") {
		t.Fatalf("want %d located errors and a count of the rest, got %v", maxErrors, err)
	}
}

func TestYAMLAndCSVAgree(t *testing.T) {
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "p.csv")
	yamlPath := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(csvPath, []byte("instance_type,region,price_per_hour,accelerator_count,accelerator_model,accelerator_memory_gb,cores_per_accelerator,price_factor,source,date\nx.large,eu-west-1,8,2,L4,24,0,0.5,quote,2026-01-02\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(yamlPath, []byte("prices:\n  - instance_type: x.large\n    region: eu-west-1\n    price_per_hour: 8\n    accelerator_count: 2\n    accelerator_model: L4\n    accelerator_memory_gb: 24\n    cores_per_accelerator: 0\n    price_factor: 0.5\n    source: quote\n    date: 2026-01-02\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := Load([]string{csvPath}, Options{WithoutBundled: true})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Load([]string{yamlPath}, Options{WithoutBundled: true})
	if err != nil {
		t.Fatal(err)
	}
	ra, _ := a.Lookup("x.large", "eu-west-1", "")
	rb, _ := b.Lookup("x.large", "eu-west-1", "")
	ra.Origin, rb.Origin = "", ""
	if ra != rb || ra.AcceleratorHourly() != 2 {
		t.Fatalf("csv %+v\nyaml %+v", ra, rb)
	}
}

func TestLoadWithoutAnything(t *testing.T) {
	if _, err := Load(nil, Options{WithoutBundled: true}); !errors.Is(err, ErrNoFiles) {
		t.Fatalf("got %v", err)
	}
	if _, err := Load([]string{"/nonexistent/prices.csv"}, Options{}); err == nil || !strings.Contains(err.Error(), "/nonexistent/prices.csv: cannot read") {
		t.Fatalf("got %v", err)
	}
}
