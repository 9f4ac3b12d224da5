package sim

import (
	"math"
	"sync"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/detrand"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/fleet"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/scenario"
)

// Server-side limits the gauges respect.
const (
	maxNumSeqs         = 256 // vLLM --max-num-seqs default
	kvTokensPerGiB     = 8192
	maxWaitingAfterDie = 128
)

// InferenceSnapshot is an inference server's state at one instant.
type InferenceSnapshot struct {
	Healthy bool
	Running int64
	Waiting int64
	// KVUsage is the fraction of the KV cache in use (0..1).
	KVUsage        float64
	MaxTotalTokens int64 // KV pool capacity in tokens
	GenThroughput  float64
	CacheHitRate   float64
	PromptTokens   float64
	GenTokens      float64
	CachedTokens   float64
	PrefixQueries  float64
	PrefixHits     float64
	Preemptions    float64
	// Requests by finished_reason: stop, length, abort, error.
	Requests      float64
	FinishedStop  float64
	FinishedLen   float64
	FinishedAbort float64
	FinishedError float64
	TTFT          Histogram
	ITL           Histogram
	TPOT          Histogram
	E2E           Histogram
	Queue         Histogram
}

type inferenceModel struct {
	mu       sync.Mutex
	pm       *podModel
	capacity float64 // generated tokens/s at load 1
	slow     float64 // latency factor of the model's size
	kvTokens int64
	tick     int64 // next tick to add
	carry    float64
	snap     InferenceSnapshot
}

func newInferenceModel(pm *podModel) *inferenceModel {
	inf := pm.pod.Inference
	speed := modelSpeed(inf.Model)
	im := &inferenceModel{pm: pm, capacity: math.Max(pm.capacity, 1) * speed, slow: math.Sqrt(1 / speed)}
	if inf.Server == scenario.ServerSGLang {
		im.snap.TTFT = newHistogram(SGLangTTFTBuckets)
		im.snap.ITL = newHistogram(SGLangITLBuckets)
		im.snap.E2E = newHistogram(SGLangE2EBuckets)
		im.snap.TPOT = newHistogram(VLLMTokenBuckets)
		im.snap.Queue = newHistogram(SGLangE2EBuckets)
	} else {
		im.snap.TTFT = newHistogram(VLLMTTFTBuckets)
		im.snap.ITL = newHistogram(VLLMTokenBuckets)
		im.snap.TPOT = newHistogram(VLLMTokenBuckets)
		im.snap.E2E = newHistogram(VLLMRequestBuckets)
		im.snap.Queue = newHistogram(VLLMRequestBuckets)
	}
	// The KV pool: the memory the server holds beyond the weights.
	im.kvTokens = int64(math.Max(16384, pm.capacity/2600*40*kvTokensPerGiB))
	return im
}

// latencies are the medians at one load.
type latencies struct {
	queue, ttft, itl, tpot, e2e float64
}

func (im *inferenceModel) latencies(load, promptTok, outTok, slowdown float64, kvFull bool) latencies {
	slow := im.slow * slowdown
	var l latencies
	if load > 0.85 {
		l.queue = 0.05 + 4*(load-0.85)/0.15
	} else {
		l.queue = 0.002 + 0.01*load
	}
	l.ttft = (0.025+0.04*promptTok/600)*slow + 0.6*math.Pow(math.Max(0, load-0.75), 1.5) + l.queue
	if kvFull {
		// Preempted requests are recomputed from their prompt.
		l.ttft *= kvRecompute
	}
	l.itl = 0.009 * (1 + 1.4*load) * slow
	l.tpot = l.itl * 1.03
	l.e2e = l.ttft + l.tpot*outTok
	return l
}

func (im *inferenceModel) hitRatio(k int64) float64 {
	base := 0.3
	switch im.pm.pod.Workload.Profile {
	case scenario.ProfileInferenceSteady:
		base = 0.42
	case scenario.ProfileInferenceOverprov:
		base = 0.12
	}
	return clamp(base+0.05*detrand.Smooth(im.pm.key^13, k, 40), 0, 0.95)
}

// tokens are the mean prompt and output lengths at tick k.
func (im *inferenceModel) tokens(k int64) (prompt, out float64) {
	key := im.pm.key
	prompt, out = 600+180*detrand.Smooth(key^12, k, 50), 200+60*detrand.Smooth(key^11, k, 40)
	if after := im.pm.pod.Workload.LongPromptsAfter; after > 0 && float64(k)*TickSeconds >= after.Seconds() {
		prompt *= longPromptFactor
	}
	return prompt, out
}

// Long-context traffic and a KV cache it fills.
const (
	longPromptFactor = 4
	// kvFullAt is the KV-cache usage from which the scheduler preempts.
	kvFullAt    = 0.97
	kvRecompute = 1.8
)

