package promscrape

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

func parseFloat(s string) (float64, error) { return strconv.ParseFloat(s, 64) }

// seedPages are the real-format pages of testdata that seed FuzzParse,
// each cut to its first seedBytes at a line end: whole pages (6–30 KB)
// leave the fuzzer minimizing its first finds for the whole run.
var seedPages = []string{
	"dcgm-exporter-2.x.txt", "dcgm-exporter-3.x.txt", "sglang_legacy.txt", "triton.txt",
	"tgi.txt", "nim.txt", "neuron-monitor-prometheus.txt",
}

const seedBytes = 2 << 10

func readPage(tb testing.TB, name string) string {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// FuzzParse: no input makes the parser panic or loop; Parse and Reader
// read every page alike (samples, families, errors and their positions);
// every line is a sample, an error, or neither, never both; and a
// well-formed page that expfmt's TextParser reads whole is read without
// errors (expfmt also takes some junk, like `{A""}0`, which is skipped here).
func FuzzParse(f *testing.F) {
	for _, name := range seedPages {
		page := readPage(f, name)
		if len(page) > seedBytes {
			page = page[:strings.LastIndexByte(page[:seedBytes], '\n')+1]
		}
		f.Add(page)
	}
	f.Add("# TYPE a counter\na_total{x=\"\\\\\\\"\\n\"} 1 2\n{\"u.t.f\",l=\"v\"} +Inf # {t=\"1\"} 1\n")
	f.Add("a{b=\"c\",} 1\r\nbroken{\n# HELP a x\\ny\n")
	f.Add(`DCGM_FI_DEV_GPU_UTIL{gpu="0", uuid="GPU-a", pod="p\"q"} ERROR - FAILED TO CONVERT TO STRING`)
	f.Add("execution_status_total{runtime_tag=\"llama\"} None\n")
	f.Fuzz(func(t *testing.T, text string) {
		pg := Parse(text)
		lines := strings.Count(text, "\n")
		if text != "" && !strings.HasSuffix(text, "\n") {
			lines++
		}
		if pg.Lines != lines {
			t.Fatalf("read %d lines of %d", pg.Lines, lines)
		}
		if pg.Errors.Count < len(pg.Errors.First) || len(pg.Errors.First) > MaxErrors {
			t.Fatalf("%d errors, %d kept", pg.Errors.Count, len(pg.Errors.First))
		}
		if len(pg.Samples)+pg.Errors.Count > lines {
			t.Fatalf("%d samples and %d errors from %d lines", len(pg.Samples), pg.Errors.Count, lines)
		}
		prev := 0
		for _, s := range pg.Samples {
			if s.Name == "" || s.Line <= prev || s.Line > lines {
				t.Fatalf("sample %q on line %d after %d (of %d)", s.Name, s.Line, prev, lines)
			}
			if !strings.HasPrefix(s.Name, s.Family()) || s.Family() == "" {
				t.Fatalf("sample %q in family %q", s.Name, s.Family())
			}
			prev = s.Line
		}
		for _, e := range pg.Errors.First {
			if e.Line < 1 || e.Line > lines || e.Column < 1 || e.Err == nil {
				t.Fatalf("error at line %d column %d of %d lines: %v", e.Line, e.Column, lines, e.Err)
			}
		}
		sameAsReader(t, text, pg)
		if abs := (ParseOptions{AbsentValues: []string{"None"}}).Parse(text); len(abs.Samples) != len(pg.Samples) || abs.Errors.Count+abs.Absent != pg.Errors.Count {
			t.Fatalf("with None absent: %d samples, %d errors, %d absent; without: %d, %d", len(abs.Samples), abs.Errors.Count, abs.Absent, len(pg.Samples), pg.Errors.Count)
		}
		exactAsParseFloat(t, text)

		if !wellFormed(text) {
			return
		}
		parser := expfmt.NewTextParser(model.UTF8Validation)
		if _, err := parser.TextToMetricFamilies(strings.NewReader(text)); err == nil && pg.Errors.Count > 0 {
			t.Fatalf("expfmt reads the page whole, Parse skipped %v", pg.Errors.First)
		}
	})
}

// wellFormedLine is a comment, a blank line, or a sample line as the format
// writes it: name, label set, value, timestamp, blanks between.
var wellFormedLine = regexp.MustCompile(`^[ \t]*(#.*|[a-zA-Z_:][a-zA-Z0-9_:]*` +
	`(\{[ \t]*([a-zA-Z_][a-zA-Z0-9_]*[ \t]*=[ \t]*"([^"\\]|\\.)*"[ \t]*(,[ \t]*|\}))*\}?[ \t]*|[ \t]+)` +
	`[^ \t]+([ \t]+[^ \t]+)?[ \t]*)?$`)

func wellFormed(text string) bool {
	for line := range strings.Lines(text) {
		if !wellFormedLine.MatchString(strings.TrimSuffix(line, "\n")) {
			return false
		}
	}
	return true
}

// sameAsReader checks that streaming the page gives what Parse gave.
func sameAsReader(t *testing.T, text string, pg Page) {
	r := NewReader(strings.NewReader(text))
	r.MaxLineBytes = len(text) + 1
	var n, errs int
	for en := r.Next(); en != EntryEnd; en = r.Next() {
		switch en {
		case EntrySample:
			if n >= len(pg.Samples) {
				t.Fatalf("Reader has more samples than Parse's %d", len(pg.Samples))
			}
			got, want := r.Sample(), pg.Samples[n]
			if string(got.Name) != want.Name || string(got.Family()) != want.Family() || got.Type != want.Type || got.Part != want.Part ||
				got.Line != want.Line || got.Timestamp != want.Timestamp || got.HasTimestamp != want.HasTimestamp ||
				math.Float64bits(got.Value) != math.Float64bits(want.Value) || len(got.Labels) != len(want.Labels) {
				t.Fatalf("sample %d: Reader %+v, Parse %+v", n, got, want)
			}
			for i, l := range got.Labels {
				if string(l.Name) != want.Labels[i].Name || string(l.Value) != want.Labels[i].Value {
					t.Fatalf("sample %d label %d: Reader %q=%q, Parse %q=%q", n, i, l.Name, l.Value, want.Labels[i].Name, want.Labels[i].Value)
				}
			}
			n++
		case EntryInvalid:
			if errs < len(pg.Errors.First) && r.Invalid() != pg.Errors.First[errs] {
				t.Fatalf("error %d: Reader %v, Parse %v", errs, r.Invalid(), pg.Errors.First[errs])
			}
			errs++
		}
	}
	if n != len(pg.Samples) || errs != pg.Errors.Count || r.Err() != nil {
		t.Fatalf("Reader: %d samples, %d errors (%v); Parse: %d, %d", n, errs, r.Err(), len(pg.Samples), pg.Errors.Count)
	}
}

// exactAsParseFloat checks that parseValue, with its fast path and its
// early refusals, reads the page's words as strconv.ParseFloat does.
func exactAsParseFloat(t *testing.T, text string) {
	for _, w := range strings.Fields(text) {
		got, ok := parseValue(w)
		want, err := parseFloat(w)
		if ok != (err == nil) || (ok && math.Float64bits(got) != math.Float64bits(want)) {
			t.Fatalf("%q: parseValue %v (%v), ParseFloat %v (%v)", w, got, ok, want, err)
		}
	}
}
