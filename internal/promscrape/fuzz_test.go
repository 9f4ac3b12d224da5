package promscrape

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

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
	f.Add("# TYPE h histogram\nh_bucket{le=\"1\"} 1.0 # {span_id=\"00f067aa0ba902b7\",trace_id=\"4bf92f3577b34da6a3ce929d0e0e4736\"} 0.5 1767225686.167\nh_count 1 # {a=\"b\"} 1\n# EOF\n")
	f.Add("# TYPE c counter\nc_total 1 17e8 # {x=\"\\\"\"} NaN\nc_total 2 # {\"n\"} 1\nc_total 3 #{}1 2 3\n")
	f.Add(func() string {
		page := readPage(f, "vllm_v1_openmetrics.txt")
		return page[strings.Index(page, "# HELP vllm:time_to_first_token_seconds"):][:seedBytes]
	}())
	f.Fuzz(func(t *testing.T, text string) {
		pg := Parse(text)
		checkPage(t, text, pg)
		om := ParseOptions{OpenMetrics: true}.Parse(text)
		checkPage(t, text, om)
		// An exemplar never costs its sample: the lines that are
		// samples or errors are the same in both formats (only a
		// timestamp, seconds in one and milliseconds in the other, can
		// turn one into the other).
		if len(om.Samples)+om.Errors.Count != len(pg.Samples)+pg.Errors.Count {
			t.Fatalf("OpenMetrics: %d samples and %d errors; format 0.0.4: %d and %d", len(om.Samples), om.Errors.Count, len(pg.Samples), pg.Errors.Count)
		}
		if len(pg.Exemplars) > 0 || pg.ExemplarErrors.Count > 0 {
			t.Fatalf("exemplars read from a page not read as OpenMetrics")
		}
		sameAsReader(t, text, om, true)
		sameAsReader(t, text, pg, false)
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

// checkPage checks what holds of any page read in either format, and
// returns its number of lines.
func checkPage(t *testing.T, text string, pg Page) int {
	t.Helper()
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
	// Exemplars: each on a sample that says so, in order; a dropped one
	// is reported on a sample's line, never instead of the sample.
	if len(pg.Exemplars)+pg.ExemplarErrors.Count > len(pg.Samples) {
		t.Fatalf("%d exemplars and %d exemplar errors for %d samples", len(pg.Exemplars), pg.ExemplarErrors.Count, len(pg.Samples))
	}
	with, last := 0, -1
	for i := range pg.Samples {
		if pg.Samples[i].HasExemplar {
			with++
			if _, ok := pg.Exemplar(i); !ok {
				t.Fatalf("sample %d has an exemplar Page.Exemplar does not find", i)
			}
		}
	}
	for _, e := range pg.Exemplars {
		if e.Sample <= last || e.Sample >= len(pg.Samples) || !pg.Samples[e.Sample].HasExemplar {
			t.Fatalf("exemplar of sample %d after %d (of %d)", e.Sample, last, len(pg.Samples))
		}
		last = e.Sample
		runes := 0
		for _, l := range e.Labels {
			runes += utf8.RuneCountInString(l.Name) + utf8.RuneCountInString(l.Value)
		}
		if runes > MaxExemplarRunes && utf8.ValidString(text) {
			t.Fatalf("exemplar of %d characters kept", runes)
		}
	}
	if with != len(pg.Exemplars) {
		t.Fatalf("%d samples with an exemplar, %d exemplars", with, len(pg.Exemplars))
	}
	for _, e := range pg.ExemplarErrors.First {
		if e.Line < 1 || e.Line > lines || e.Column < 1 || e.Err == nil || !slices.ContainsFunc(pg.Samples, func(s Sample[string]) bool { return s.Line == e.Line }) {
			t.Fatalf("exemplar error at line %d column %d, not a sample's: %v", e.Line, e.Column, e.Err)
		}
	}
	return lines
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
func sameAsReader(t *testing.T, text string, pg Page, openMetrics bool) {
	r := NewReader(strings.NewReader(text))
	r.MaxLineBytes = len(text) + 1
	r.OpenMetrics = openMetrics
	var n, errs, exErrs int
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
			sameExemplar(t, r, pg, n)
			if le, ok := r.ExemplarError(); ok {
				if exErrs < len(pg.ExemplarErrors.First) && le != pg.ExemplarErrors.First[exErrs] {
					t.Fatalf("exemplar error %d: Reader %v, Parse %v", exErrs, le, pg.ExemplarErrors.First[exErrs])
				}
				exErrs++
			}
			n++
		case EntryInvalid:
			if errs < len(pg.Errors.First) && r.Invalid() != pg.Errors.First[errs] {
				t.Fatalf("error %d: Reader %v, Parse %v", errs, r.Invalid(), pg.Errors.First[errs])
			}
			errs++
		}
	}
	if exErrs != pg.ExemplarErrors.Count {
		t.Fatalf("Reader: %d exemplar errors; Parse: %d", exErrs, pg.ExemplarErrors.Count)
	}
	if n != len(pg.Samples) || errs != pg.Errors.Count || r.Err() != nil {
		t.Fatalf("Reader: %d samples, %d errors (%v); Parse: %d, %d", n, errs, r.Err(), len(pg.Samples), pg.Errors.Count)
	}
}

func sameExemplar(t *testing.T, r *Reader, pg Page, n int) {
	got, gotOK := r.Exemplar()
	want, wantOK := pg.Exemplar(n)
	if gotOK != wantOK || got.Timestamp != want.Timestamp || got.HasTimestamp != want.HasTimestamp ||
		math.Float64bits(got.Value) != math.Float64bits(want.Value) || len(got.Labels) != len(want.Labels) {
		t.Fatalf("sample %d exemplar: Reader %+v (%v), Parse %+v (%v)", n, got, gotOK, want, wantOK)
	}
	for i, l := range got.Labels {
		if string(l.Name) != want.Labels[i].Name || string(l.Value) != want.Labels[i].Value {
			t.Fatalf("sample %d exemplar label %d: Reader %q=%q, Parse %q=%q", n, i, l.Name, l.Value, want.Labels[i].Name, want.Labels[i].Value)
		}
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
