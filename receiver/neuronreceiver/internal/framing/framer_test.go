package framing

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// collect reads every frame of input, through a reader that hands out one
// byte at a time so that buffering cannot hide state-machine bugs.
func collect(t testing.TB, input string, opts ...Option) (docs []string, problems []*Problem, positions []Position) {
	f := New(iotest.OneByteReader(strings.NewReader(input)), opts...)
	for {
		fr, err := f.Next()
		if errors.Is(err, io.EOF) {
			return docs, problems, positions
		}
		require.NoError(t, err)
		if fr.Problem != nil {
			problems = append(problems, fr.Problem)
			continue
		}
		docs = append(docs, string(fr.Doc))
		positions = append(positions, fr.Position)
	}
}

func TestOneReportPerLine(t *testing.T) {
	in := `{"a":1}` + "\n" + `{"b":{"c":[1,2,{"d":3}]}}` + "\n" + `{"e":"}{"}` + "\n"
	docs, problems, pos := collect(t, in)
	assert.Empty(t, problems)
	assert.Equal(t, []string{`{"a":1}`, `{"b":{"c":[1,2,{"d":3}]}}`, `{"e":"}{"}`}, docs)
	assert.Equal(t, []Position{{Report: 1, Offset: 0, Line: 1}, {Report: 2, Offset: 8, Line: 2}, {Report: 3, Offset: 34, Line: 3}}, pos)
}

func TestPrettyPrintedReports(t *testing.T) {
	a := map[string]any{"neuron_runtime_data": []any{map[string]any{"pid": 1, "report": map[string]any{"x": map[string]any{}}}}, "s": "a{b}\"c"}
	pretty, err := json.MarshalIndent(a, "", "  ")
	require.NoError(t, err)
	in := string(pretty) + "\n" + string(pretty) + "\n"
	docs, problems, pos := collect(t, in)
	assert.Empty(t, problems)
	require.Len(t, docs, 2)
	assert.Equal(t, string(pretty), docs[0])
	assert.Equal(t, string(pretty), docs[1])
	assert.Equal(t, strings.Count(string(pretty), "\n")+2, pos[1].Line)
}

func TestReportsWithoutNewlines(t *testing.T) {
	docs, problems, _ := collect(t, `{"a":1}{"b":2} {"c":3}`)
	assert.Empty(t, problems)
	assert.Equal(t, []string{`{"a":1}`, `{"b":2}`, `{"c":3}`}, docs)
}

func TestTruncatedReportIsSkippedAndTheNextOneRead(t *testing.T) {
	in := `{"a":1}` + "\n" + `{"neuron_runtime_data":[{"pid":12,"report":{"x":"unterminated` + "\n" + `{"b":2}` + "\n"
	docs, problems, _ := collect(t, in)
	assert.Equal(t, []string{`{"a":1}`, `{"b":2}`}, docs)
	require.Len(t, problems, 1)
	p := problems[0]
	assert.Equal(t, Truncated, p.Kind)
	assert.Equal(t, Position{Report: 2, Offset: 8, Line: 2}, p.Position)
	assert.Equal(t, "truncated document: report #2 at byte 8 (line 2): a new report began on a new line after 62 bytes; skipped", p.Error())
}

func TestTruncatedAtEndOfStream(t *testing.T) {
	docs, problems, _ := collect(t, `{"a":1}`+"\n"+`{"b":[1,2`)
	assert.Equal(t, []string{`{"a":1}`}, docs)
	require.Len(t, problems, 1)
	assert.Equal(t, Truncated, problems[0].Kind)
	assert.Contains(t, problems[0].Error(), "report #2 at byte 8 (line 2): the stream ended after 9 bytes")
}

