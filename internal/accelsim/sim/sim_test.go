package sim_test

import (
	"math"
	"reflect"
	"testing"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/fleet"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/sim"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/simtest"
)

const minute = 60.0

type demo struct {
	f *fleet.Fleet
	w *sim.World
}

func newDemo(t testing.TB) demo {
	f := simtest.DemoFleet(t, 0)
	return demo{f: f, w: sim.NewWorld(f)}
}

func (d demo) node(t testing.TB, name string) *fleet.Node {
	n, ok := d.f.Node(name)
	if !ok {
		t.Fatalf("no node %s", name)
	}
	return n
}

func (d demo) pod(t testing.TB, name string) *fleet.Pod {
	for _, p := range d.f.Pods {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("no pod %s", name)
	return nil
}

// gpu returns the sample of a whole GPU, or of MIG slot mig when >= 0.
func (d demo) gpu(t testing.TB, node string, index, mig int, at float64) sim.GPUSample {
	for _, e := range d.w.NodeGPUs(d.node(t, node), at) {
		if e.GPU.Index != index {
			continue
		}
		if mig < 0 && e.MIG == nil || e.MIG != nil && e.MIG.Slot == mig {
			return e.Sample
		}
	}
	t.Fatalf("no entity %s/%d/%d", node, index, mig)
	return sim.GPUSample{}
}

// Two worlds with the same seed agree at the same simulated time however
// often, and in what order, they were read before.
func TestDeterministicWhateverTheReadPattern(t *testing.T) {
	a, b := newDemo(t), newDemo(t)
	end := 47*minute + 3
	for t0 := 0.0; t0 < end; t0 += 37 {
		for _, n := range a.f.Nodes {
			if len(n.GPUs) > 0 {
				a.w.NodeGPUs(n, t0)
			}
		}
		for _, p := range a.f.Pods {
			a.w.Inference(p, t0)
		}
	}
	for i, n := range a.f.Nodes {
		if len(n.GPUs) == 0 {
			continue
		}
		ea, eb := a.w.NodeGPUs(n, end), b.w.NodeGPUs(b.f.Nodes[i], end)
		for j := range ea {
			if !reflect.DeepEqual(ea[j].Sample, eb[j].Sample) {
				t.Fatalf("%s entity %d differs:\n%+v\n%+v", n.Name, j, ea[j].Sample, eb[j].Sample)
			}
		}
	}
	for i, p := range a.f.Pods {
		if p.Inference == nil {
			continue
		}
		if sa, sb := a.w.Inference(p, end), b.w.Inference(b.f.Pods[i], end); !reflect.DeepEqual(sa, sb) {
			t.Fatalf("%s inference differs", p.Name)
		}
	}
	// Reading an earlier time after a later one recomputes from the start.
	early := a.w.NodeGPUs(a.f.Nodes[0], 5*minute)
	fresh := newDemo(t)
	if want := fresh.w.NodeGPUs(fresh.f.Nodes[0], 5*minute); !reflect.DeepEqual(early[2].Sample, want[2].Sample) {
		t.Error("reading back in time does not give the value of a fresh run")
	}
}

func TestProfiles(t *testing.T) {
	d := newDemo(t)
	mean := func(f func(at float64) float64, from, to float64) float64 {
		sum, n := 0.0, 0
		for at := from; at < to; at += 15 {
			sum += f(at)
			n++
		}
		return sum / float64(n)
	}
	gr := func(node string, index, mig int) func(float64) float64 {
		return func(at float64) float64 { return d.gpu(t, node, index, mig, at).GREngine }
	}
	if m := mean(gr("gpu-h100-a", 2, -1), 0, 30*minute); m < 0.86 || m > 0.97 {
		t.Errorf("training-steady activity %.3f, want about 0.92", m)
	}
	before := mean(gr("gpu-h100-a", 6, -1), 0, 15*minute)
	after := mean(gr("gpu-h100-a", 6, -1), 21*minute, 40*minute)
	if before < 0.86 || math.Abs(after/before-0.45) > 0.06 {
		t.Errorf("training-degrading: %.3f before, %.3f after (ratio %.2f, want 0.45)", before, after, after/before)
	}
	over := d.pod(t, "vllm-embed-5c8d9b7f6-q4w8z")
	if m := mean(gr("gpu-a100-a", 4, -1), 0, 20*minute); m > 0.2 {
		t.Errorf("over-provisioned inference activity %.3f, want low", m)
	}
	for at := 0.0; at < 20*minute; at += 60 {
		s := d.w.Inference(over, at)
		if s.KVUsage > 0.15 || s.Waiting != 0 {
			t.Fatalf("over-provisioned inference at %vs: kv %.2f waiting %d", at, s.KVUsage, s.Waiting)
		}
	}
	if s := d.gpu(t, "gpu-a100-a", 4, -1, 10*minute); float64(s.FBUsed) < 0.85*40536 {
		t.Errorf("vLLM preallocates its KV cache: FB used %d MiB", s.FBUsed)
	}
	idle := d.gpu(t, "gpu-a100-a", 5, -1, 10*minute)
	if idle.GREngine != 0 || idle.GPUUtil != 0 || idle.FBUsed == 0 || idle.FBUsed > 2000 {
		t.Errorf("idle but allocated GPU: %+v", idle)
	}
	free := d.gpu(t, "gpu-a100-a", 7, -1, 10*minute)
	if free.GREngine != 0 || free.FBUsed != 0 || free.PowerW > 60 {
		t.Errorf("unallocated GPU: %+v", free)
	}
	bursty := d.pod(t, "sglang-qwen-0")
	lo, hi := 1.0, 0.0
	for at := 0.0; at < 20*minute; at += 10 {
		l := d.w.PodSignal(bursty, at).Load
		lo, hi = math.Min(lo, l), math.Max(hi, l)
	}
	if lo > 0.3 || hi < 0.85 {
		t.Errorf("bursty inference load ranges %.2f..%.2f", lo, hi)
	}
}

// A serving pod's GPU activity, token rate, queue and KV cache all follow
// the same demand.
func TestInferenceFollowsTheGPU(t *testing.T) {
	d := newDemo(t)
	p := d.pod(t, "sglang-qwen-0")
	var act, tput, kv []float64
	for at := 30.0; at < 20*minute; at += 20 {
		act = append(act, d.gpu(t, "gpu-h100-a", 1, 0, at).GREngine)
		s := d.w.Inference(p, at)
		tput = append(tput, s.GenThroughput)
		kv = append(kv, s.KVUsage)
	}
	if c := correlation(act, tput); c < 0.95 {
		t.Errorf("GPU activity and token rate correlate at %.3f", c)
	}
	if c := correlation(act, kv); c < 0.9 {
		t.Errorf("GPU activity and KV-cache usage correlate at %.3f", c)
	}
	// Counters only grow, and histogram buckets stay cumulative.
	prev := d.w.Inference(p, 0)
	for at := 60.0; at < 30*minute; at += 60 {
		s := d.w.Inference(p, at)
		if s.GenTokens < prev.GenTokens || s.Requests < prev.Requests || s.TTFT.Count < prev.TTFT.Count {
			t.Fatalf("counter went down at %vs", at)
		}
		for _, h := range []sim.Histogram{s.TTFT, s.ITL, s.TPOT, s.E2E, s.Queue} {
			for i := 1; i < len(h.Cumulative); i++ {
				if h.Cumulative[i] < h.Cumulative[i-1] || h.Cumulative[i] > h.Count {
					t.Fatalf("histogram not cumulative at %vs: %v count %v", at, h.Cumulative, h.Count)
				}
			}
		}
		prev = s
	}
	if prev.Requests == 0 || prev.FinishedStop+prev.FinishedLen+prev.FinishedAbort != prev.Requests {
		t.Errorf("finished reasons do not add up: %+v", prev)
	}
}

func TestFailures(t *testing.T) {
	d := newDemo(t)
	// XID 79 on H200 GPU 6 at 30m: the GPU is lost, the job on it stalls.
	if s := d.gpu(t, "gpu-h200-a", 6, -1, 29*minute); s.Lost || s.XID != 0 || s.GREngine < 0.8 {
		t.Errorf("before XID 79: %+v", s)
	}
	lost := d.gpu(t, "gpu-h200-a", 6, -1, 31*minute)
	if !lost.Lost || lost.XID != 79 {
		t.Errorf("after XID 79: %+v", lost)
	}
	if s := d.gpu(t, "gpu-h200-a", 5, -1, 31*minute); s.GREngine != 0 || s.FBUsed < 100000 {
		t.Errorf("the job's other GPU after the XID 79: activity %.2f, memory %d", s.GREngine, s.FBUsed)
	}
	// XID 48 on A100 GPU 6 at 20m: double-bit error contained by a row remap.
	dbe := d.gpu(t, "gpu-a100-a", 6, -1, 21*minute)
	if dbe.XID != 48 || dbe.RemapPending != 1 || dbe.UncorrRows != 1 || dbe.GREngine != 0 || dbe.Lost {
		t.Errorf("after XID 48: %+v", dbe)
	}
	// Row remap pending on the unallocated H100 GPU 7 at 10m.
	if s := d.gpu(t, "gpu-h100-a", 7, -1, 9*minute); s.RemapPending != 0 || s.XID != 0 {
		t.Errorf("before the remap: %+v", s)
	}
	if s := d.gpu(t, "gpu-h100-a", 7, -1, 11*minute); s.RemapPending != 1 || s.XID != 63 {
		t.Errorf("after the remap: %+v", s)
	}
	// A serving pod whose GPU dies stops serving and reports unhealthy.
	p := d.pod(t, "pretrain-h200-0")
	if !d.w.PodSignal(p, 31*minute).Stalled || d.w.PodSignal(p, 29*minute).Stalled {
		t.Error("the training job does not stall at the XID 79")
	}
}

func TestEnergyIntegratesPower(t *testing.T) {
	d := newDemo(t)
	e0 := d.gpu(t, "gpu-h100-a", 2, -1, 10*minute)
	e1 := d.gpu(t, "gpu-h100-a", 2, -1, 20*minute)
	joules := float64(e1.EnergyMJ-e0.EnergyMJ) / 1000
	avg := joules / (10 * minute)
	if avg < 550 || avg > 700 {
		t.Errorf("average power from energy %.0f W, gauge says %.0f W", avg, e1.PowerW)
	}
}

func correlation(x, y []float64) float64 {
	n := float64(len(x))
	var sx, sy, sxx, syy, sxy float64
	for i := range x {
		sx += x[i]
		sy += y[i]
		sxx += x[i] * x[i]
		syy += y[i] * y[i]
		sxy += x[i] * y[i]
	}
	return (n*sxy - sx*sy) / math.Sqrt((n*sxx-sx*sx)*(n*syy-sy*sy))
}
