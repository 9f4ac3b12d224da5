package jsonw

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStringRoundTrips(t *testing.T) {
	for _, s := range []string{"", "plain", `quote " and \ backslash`, "tab\tnew\nline\r", "\x00\x1f", "é漢字🙂", "\u2028\u2029", "bad \xff utf8"} {
		b := String(nil, s)
		var back string
		require.NoError(t, json.Unmarshal(b, &back), "%q → %s", s, b)
		want := s
		if s == "bad \xff utf8" {
			want = "bad \ufffd utf8"
		}
		assert.Equal(t, want, back)
	}
}

func TestFloat(t *testing.T) {
	for _, f := range []float64{0, 1, -1, 0.5, 1e-7, 123456789012345678, 1e21, -3.25e-300, math.MaxFloat64, 0.1 + 0.2} {
		b := Float(nil, f)
		var back float64
		require.NoError(t, json.Unmarshal(b, &back), "%v → %s", f, b)
		assert.Equal(t, f, back, "%s", b)
	}
	assert.Equal(t, "42", string(Float(nil, 42)))
}

func TestTruncateUTF8(t *testing.T) {
	assert.Equal(t, "é", TruncateUTF8("éé", 3))
	assert.Equal(t, "ab", TruncateUTF8("ab", 5))
}

func FuzzString(f *testing.F) {
	for _, s := range []string{"", "a\"b", "\xff\xfe", "\u2028"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := String(nil, s)
		var back string
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%q encoded as invalid JSON %s: %v", s, b, err)
		}
	})
}

// Bytes must write what String writes, byte for byte: the body of a
// PutLogEvents call is measured against limits computed from the same
// escaping.
func TestBytesIsString(t *testing.T) {
	for _, s := range []string{"", "plain", `{"_aws":{"a":"b\"c"},"x":"\\"}`, "tab\tnew\nline\r", "\x00\x1f\x7f", "é漢字🙂", "\u2028\u2029", "bad \xff utf8", "cut \xe6\xbc"} {
		assert.Equal(t, string(String(nil, s)), string(Bytes(nil, []byte(s))), "%q", s)
	}
}

// Every byte that needs care, at every position of the eight-byte words
// Bytes skips through.
func TestBytesFindsEverySpecialByte(t *testing.T) {
	for _, special := range []string{`"`, `\\`, "\x00", "\x1f", "\n", "\x7f", "é", "\xff", "\u2028"} {
		for at := 0; at < 20; at++ {
			s := strings.Repeat("a", at) + special + strings.Repeat("b", 20-at)
			assert.Equal(t, string(String(nil, s)), string(Bytes(nil, []byte(s))), "%q", s)
		}
	}
}

func FuzzBytes(f *testing.F) {
	for _, s := range []string{"", `{"a":"\"b"}`, "\xff\xfe", "\u2028"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) {
		b := Bytes(nil, s)
		if want := String(nil, string(s)); string(b) != string(want) {
			t.Fatalf("%q: Bytes wrote %s, String %s", s, b, want)
		}
	})
}

func BenchmarkBytes(b *testing.B) {
	msg := []byte(`{"_aws":{"Timestamp":1772366400000,"CloudWatchMetrics":[{"Namespace":"Accelerators","Dimensions":[["cluster","k8s.node.name","hw.id"]],"Metrics":[{"Name":"hw.gpu.utilization","Unit":"Percent","StorageResolution":60}]}]},"cluster":"prod-a","k8s.node.name":"ip-10-0-1-17","hw.id":"GPU-0000-0","hw.gpu.utilization":0.37,"cloud.region":"us-east-1","host.name":"ip-10-0-1-17.ec2.internal"}`)
	b.SetBytes(int64(len(msg)))
	buf := make([]byte, 0, 2*len(msg))
	for b.Loop() {
		buf = Bytes(buf[:0], msg)
	}
}
