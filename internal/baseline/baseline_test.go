package baseline

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

var (
	k   = Key{"ml/llama-pretrain", "NVIDIA H100 80GB HBM3", "accelerator.tensor.active"}
	t0  = time.Unix(1_700_000_000, 0)
	day = 24 * time.Hour
)

func TestTimeWeightedMeanThenDecay(t *testing.T) {
	s := New(day, 30*day, 3, 10)
	if _, _, warm := s.Get(k); warm {
		t.Fatal("empty store is not warm")
	}
	// 1 minute at 0.6 and 3 minutes at 0.2: with a 1-day half-life the decay
	// over 4 minutes is negligible, so the baseline is the time-weighted mean.
	s.Update(k, 0.6, time.Minute, t0)
	s.Update(k, 0.2, 3*time.Minute, t0)
	v, n, warm := s.Get(k)
	if math.Abs(v-0.3) > 1e-3 || n != 2 || warm {
		t.Fatalf("got %v after %d samples (warm %v), want ≈0.3 and not warm", v, n, warm)
	}
	s.Update(k, 0.3, time.Minute, t0)
	if _, _, warm := s.Get(k); !warm {
		t.Fatal("3 samples is warm")
	}

	// One half-life of activity 1.0: the old mean keeps weight w·½, the new
	// hour... exactly: sum = 0.3·w·½ + 1·d, weight = w·½ + d.
	s2 := New(time.Hour, day, 1, 10)
	s2.Update(k, 0.2, time.Hour, t0)
	s2.Update(k, 1.0, time.Hour, t0)
	want := (0.2*3600*0.5 + 3600) / (3600*0.5 + 3600)
	if v, _, _ := s2.Get(k); math.Abs(v-want) > 1e-12 {
		t.Fatalf("decayed baseline %v, want %v", v, want)
	}
}

func TestIgnoresBadSamples(t *testing.T) {
	s := New(day, day, 1, 10)
	s.Update(k, math.NaN(), time.Minute, t0)
	s.Update(k, -1, time.Minute, t0)
	s.Update(k, 0.5, 0, t0)
	if s.Len() != 0 {
		t.Fatalf("bad samples created %d entries", s.Len())
	}
}

func TestTTLAndCap(t *testing.T) {
	s := New(day, day, 1, 2)
	a, b, c := Key{Workload: "a"}, Key{Workload: "b"}, Key{Workload: "c"}
	s.Update(a, 0.5, time.Minute, t0)
	s.Update(b, 0.5, time.Minute, t0.Add(time.Hour))
	s.Update(c, 0.5, time.Minute, t0.Add(2*time.Hour)) // evicts a, the stalest
	if _, _, ok := s.Get(a); ok || s.Len() != 2 {
		t.Fatalf("cap: len %d, a present %v", s.Len(), ok)
	}
	s.Expire(t0.Add(day + 90*time.Minute)) // b is older than a day, c is not
	if _, _, ok := s.Get(b); ok || s.Len() != 1 {
		t.Fatalf("ttl: len %d", s.Len())
	}
}

func TestMarshalRoundTrip(t *testing.T) {
	s := New(day, 30*day, 1, 10)
	s.Update(k, 0.42, 10*time.Minute, t0)
	s.Update(Key{"ml/other", "trainium", "accelerator.sm.active"}, 0.8, time.Minute, t0)
	if !s.Dirty() {
		t.Fatal("updates make the store dirty")
	}
	data, err := s.Marshal()
	if err != nil || s.Dirty() {
		t.Fatalf("marshal: %v dirty=%v", err, s.Dirty())
	}
	r := New(day, 30*day, 1, 10)
	if dropped, err := r.Unmarshal(data, t0.Add(time.Hour)); err != nil || dropped != 0 {
		t.Fatalf("unmarshal: %v, dropped %d", err, dropped)
	}
	v, n, warm := r.Get(k)
	if math.Abs(v-0.42) > 1e-12 || n != 1 || !warm || r.Len() != 2 {
		t.Fatalf("restored %v %d %v len %d", v, n, warm, r.Len())
	}
	// Restored after the TTL: nothing survives.
	r2 := New(day, day, 1, 10)
	if _, err := r2.Unmarshal(data, t0.Add(2*day)); err != nil {
		t.Fatalf("unmarshal: %v", err)
	}
	if r2.Len() != 0 {
		t.Fatalf("expired baselines restored: %d", r2.Len())
	}
}

func TestUnmarshalRejectsBrokenData(t *testing.T) {
	s := New(day, day, 1, 10)
	for _, tt := range []struct{ data, want string }{
		{`{"version":1,"baselines":[`, "not valid JSON"},
		{`{"version":7,"baselines":[]}`, "unknown format version: 7"},
	} {
		if _, err := s.Unmarshal([]byte(tt.data), t0); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v", tt.data, err)
		}
	}
	dropped, err := s.Unmarshal([]byte(`{"version":1,"baselines":[{"workload":"a","sum":1,"weight":0,"samples":1},{"workload":"","sum":1,"weight":1,"samples":1},{"workload":"ok","sum":1,"weight":2,"samples":4,"updated_unix":1700000000}]}`), t0)
	if err != nil || dropped != 2 || s.Len() != 1 {
		t.Fatalf("dropped %d len %d err %v", dropped, s.Len(), err)
	}
}

// The spread is the time-weighted standard deviation of what was folded
// in: zero for a flat signal, the half-distance for one that alternates
// between two values; it survives a restart, and a baseline stored before
// the spread was kept restores with none.
func TestSpreadOfTheNormal(t *testing.T) {
	s := New(day, 30*day, 1, 10)
	flat, bursty := Key{Workload: "flat"}, Key{Workload: "bursty"}
	for i := 0; i < 10; i++ {
		s.Update(flat, 0.2, time.Minute, t0)
		s.Update(bursty, 0.2+float64(i%2)*4, time.Minute, t0)
	}
	if sd := s.Spread(flat); sd > 1e-9 {
		t.Fatalf("flat signal spread %v, want 0", sd)
	}
	if sd := s.Spread(bursty); math.Abs(sd-2) > 1e-3 {
		t.Fatalf("alternating 0.2/4.2 spread %v, want ≈2", sd)
	}
	if sd := s.Spread(Key{Workload: "none"}); sd != 0 {
		t.Fatalf("unknown baseline spread %v", sd)
	}
	data, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	r := New(day, 30*day, 1, 10)
	if _, err := r.Unmarshal(data, t0); err != nil {
		t.Fatal(err)
	}
	if sd := r.Spread(bursty); math.Abs(sd-2) > 1e-3 {
		t.Fatalf("restored spread %v, want ≈2", sd)
	}
	old := `{"version":1,"baselines":[{"workload":"w","model":"m","signal":"ttft_p95","sum":120,"weight":600,"samples":10,"updated_unix":` +
		fmt.Sprint(t0.Unix()) + `}]}`
	if _, err := r.Unmarshal([]byte(old), t0); err != nil {
		t.Fatal(err)
	}
	w := Key{"w", "m", "ttft_p95"}
	if v, n, _ := r.Get(w); math.Abs(v-0.2) > 1e-12 || n != 10 || r.Spread(w) > 1e-9 {
		t.Fatalf("old record: %v over %d, spread %v; want 0.2, 10, 0", v, n, r.Spread(w))
	}
}
