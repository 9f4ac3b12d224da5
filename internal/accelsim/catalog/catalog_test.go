package catalog

import (
	"strings"
	"testing"
)

func TestPlaceMIG(t *testing.T) {
	h100, _ := GPUModelByKey("H100-80GB")
	cases := []struct {
		layout []string
		starts []int
		giids  []int
		err    string
	}{
		{[]string{"7g.80gb"}, []int{0}, []int{0}, ""},
		// 3g first at 0 leaves no place for 2g+1g+1g: the 3g moves to 4.
		{[]string{"3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"}, []int{4, 0, 2, 3}, []int{2, 3, 9, 10}, ""},
		{[]string{"4g.40gb", "2g.20gb", "1g.10gb"}, []int{0, 4, 6}, []int{1, 5, 13}, ""},
		{[]string{"1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb"}, []int{0, 1, 2, 3, 4, 5, 6}, []int{7, 8, 9, 10, 11, 12, 13}, ""},
		{[]string{"3g.40gb", "3g.40gb"}, []int{0, 4}, []int{1, 2}, ""},
		{[]string{"4g.40gb", "4g.40gb"}, nil, nil, "at most 1 × 4g.40gb"},
		{[]string{"4g.40gb", "3g.40gb", "1g.10gb"}, nil, nil, "needs 8 compute slices"},
		{[]string{"4g.40gb", "3g.40gb"}, []int{0, 4}, []int{1, 2}, ""},
		{[]string{"3g.40gb", "3g.40gb", "1g.10gb"}, nil, nil, "does not fit"},
		{[]string{"1g.20gb", "1g.20gb", "1g.20gb", "1g.20gb", "1g.10gb"}, nil, nil, "does not fit"},
		{[]string{"5g.50gb"}, nil, nil, "unknown MIG profile"},
	}
	for _, c := range cases {
		got, err := h100.PlaceMIG(c.layout)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v: error %v, want %q", c.layout, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v", c.layout, err)
			continue
		}
		for i, p := range got {
			if p.Start != c.starts[i] || p.GIID != c.giids[i] {
				t.Errorf("%v[%d]: start %d gi %d, want %d %d", c.layout, i, p.Start, p.GIID, c.starts[i], c.giids[i])
			}
		}
	}
	l4, _ := GPUModelByKey("L4")
	if _, err := l4.PlaceMIG([]string{"1g.5gb"}); err == nil {
		t.Error("L4 accepted a MIG layout")
	}
}

func TestCatalogConsistency(t *testing.T) {
	for _, name := range InstanceTypeNames() {
		it, _ := InstanceTypeByName(name)
		switch it.Kind {
		case KindNVIDIA:
			if _, ok := GPUModelByKey(it.GPUModel); !ok {
				t.Errorf("%s: unknown model %s", name, it.GPUModel)
			}
		case KindNeuron:
			if it.Neuron == nil || it.Neuron.CoresPerDevice < 1 {
				t.Errorf("%s: no Neuron shape", name)
			}
		}
		if it.Devices < 1 || it.VCPUs < 1 {
			t.Errorf("%s: %+v", name, it)
		}
	}
	for _, key := range GPUModelKeys() {
		m, _ := GPUModelByKey(key)
		if m.ReservedMiB >= m.MemoryMiB || m.IdlePowerW >= m.MaxPowerW || m.IdleSMClockMHz >= m.MaxSMClockMHz {
			t.Errorf("%s: inconsistent %+v", key, m)
		}
		for _, p := range m.MIGProfiles {
			if p.MemoryMiB <= 0 || p.MemoryMiB > m.MemoryMiB {
				t.Errorf("%s %s: memory %d", key, p.Name, p.MemoryMiB)
			}
		}
	}
}
