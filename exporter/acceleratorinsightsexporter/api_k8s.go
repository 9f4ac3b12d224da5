package acceleratorinsightsexporter

import (
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorinsightsexporter/internal/fleet"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorinsightsexporter/internal/k8sstore"
	s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

// k8sRecords is how many records of each kind (cold starts, scaling
// events, unschedulable events, zone and latency findings) are kept.
const k8sRecords = 1000

// lifecycleAnswer is GET /api/v1/lifecycle: an inference endpoint's life
// on Kubernetes (accelerator_k8s) and the diagnosis of its latency
// (latency_regression findings), for the Inference and Reliability pages.
type lifecycleAnswer struct {
	GeneratedAt        time.Time          `json:"generated_at"`
	ColdStarts         coldStarts         `json:"cold_starts"`
	Scaling            []k8sstore.Scaling `json:"scaling"`
	Zones              []zoneRow          `json:"zones"`
	Unschedulable      unschedulable      `json:"unschedulable"`
	LatencyRegressions []k8sstore.Finding `json:"latency_regressions"`
}

type coldStarts struct {
	// ByWorkload is each workload's anatomy from the receiver's
	// histograms (all cold starts since the receiver started).
	ByWorkload []coldStartWorkload `json:"by_workload"`
	// Recent are the newest cold-start records, newest first.
	Recent []k8sstore.ColdStart `json:"recent"`
}

type coldStartWorkload struct {
	k8sstore.Workload
	// ColdStarts counts the cold starts measured (the total phase's count).
	ColdStarts uint64           `json:"cold_starts"`
	Phases     []k8sstore.Phase `json:"phases"`
}

// zoneRow is one workload's spread over zones: ready replicas (the
// receiver's gauge) and the request rate of its endpoints by the zone of
// their node.
type zoneRow struct {
	k8sstore.Workload
	Zones []zoneCell `json:"zones"`
	// Imbalanced: the newest zone_imbalance finding describes the
	// replicas as they are now.
	Imbalanced bool              `json:"imbalanced"`
	Finding    *k8sstore.Finding `json:"finding"`
}

type zoneCell struct {
	Zone        string   `json:"zone"`
	Replicas    *int64   `json:"replicas"`
	RequestRate *float64 `json:"request_rate"`
	Endpoints   int      `json:"endpoints"`
}

type unschedulable struct {
	// Pods sums the series (a pod lacking two resources counts twice, as
	// the receiver counts it per resource).
	Pods   int64                         `json:"pods"`
	Series []k8sstore.Unschedulable      `json:"series"`
	Events []k8sstore.UnschedulableEvent `json:"events"`
}

// maxLifecycleRecords bounds the records one answer lists of each kind.
const maxLifecycleRecords = 100

func (a *api) lifecycleRoutes(mux *routeMux, st *k8sstore.Store) {
	mux.HandleFunc("GET /api/v1/lifecycle", a.withView(nil, func(v *fleet.View, f fleet.Filter, _ *http.Request) (any, error) {
		return lifecycle(v, f, st.Snapshot()), nil
	}))
}

// lifecycle filters the snapshot by the keys its records carry (cluster,
// namespace, model; zone and instance type where a record has them) and
// joins the endpoints of the view to the zones of their nodes.
func lifecycle(v *fleet.View, f fleet.Filter, snap k8sstore.Snapshot) lifecycleAnswer {
	out := lifecycleAnswer{GeneratedAt: v.Now().UTC(), Scaling: []k8sstore.Scaling{}, Zones: []zoneRow{},
		LatencyRegressions: []k8sstore.Finding{},
		ColdStarts:         coldStarts{ByWorkload: []coldStartWorkload{}, Recent: []k8sstore.ColdStart{}},
		Unschedulable:      unschedulable{Series: []k8sstore.Unschedulable{}, Events: []k8sstore.UnschedulableEvent{}}}
	for _, w := range snap.Phases {
		if !workloadMatches(f, w.Workload) {
			continue
		}
		row := coldStartWorkload{Workload: w.Workload, Phases: w.Phases}
		for _, p := range w.Phases {
			if p.Phase == s.PhaseTotal {
				row.ColdStarts = p.Count
			}
		}
		out.ColdStarts.ByWorkload = append(out.ColdStarts.ByWorkload, row)
	}
	for _, c := range snap.ColdStarts {
		if workloadMatches(f, c.Workload) && keyMatches(f, "node", c.Node) && len(out.ColdStarts.Recent) < maxLifecycleRecords {
			out.ColdStarts.Recent = append(out.ColdStarts.Recent, c)
		}
	}
	for _, sc := range snap.Scalings {
		if workloadMatches(f, sc.Workload) && len(out.Scaling) < maxLifecycleRecords {
			out.Scaling = append(out.Scaling, sc)
		}
	}
	imbalance := map[k8sstore.Workload]*k8sstore.Finding{}
	for i := range snap.Findings {
		x := &snap.Findings[i]
		if !workloadMatches(f, x.Workload) {
			continue
		}
		switch x.Kind {
		case s.FindingZoneImbalance:
			if imbalance[x.Workload] == nil { // newest first
				imbalance[x.Workload] = x
			}
		case s.FindingLatencyRegression:
			if len(out.LatencyRegressions) < maxLifecycleRecords {
				out.LatencyRegressions = append(out.LatencyRegressions, *x)
			}
		}
	}
	out.Zones = zoneRows(v, f, snap.Zones, imbalance)
	for _, u := range snap.Unschedulable {
		if keyMatches(f, "cluster", u.Cluster) && keyMatches(f, "zone", u.Zone) && keyMatches(f, "instance_type", u.InstanceType) {
			out.Unschedulable.Series = append(out.Unschedulable.Series, u)
			out.Unschedulable.Pods += u.Pods
		}
	}
	for _, e := range snap.Events {
		if workloadMatches(f, e.Workload) && keyMatches(f, "zone", e.Zone) && keyMatches(f, "instance_type", e.InstanceType) &&
			len(out.Unschedulable.Events) < maxLifecycleRecords {
			out.Unschedulable.Events = append(out.Unschedulable.Events, e)
		}
	}
	return out
}

func zoneRows(v *fleet.View, f fleet.Filter, zones []k8sstore.WorkloadZones, imbalance map[k8sstore.Workload]*k8sstore.Finding) []zoneRow {
	rows := []zoneRow{}
	if len(zones) == 0 {
		return rows
	}
	nodeZone := nodeZones(v)
	type nsw struct{ ns, w string }
	traffic := map[nsw]map[string]*zoneCell{}
	for _, e := range v.Inference(fleet.Filter{}).Endpoints {
		k := nsw{e.Namespace, e.Workload}
		z := nodeZone[e.Node]
		if traffic[k] == nil {
			traffic[k] = map[string]*zoneCell{}
		}
		c := traffic[k][z]
		if c == nil {
			c = &zoneCell{Zone: z}
			traffic[k][z] = c
		}
		c.Endpoints++
		if e.RequestRate != nil {
			sum := *e.RequestRate
			if c.RequestRate != nil {
				sum += *c.RequestRate
			}
			c.RequestRate = &sum
		}
	}
	for _, w := range zones {
		if !workloadMatches(f, w.Workload) {
			continue
		}
		row := zoneRow{Workload: w.Workload, Zones: []zoneCell{}, Finding: imbalance[w.Workload]}
		byZone := map[string]*zoneCell{}
		for z, n := range w.Zones {
			n := n
			byZone[z] = &zoneCell{Zone: z, Replicas: &n}
		}
		for z, c := range traffic[nsw{w.Namespace, w.Name}] {
			if z == "" {
				continue
			}
			x := byZone[z]
			if x == nil {
				x = &zoneCell{Zone: z}
				byZone[z] = x
			}
			x.Endpoints, x.RequestRate = c.Endpoints, fleet.Round4Ptr(c.RequestRate)
		}
		for _, c := range byZone {
			if keyMatches(f, "zone", c.Zone) {
				row.Zones = append(row.Zones, *c)
			}
		}
		sort.Slice(row.Zones, func(i, j int) bool { return row.Zones[i].Zone < row.Zones[j].Zone })
		row.Imbalanced = row.Finding != nil && evidenceMatches(row.Finding.Evidence, w.Zones)
		rows = append(rows, row)
	}
	return rows
}

// nodeZones maps every node of the view to its zone.
func nodeZones(v *fleet.View) map[string]string {
	out := map[string]string{}
	for page := 1; ; page++ {
		p := v.Devices(fleet.Filter{}, page, 500)
		for _, n := range p.Nodes {
			out[n.Node] = n.Zone
		}
		if page*500 >= p.TotalNodes {
			return out
		}
	}
}

// evidenceMatches reports whether a zone_imbalance finding's evidence
// (`replicas_<zone>=<n> …`) is the replica count of every zone now: the
// receiver raises the finding when a workload becomes unbalanced and says
// nothing when it is balanced again.
func evidenceMatches(evidence string, zones map[string]int64) bool {
	seen := 0
	for _, kv := range strings.Fields(evidence) {
		k, val, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(k, "replicas_") {
			continue
		}
		n, err := strconv.ParseInt(val, 10, 64)
		if err != nil {
			return false
		}
		if have, ok := zones[strings.TrimPrefix(k, "replicas_")]; !ok || have != n {
			return false
		}
		seen++
	}
	return seen > 0 && seen == len(zones)
}

func workloadMatches(f fleet.Filter, w k8sstore.Workload) bool {
	return keyMatches(f, "cluster", w.Cluster) && keyMatches(f, "namespace", w.Namespace) && keyMatches(f, "model", w.Model)
}

// keyMatches: a filter key not set matches; one set matches its values.
func keyMatches(f fleet.Filter, key, v string) bool {
	vs, ok := f[key]
	if !ok {
		return true
	}
	for _, x := range vs {
		if x == v {
			return true
		}
	}
	return false
}
