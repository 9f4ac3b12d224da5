package pricing

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWatcherReloadsOnChangeAndKeepsLastGoodTable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prices.csv")
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("instance_type,price_per_hour,accelerator_count\nx.large,8,2\n")
	w, err := NewWatcher([]string{path}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	price := func() float64 {
		r, _ := w.Table().Lookup("x.large", "", "")
		return r.AcceleratorHourly()
	}
	if price() != 4 {
		t.Fatalf("initial price %v", price())
	}
	if changed, err := w.Poll(); changed || err != nil {
		t.Fatalf("unchanged file: changed=%v err=%v", changed, err)
	}

	write("instance_type,price_per_hour,accelerator_count\nx.large,10,2\n")
	if changed, err := w.Poll(); !changed || err != nil || price() != 5 {
		t.Fatalf("changed file: changed=%v err=%v price=%v", changed, err, price())
	}

	write("instance_type,price_per_hour,accelerator_count\nx.large,-10,2\n")
	for i := 0; i < 2; i++ {
		changed, err := w.Poll()
		if changed || err == nil || !strings.Contains(err.Error(), "prices.csv:2") {
			t.Fatalf("broken file, poll %d: changed=%v err=%v", i, changed, err)
		}
		if price() != 5 {
			t.Fatalf("a broken file must keep the last good table, price=%v", price())
		}
	}

	os.Remove(path)
	if _, err := w.Poll(); err == nil || price() != 5 {
		t.Fatalf("a missing file is an error and keeps the table: %v", err)
	}

	write("instance_type,price_per_hour,accelerator_count\nx.large,12,2\n")
	if changed, err := w.Poll(); !changed || err != nil || price() != 6 {
		t.Fatalf("fixed file: changed=%v err=%v price=%v", changed, err, price())
	}
}

func TestNewWatcherRejectsBrokenFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prices.yaml")
	if err := os.WriteFile(path, []byte("prices:\n  - instance_type: x\n    price_per_hour: 3\n    bogus: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := NewWatcher([]string{path}, Options{}); err == nil || !strings.Contains(err.Error(), "prices.yaml:4") {
		t.Fatalf("got %v", err)
	}
}
