package kernellog

import (
	"bufio"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// FuzzParse: any line gives a message or an error wrapping ErrMalformed,
// never a panic; what it reads is consistent (a bus id in canonical form, a
// non-negative code); the assembler takes any sequence of them.
func FuzzParse(f *testing.F) {
	for _, fixture := range []string{"testdata/nvidia.dmesg", "testdata/old-drivers.log", "testdata/neuron.dmesg-T"} {
		file, err := os.Open(fixture)
		if err != nil {
			f.Fatal(err)
		}
		sc := bufio.NewScanner(file)
		for sc.Scan() {
			f.Add(sc.Text())
		}
		file.Close()
	}
	f.Add("NVRM: Xid (PCI:")
	f.Add("NVRM: Xid (PCI:0000:3b:00): 99999999999999999999, pid=")
	f.Add("x: AER: PCIe Bus Error: severity=")
	c := Clock{Boot: time.Unix(1_700_000_000, 0), Now: func() time.Time { return time.Unix(1_800_000_000, 0) }}
	f.Fuzz(func(t *testing.T, line string) {
		_, msg := SplitPrefix(line, c)
		m, err := Parse(msg)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error not ErrMalformed: %v", err)
			}
			return
		}
		if m.Bus != "" {
			if again, ok := CanonicalBus(m.Bus); !ok || again != m.Bus {
				t.Fatalf("bus %q is not canonical", m.Bus)
			}
		}
		if m.Code < 0 || m.PID < 0 {
			t.Fatalf("negative code or pid: %+v", m)
		}
		if utf8.ValidString(msg) && !utf8.ValidString(m.Text) {
			t.Fatalf("text made invalid: %q", m.Text)
		}
		var a assembler
		for range 3 {
			if ev := a.add(m, Line{Text: msg}); ev != nil && len(ev.Lines) > maxDetailLines+1 {
				t.Fatalf("event holds %d lines", len(ev.Lines))
			}
		}
		_ = strings.TrimSpace(msg)
	})
}
