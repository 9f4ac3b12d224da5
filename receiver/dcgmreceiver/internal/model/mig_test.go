package model

import (
	"math"
	"testing"
)

func TestMIGShare(t *testing.T) {
	const gib = 1 << 30
	cases := []struct {
		name      string
		profile   string
		memBytes  float64
		modelName string
		want      float64
	}{
		{"compute bound", "1g.10gb", 80 * gib, "", 1.0 / 7},
		{"memory bound", "3g.40gb", 80 * gib, "", 4.0 / 8},
		{"memory from model name", "3g.40gb", 0, "NVIDIA H100 80GB HBM3", 4.0 / 8},
		{"unreadable profile", "not-a-profile", 80 * gib, "", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := MIGShare(c.profile, c.memBytes, c.modelName)
			if math.Abs(got-c.want) > 1e-9 {
				t.Fatalf("MIGShare(%q, %v, %q) = %v, want %v", c.profile, c.memBytes, c.modelName, got, c.want)
			}
		})
	}
}
