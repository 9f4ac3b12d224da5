package fleet

import (
	"cmp"
	"slices"
)

// TokensPerSecond is token throughput by type.
type TokensPerSecond struct {
	Input  *float64 `json:"input"`
	Output *float64 `json:"output"`
}

// EndpointDevice is a device an endpoint's pod holds.
type EndpointDevice struct {
	ID          string   `json:"id"`
	Node        string   `json:"node"`
	Utilization *float64 `json:"utilization"`
	Share       float64  `json:"share"`
}

// Endpoint is one inference endpoint and model.
type Endpoint struct {
	Endpoint             string           `json:"endpoint"`
	Server               string           `json:"server"`
	Model                string           `json:"model"`
	Namespace            string           `json:"namespace"`
	Pod                  string           `json:"pod"`
	Node                 string           `json:"node"`
	Team                 string           `json:"team"`
	Workload             string           `json:"workload"`
	RequestRate          *float64         `json:"request_rate"`
	TTFT                 Quantiles        `json:"ttft"`
	ITL                  Quantiles        `json:"itl"`
	E2E                  Quantiles        `json:"e2e"`
	RequestsRunning      *float64         `json:"requests_running"`
	RequestsWaiting      *float64         `json:"requests_waiting"`
	KVCacheUtilization   *float64         `json:"kv_cache_utilization"`
	PrefixCacheHitRatio  *float64         `json:"prefix_cache_hit_ratio"`
	PreemptionsPerSecond *float64         `json:"preemptions_per_second"`
	TokensPerSecond      TokensPerSecond  `json:"tokens_per_second"`
	Devices              []EndpointDevice `json:"devices"`
}

// InferenceList is GET /api/v1/inference.
type InferenceList struct {
	Endpoints []Endpoint `json:"endpoints"`
}

func rq(q Quantiles) Quantiles {
	return Quantiles{Round4Ptr(q.P50), Round4Ptr(q.P90), Round4Ptr(q.P99)}
}

// Inference lists endpoints with the devices their pods hold (joined by
// pod uid, else namespace and pod name).
func (v *View) Inference(f Filter) InferenceList {
	type podKey struct{ uid, ns, pod string }
	held := map[podKey][]EndpointDevice{}
	for _, g := range v.Groups {
		g.visitShares(v.Idle, func(r *Resource, share float64, _ string, util *float64) {
			if r.Pod == "" {
				return
			}
			d := EndpointDevice{ID: r.HWID, Node: r.Node, Utilization: Round4Ptr(util), Share: Round4(share)}
			if r.PodUID != "" {
				held[podKey{uid: r.PodUID}] = append(held[podKey{uid: r.PodUID}], d)
			}
			held[podKey{ns: r.Namespace, pod: r.Pod}] = append(held[podKey{ns: r.Namespace, pod: r.Pod}], d)
		})
	}
	out := InferenceList{Endpoints: []Endpoint{}}
	for i := range v.Snap.Servers {
		sv := &v.Snap.Servers[i]
		id := Identity{Node: sv.Node, Cluster: sv.Cluster, Team: sv.Team, Namespace: sv.Namespace}
		if !f.match("cluster", id.Cluster) || !f.match("node", id.Node) || !f.match("team", id.Team) || !f.match("namespace", id.Namespace) {
			continue
		}
		e := Endpoint{Endpoint: sv.Endpoint, Server: sv.Provider, Model: sv.Model, Namespace: sv.Namespace, Pod: sv.Pod,
			Node: sv.Node, Team: sv.Team, Workload: sv.Workload, RequestRate: Round4Ptr(sv.RequestRate),
			TTFT: rq(sv.TTFT), ITL: rq(sv.ITL), E2E: rq(sv.E2E), RequestsRunning: Round4Ptr(sv.RequestsRunning),
			RequestsWaiting: Round4Ptr(sv.RequestsWaiting), KVCacheUtilization: Round4Ptr(sv.KVCache), PrefixCacheHitRatio: Round4Ptr(sv.PrefixHitRatio),
			PreemptionsPerSecond: Round4Ptr(sv.PreemptionsPerSec),
			TokensPerSecond:      TokensPerSecond{Round4Ptr(sv.InputTokensPerSec), Round4Ptr(sv.OutputTokensPerS)}}
		var devs []EndpointDevice
		if sv.PodUID != "" {
			devs = held[podKey{uid: sv.PodUID}]
		}
		if devs == nil && sv.Pod != "" {
			devs = held[podKey{ns: sv.Namespace, pod: sv.Pod}]
		}
		e.Devices = append([]EndpointDevice{}, devs...)
		slices.SortFunc(e.Devices, func(a, b EndpointDevice) int { return cmp.Or(cmp.Compare(a.Node, b.Node), cmp.Compare(a.ID, b.ID)) })
		out.Endpoints = append(out.Endpoints, e)
	}
	slices.SortFunc(out.Endpoints, func(a, b Endpoint) int {
		return cmp.Or(cmp.Compare(a.Endpoint, b.Endpoint), cmp.Compare(a.Model, b.Model), cmp.Compare(a.Namespace+"/"+a.Pod, b.Namespace+"/"+b.Pod))
	})
	return out
}
