package detrand

import (
	"regexp"
	"testing"
)

func TestHashIsStableAndSeparatesParts(t *testing.T) {
	if first, again := Hash(1, "a", 2), Hash(1, "a", 2); first != again {
		t.Fatal("not deterministic")
	}
	if Hash(1, "ab", "c") == Hash(1, "a", "bc") || Hash(1, "x") == Hash(2, "x") || Hash(1, 1) == Hash(1, int64(2)) {
		t.Fatal("different inputs collide")
	}
}

func TestNoiseRanges(t *testing.T) {
	for k := int64(-50); k < 500; k++ {
		if w := White(7, k); w < -1 || w >= 1 {
			t.Fatalf("White(%d) = %v", k, w)
		}
		if s := Smooth(7, k, 12); s < -1 || s > 1 {
			t.Fatalf("Smooth(%d) = %v", k, s)
		}
	}
	// Smooth changes gently: neighbours differ by much less than the range.
	for k := int64(0); k < 500; k++ {
		if d := Smooth(9, k+1, 24) - Smooth(9, k, 24); d > 0.25 || d < -0.25 {
			t.Fatalf("Smooth jumps by %v at %d", d, k)
		}
	}
}

func TestUUIDAndHex(t *testing.T) {
	re := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for i := 0; i < 1000; i++ {
		u := UUID(42, "gpu", i)
		if !re.MatchString(u) || seen[u] {
			t.Fatalf("uuid %q (seen %v)", u, seen[u])
		}
		seen[u] = true
	}
	if h := Hex(17, 1, "x"); len(h) != 17 || h != Hex(17, 1, "x") {
		t.Errorf("hex %q", h)
	}
	if p := Pick(10, "ab", 1, "x"); len(p) != 10 || regexp.MustCompile(`[^ab]`).MatchString(p) {
		t.Errorf("pick %q", p)
	}
}
