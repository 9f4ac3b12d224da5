// Package detrand is the simulator's only source of randomness: pure
// functions of a seed and a key, so that a scenario run with the same seed
// produces the same identifiers and the same values at the same simulated
// time, whichever order servers are scraped in.
package detrand

import (
	"fmt"
	"math"
)

// Hash mixes a seed and any number of string or integer parts into 64 bits.
func Hash(seed uint64, parts ...any) uint64 {
	h := uint64(14695981039346656037) ^ mix(seed)
	for _, p := range parts {
		switch v := p.(type) {
		case string:
			for i := 0; i < len(v); i++ {
				h ^= uint64(v[i])
				h *= 1099511628211
			}
			h ^= 0xff // separator, so ("ab","c") != ("a","bc")
			h *= 1099511628211
		case int:
			h = mix(h ^ uint64(v))
		case int64:
			h = mix(h ^ uint64(v))
		case uint64:
			h = mix(h ^ v)
		default:
			panic(fmt.Sprintf("detrand.Hash: unsupported part %T", p))
		}
	}
	return mix(h)
}

// mix is the splitmix64 finaliser.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// Unit maps a hash to [0, 1).
func Unit(h uint64) float64 { return float64(h>>11) / (1 << 53) }

// Signed maps a hash to [-1, 1).
func Signed(h uint64) float64 { return 2*Unit(h) - 1 }

// White is uncorrelated noise in [-1, 1) at integer step t.
func White(key uint64, t int64) float64 { return Signed(mix(key ^ mix(uint64(t)))) }

// Smooth is value noise in [-1, 1]: random knots every period steps joined
// by a cosine curve, so neighbouring steps change gently.
func Smooth(key uint64, t int64, period int64) float64 {
	if period < 1 {
		period = 1
	}
	k := floorDiv(t, period)
	frac := float64(t-k*period) / float64(period)
	a := White(key, k)
	b := White(key, k+1)
	w := (1 - math.Cos(frac*math.Pi)) / 2
	return a*(1-w) + b*w
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// UUID renders 128 bits from two hashes as an RFC 4122 version-4 UUID.
func UUID(seed uint64, parts ...any) string {
	hi := Hash(seed, append(parts, "hi")...)
	lo := Hash(seed, append(parts, "lo")...)
	hi = (hi &^ (0xf << 12)) | (4 << 12)   // version 4
	lo = (lo &^ (0x3 << 62)) | (0x2 << 62) // variant 10
	return fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", hi>>32, (hi>>16)&0xffff, hi&0xffff, lo>>48, lo&0xffffffffffff)
}

// Hex returns n lowercase hex digits of the hash of parts.
func Hex(n int, seed uint64, parts ...any) string {
	s := ""
	for i := 0; len(s) < n; i++ {
		s += fmt.Sprintf("%016x", Hash(seed, append(parts, i)...))
	}
	return s[:n]
}

// Pick returns a string of n characters drawn from alphabet.
func Pick(n int, alphabet string, seed uint64, parts ...any) string {
	out := make([]byte, n)
	for i := range out {
		out[i] = alphabet[Hash(seed, append(parts, i)...)%uint64(len(alphabet))]
	}
	return string(out)
}
