package kernellog

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/kernlog"
)

// FuzzParse: any input, taken as lines of one log, goes through one
// Stamper, Parse and the assembler as Run takes it, never panics, and what
// it reads is consistent: a bus id in canonical form, a non-negative code,
// valid text out of valid text, events of bounded size, and every line
// that carries a marker in an event or skipped.
func FuzzParse(f *testing.F) {
	fixtures, err := filepath.Glob("testdata/*.*")
	if err != nil {
		f.Fatal(err)
	}
	for _, fixture := range fixtures {
		if strings.HasSuffix(fixture, ".md") {
			continue
		}
		b, err := os.ReadFile(fixture)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
		for l := range strings.SplitSeq(string(b), "\n") {
			f.Add(l)
		}
	}
	for _, form := range kernlog.Forms {
		for _, l := range formLines {
			f.Add(form.Render(kernlog.Stamp{Wall: time.Unix(1_731_672_123, 0), SinceBoot: time.Hour, SincePrev: time.Millisecond, Seq: 1}, l.text))
		}
	}
	f.Add("NVRM: Xid (PCI:")
	f.Add("NVRM: Xid (PCI:0000:3b:00): 99999999999999999999, pid=")
	f.Add("x: AER: PCIe Bus Error: severity=")
	f.Add("<4>1 - - - - - [a=\"]\"")
	f.Add("[  +1e300] NVRM: x\n[<  -1>] AER: y")
	c := Clock{Boot: time.Unix(1_700_000_000, 0), Now: func() time.Time { return time.Unix(1_800_000_000, 0) }}
	f.Fuzz(func(t *testing.T, input string) {
		st := Stamper{Clock: c}
		var a assembler
		marked, kept := 0, 0
		count := func(ev *Event) {
			if ev == nil {
				return
			}
			if len(ev.Lines) > maxDetailLines+1 {
				t.Fatalf("event holds %d lines", len(ev.Lines))
			}
			kept += len(ev.Lines)
		}
		for line := range strings.SplitSeq(input, "\n") {
			_, msg := st.Split(line)
			if !relevant(msg) {
				continue
			}
			marked++
			m, err := Parse(msg)
			if err != nil {
				if !errors.Is(err, ErrMalformed) {
					t.Fatalf("error not ErrMalformed: %v", err)
				}
				m = unknown(msg)
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
			before := a.pending
			ev, skipped := a.add(m, Line{Text: msg})
			count(ev)
			switch {
			case skipped != "":
				kept++
			case a.pending != nil && a.pending == before && len(a.pending.Lines) > maxDetailLines:
				kept++ // joined an event that holds no more lines
			}
		}
		count(a.flush())
		if kept != marked {
			t.Fatalf("%d lines with a marker, %d in events or skipped", marked, kept)
		}
	})
}
