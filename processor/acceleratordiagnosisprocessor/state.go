package acceleratordiagnosisprocessor

import (
	"math"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// endpoint is one inference endpoint: a workload's servers of one model.
type endpoint struct {
	key      string // accelerator.inference.endpoint
	workload string // <namespace>/<workload>, "" outside Kubernetes
	model    string
	// res are the resource attributes findings and the regressions metric
	// carry (namespace, workload, model, server kind, cluster).
	res pcommon.Map
	// idx is the window being filled (data time / window).
	idx int64
	cur window
	// pods are the endpoint's pods (k8s.pod.uid): the window each was last
	// seen in and its node.
	pods map[string]podSeen
	// replicas is how many pods served the last judged window; a change
	// starts a settling period (settleUntil) whose windows are not learned.
	replicas    int
	settleUntil pcommon.Timestamp
	// rates are the request rates of the endpoint's last windows, oldest
	// first, whose median is its typical traffic.
	rates []float64
	// streak is how many judged windows in a row regressed.
	streak int
	// lastFinding is when each cause was last raised, for the cooldown.
	lastFinding map[string]pcommon.Timestamp
	regressions map[string]int64
	started     pcommon.Timestamp
	seen        time.Time
}

// podSeen is when and where an endpoint's pod was last seen.
type podSeen struct {
	idx  int64
	node string // k8s.node.name, "" outside Kubernetes
}

// window is what an endpoint's servers showed in one window.
type window struct {
	ttft, itl       histogram
	kvMax           float64
	hasKV           bool
	preemptions     float64
	hasPreemptions  bool
	waitSum, runSum float64
	waitN, runN     int
}

// histogram is a sum of bucket deltas with one set of bounds.
type histogram struct {
	bounds []float64
	counts []float64
	total  float64
}

// add folds in one delta; ok is false when the bounds differ from the ones
// already held (another server version), which are kept.
func (h *histogram) add(bounds pcommon.Float64Slice, counts []float64) (ok bool) {
	if h.counts == nil {
		h.bounds = bounds.AsRaw()
		h.counts = make([]float64, len(counts))
	} else if !sameBounds(h.bounds, bounds) || len(h.counts) != len(counts) {
		return false
	}
	for i, c := range counts {
		h.counts[i] += c
		h.total += c
	}
	return true
}

func sameBounds(a []float64, b pcommon.Float64Slice) bool {
	if len(a) != b.Len() {
		return false
	}
	for i := range a {
		if a[i] != b.At(i) {
			return false
		}
	}
	return true
}

// quantile interpolates linearly within the bucket holding q; the last
// (unbounded) bucket answers its lower bound.
func (h *histogram) quantile(q float64) float64 {
	if h.total <= 0 {
		return math.NaN()
	}
	rank := q * h.total
	var seen float64
	for i, c := range h.counts {
		if c <= 0 {
			continue
		}
		if seen+c >= rank {
			lo := 0.0
			if i > 0 {
				lo = h.bounds[i-1]
			}
			if i >= len(h.bounds) {
				return lo
			}
			hi := h.bounds[i]
			return lo + (hi-lo)*(rank-seen)/c
		}
		seen += c
	}
	if len(h.bounds) == 0 {
		return math.NaN()
	}
	return h.bounds[len(h.bounds)-1]
}

// bucketTop is the upper bound of the bucket v falls in: a quantile
// interpolated inside that bucket cannot be told from v. 0 when unknown
// (no bounds, or v in the unbounded last bucket).
func (h *histogram) bucketTop(v float64) float64 {
	for _, b := range h.bounds {
		if v <= b {
			return b
		}
	}
	return 0
}

// cumulative is the last point of a cumulative series.
type cumulative struct {
	t      pcommon.Timestamp
	start  pcommon.Timestamp
	value  float64
	counts []float64
	seen   time.Time
}

// podState ties a pod to its endpoint and the devices it holds.
type podState struct {
	endpoint string
	devices  map[string]struct{}
	seen     time.Time
}

// device is one device resource (a whole GPU, a partition, a consumer's
// copy of a shared GPU) with its readings per window.
type device struct {
	parent string
	shared bool
	pod    string
	win    [devWindows]devWindow
	health []healthEvent
	seen   time.Time
}

// devWindows is how many windows a device keeps: an endpoint's window is
// judged when its servers' next window begins, and a device's readings
// may run a window or two ahead of them (separate receivers and batches).
const devWindows = 4

var emptyWindows = [devWindows]devWindow{{idx: -1}, {idx: -1}, {idx: -1}, {idx: -1}}

// devWindow sums a device's readings over one window.
type devWindow struct {
	idx                 int64
	sm, tensor, proc    float64
	smN, tensorN, procN int
	power, thermal      float64
	powerN, thermalN    int
	throttleSeen        bool
}

// at returns the device's window idx, reset when it held an older one.
func (d *device) at(idx int64) *devWindow {
	w := &d.win[idx%devWindows]
	if w.idx != idx {
		*w = devWindow{idx: idx}
	}
	return w
}

// get returns window idx if the device holds it.
func (d *device) get(idx int64) *devWindow {
	w := &d.win[idx%devWindows]
	if w.idx != idx {
		return nil
	}
	return w
}

type healthEvent struct {
	t   pcommon.Timestamp
	xid bool // else ECC
}

// workloadState is what the Kubernetes side said about a workload.
type workloadState struct {
	coldStarts []pcommon.Timestamp
	// scaleUps are the settled scale-ups: when they settled and how many
	// replicas they added.
	scaleUps []scaleUp
	// imbalance is the last zone_imbalance finding's evidence, zoneCounts
	// the per-zone ready replicas it named; current while the replica
	// gauges still show those counts.
	imbalance   string
	imbalanceAt pcommon.Timestamp
	zoneCounts  map[string]int64
	zonesNow    map[string]int64
	// changed is the last cold start or scaling event (any direction or
	// outcome): the endpoint's windows settle after it.
	changed pcommon.Timestamp
	seen    time.Time
}

type scaleUp struct {
	t     pcommon.Timestamp
	added int64
}

// judgement is a closed window of an endpoint, to be judged.
type judgement struct {
	ep  *endpoint
	idx int64
	w   window
}