func TestGarbageOutsideReports(t *testing.T) {
	in := "neuron-monitor: starting\n" + `{"a":1}` + "\nWARN x\n"
	docs, problems, _ := collect(t, in)
	assert.Equal(t, []string{`{"a":1}`}, docs)
	require.Len(t, problems, 2)
	assert.Equal(t, Garbage, problems[0].Kind)
	assert.Equal(t, "neuron-monitor:starting", problems[0].Sample, "whitespace between garbage words is not garbage")
	assert.Equal(t, int64(0), problems[0].Offset)
	assert.Equal(t, Garbage, problems[1].Kind)
	assert.Equal(t, 3, problems[1].Line)
}

func TestUnbalancedClosingBrace(t *testing.T) {
	docs, problems, _ := collect(t, "}\n{\"a\":1}\n")
	assert.Equal(t, []string{`{"a":1}`}, docs)
	require.Len(t, problems, 1)
	assert.Equal(t, Unbalanced, problems[0].Kind)
}

func TestOversizedReportIsSkipped(t *testing.T) {
	big := `{"a":"` + strings.Repeat("x", 100) + `"}`
	docs, problems, _ := collect(t, big+"\n"+`{"b":1}`+"\n", WithMaxDocumentSize(50))
	assert.Equal(t, []string{`{"b":1}`}, docs)
	require.Len(t, problems, 1)
	assert.Equal(t, Oversized, problems[0].Kind)
	assert.Contains(t, problems[0].Error(), "larger than 50 bytes")
}

func TestStartMidLineSkipsThePartialFirstLine(t *testing.T) {
	docs, problems, _ := collect(t, `e":{"x":1}}}`+"\n"+`{"a":1}`+"\n", StartMidLine())
	assert.Empty(t, problems)
	assert.Equal(t, []string{`{"a":1}`}, docs)
}

func TestEscapesInStrings(t *testing.T) {
	in := `{"a":"\\"}` + "\n" + `{"b":"\"{"}` + "\n"
	docs, problems, _ := collect(t, in)
	assert.Empty(t, problems)
	assert.Equal(t, []string{`{"a":"\\"}`, `{"b":"\"{"}`}, docs)
}

type failingReader struct{ err error }

func (r failingReader) Read([]byte) (int, error) { return 0, r.err }

func TestReadErrorsPassThrough(t *testing.T) {
	boom := errors.New("boom")
	_, err := New(failingReader{boom}).Next()
	assert.ErrorIs(t, err, boom)
}

// FuzzFramer checks the framer's contract on arbitrary bytes: it never
// panics, every document it returns is the exact slice of the input at its
// stated offset, documents and problems never overlap and appear in stream
// order, and a single valid one-line object comes back unchanged.
func FuzzFramer(f *testing.F) {
	f.Add([]byte(`{"a":1}` + "\n" + `{"b":[1,{"c":"}"}]}`))
	f.Add([]byte("garbage {\"a\":\n{\"b\":2}\n"))
	f.Add([]byte("{\n  \"a\": {\n    \"b\": 1\n  }\n}\n"))
	f.Add([]byte(`}]{"\\\"":[}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		fr := New(bytes.NewReader(in), WithMaxDocumentSize(1<<16))
		var last int64 = -1
		var docs [][]byte
		for {
			frame, err := fr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if frame.Offset < last {
				t.Fatalf("frame at %d after a frame at %d", frame.Offset, last)
			}
			last = frame.Offset
			if frame.Problem != nil {
				_ = frame.Problem.Error()
				continue
			}
			end := frame.Offset + int64(len(frame.Doc))
			if end > int64(len(in)) || !bytes.Equal(in[frame.Offset:end], frame.Doc) {
				t.Fatalf("document at %d is not the input at that offset", frame.Offset)
			}
			docs = append(docs, append([]byte(nil), frame.Doc...))
		}
		trimmed := bytes.TrimSpace(in)
		if len(trimmed) > 0 && trimmed[0] == '{' && !bytes.ContainsAny(trimmed, "\n\r") && json.Valid(trimmed) {
			if len(docs) != 1 || !bytes.Equal(docs[0], trimmed) {
				t.Fatalf("a valid object came back as %q", docs)
			}
		}
	})
}
