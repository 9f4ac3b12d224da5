package fleet

import "testing"

func TestRound4(t *testing.T) {
	for in, want := range map[float64]float64{
		0.30000000000000004: 0.3, 1.23456: 1.2346, -1.23456: -1.2346, -0.00004: 0, 2e15: 2e15, -2e15: -2e15,
	} {
		if got := Round4(in); got != want {
			t.Errorf("Round4(%v) = %v, want %v", in, got, want)
		}
	}
}
