package pricing

import (
	"bytes"
	"math"
	"testing"
)

// FuzzParse feeds arbitrary bytes to both parsers and the table builder: they
// must never panic, every error must name the file, and every table they
// accept must hold only finite, non-negative prices.
func FuzzParse(f *testing.F) {
	f.Add([]byte("instance_type,price_per_hour,accelerator_count\nx.large,3,1\n"), false)
	f.Add([]byte("instance_type,region,price_factor\np5.48xlarge,,0.4\n"), false)
	f.Add([]byte("instance_type,price_per_accelerator_hour,accelerator_model\n*,2.1,H100\n"), false)
	f.Add([]byte("instance_type,\"price\nx,\"1\n"), false)
	f.Add([]byte("prices:\n  - instance_type: x\n    price_per_hour: 3\n    accelerator_count: 1\n"), true)
	f.Add([]byte("prices: [ {instance_type: a, price_per_accelerator_hour: 1e308} ]"), true)
	f.Add([]byte("a: &a [*a]"), true)
	f.Add(bundledCSV, false)
	f.Fuzz(func(t *testing.T, data []byte, asYAML bool) {
		name := "fuzz.csv"
		if asYAML {
			name = "fuzz.yaml"
		}
		rows, err := Parse(name, data)
		if err != nil {
			if !bytes.Contains([]byte(err.Error()), []byte(name)) {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		table, err := Build(Options{}, rows)
		if err != nil {
			if !bytes.Contains([]byte(err.Error()), []byte(name)) {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for _, r := range table.Rows() {
			p := r.AcceleratorHourly()
			if math.IsNaN(p) || math.IsInf(p, 0) || p < 0 {
				t.Fatalf("row %+v has price %v", r, p)
			}
		}
	})
}
