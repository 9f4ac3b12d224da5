package kernellog

import (
	"bufio"
	"os"
	"testing"
	"time"
)

func fixtureLines(b *testing.B) []string {
	b.Helper()
	f, err := os.Open("testdata/nvidia.dmesg")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return lines
}

// BenchmarkParseFixture: the stamp and the message of every line of the
// NVIDIA fixture (31 lines, XIDs, SXids, AER and others).
func BenchmarkParseFixture(b *testing.B) {
	lines := fixtureLines(b)
	c := Clock{Boot: time.Unix(1_700_000_000, 0)}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for _, l := range lines {
			_, msg := SplitPrefix(l, c)
			_, _ = Parse(msg)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(lines)), "ns/line")
}

// BenchmarkIrrelevantLine: the cost of a message that is not an
// accelerator's, which is nearly every line a node writes.
func BenchmarkIrrelevantLine(b *testing.B) {
	const line = "6,123456,987654321,-;eth0: renamed from veth1a2b3c4"
	b.ReportAllocs()
	for b.Loop() {
		rec, _ := parseKmsgRecord([]byte(line))
		_ = relevant(text(rec.text))
	}
}
