// Package attrhash hashes attribute maps independently of key order, to key
// per-series state and to group points with equal attributes.
package attrhash

import (
	"github.com/cespare/xxhash/v2"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

// Map returns a 64-bit hash of m that does not depend on the order of its
// keys: the sum of one xxhash per key/value pair. An empty map hashes to 0.
// Values are hashed in their string form, so Int 1 and Str "1" collide; the
// callers compare maps for equality where that matters.
func Map(m pcommon.Map) uint64 {
	if m.Len() == 0 {
		return 0
	}
	var sum uint64
	var d xxhash.Digest
	for k, v := range m.All() {
		d.Reset()
		_, _ = d.WriteString(k)
		_, _ = d.Write([]byte{0})
		_, _ = d.WriteString(v.AsString())
		sum += d.Sum64()
	}
	return sum
}

// String hashes one string.
func String(s string) uint64 { return xxhash.Sum64String(s) }