// kvUsage is the fraction of the KV cache in use at a load with requests
// context× as long as ordinary traffic's.
func kvUsage(load, context, noise float64) float64 {
	return clamp((0.03+0.92*math.Pow(load, 1.3))*context+0.01*noise, 0, 0.99)
}

// context is how many times longer than ordinary traffic's the requests'
// context (prompt and output) is at tick k.
func (im *inferenceModel) context(k int64, prompt, out float64) float64 {
	if after := im.pm.pod.Workload.LongPromptsAfter; after > 0 && float64(k)*TickSeconds >= after.Seconds() {
		return (prompt + out) / (prompt/longPromptFactor + out)
	}
	return 1
}

// step adds the requests finished during tick k.
func (im *inferenceModel) step(k int64) {
	s := im.pm.signal(k)
	load := s.Load
	if s.Stalled {
		load = 0
	}
	prompt, out := im.tokens(k)
	rps := load * im.capacity / out
	expected := rps*TickSeconds + im.carry
	n := math.Floor(expected)
	im.carry = expected - n
	if n == 0 {
		return
	}
	kvFull := kvUsage(load, im.context(k, prompt, out), 0) >= kvFullAt
	l := im.latencies(load, prompt, out, im.pm.slowdown(k), kvFull)
	sn := &im.snap
	sn.Requests += n
	sn.FinishedStop = math.Floor(sn.Requests * 0.86)
	sn.FinishedLen = math.Floor(sn.Requests * 0.13)
	sn.FinishedAbort = sn.Requests - sn.FinishedStop - sn.FinishedLen
	sn.PromptTokens += math.Round(n * prompt)
	sn.GenTokens += math.Round(n * out)
	q := math.Round(n * prompt)
	h := math.Round(q * im.hitRatio(k))
	sn.PrefixQueries += q
	sn.PrefixHits += h
	sn.CachedTokens += h
	switch {
	case kvFull:
		sn.Preemptions += math.Ceil(n * 0.08)
	case load > 0.92:
		sn.Preemptions += math.Floor(n * 0.02)
	}
	sn.TTFT.observeLogNormal(n, l.ttft, 0.55)
	sn.ITL.observeLogNormal(math.Round(n*(out-1)), l.itl, 0.35)
	sn.TPOT.observeLogNormal(n, l.tpot, 0.2)
	sn.E2E.observeLogNormal(n, l.e2e, 0.3)
	sn.Queue.observeLogNormal(n, l.queue, 0.9)
}

// snapshot returns the state at simulated time t.
func (im *inferenceModel) snapshot(t float64) InferenceSnapshot {
	im.mu.Lock()
	defer im.mu.Unlock()
	k := Tick(t)
	if k < im.tick {
		fresh := newInferenceModel(im.pm)
		im.tick, im.carry, im.snap = 0, 0, fresh.snap
	}
	for im.tick < k {
		im.step(im.tick)
		im.tick++
	}
	out := im.snap
	out.TTFT, out.ITL, out.TPOT, out.E2E, out.Queue = im.snap.TTFT.clone(), im.snap.ITL.clone(), im.snap.TPOT.clone(), im.snap.E2E.clone(), im.snap.Queue.clone()
	s := im.pm.signal(k)
	key := im.pm.key
	out.MaxTotalTokens = im.kvTokens
	out.CacheHitRate = im.hitRatio(k)
	out.Healthy = !s.Stalled
	if s.Stalled {
		// The engine died with its GPU: nothing runs, clients keep queueing.
		out.Waiting = int64(math.Min(maxWaitingAfterDie, math.Round(s.StalledFor/60*8)))
		return out
	}
	prompt, tokOut := im.tokens(k)
	rps := s.Load * im.capacity / tokOut
	l := im.latencies(s.Load, prompt, tokOut, im.pm.slowdown(k), kvUsage(s.Load, im.context(k, prompt, tokOut), 0) >= kvFullAt)
	out.Running = int64(math.Min(maxNumSeqs, math.Round(rps*l.e2e)))
	if s.Load > 0.85 {
		out.Waiting = int64(math.Max(0, math.Round((s.Load-0.85)/0.15*28+2*detrand.White(key^14, k))))
	}
	out.KVUsage = kvUsage(s.Load, im.context(k, prompt, tokOut), detrand.White(key^15, k))
	out.GenThroughput = rps * tokOut
	return out
}

// Inference returns the state of a pod's inference server at time t.
func (w *World) Inference(p *fleet.Pod, t float64) InferenceSnapshot {
	pm := w.pods[p]
	if pm == nil || pm.inference == nil {
		return InferenceSnapshot{}
	}
	return pm.inference.snapshot(t)
}

// PodSignal exposes a pod's workload at time t (for tests and endpoints).
func (w *World) PodSignal(p *fleet.Pod, t float64) Signal {
	pm := w.pods[p]
	if pm == nil {
		return Signal{}
	}
	return pm.signal(Tick(t))
}
