//go:build e2e

package e2e

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/endpoints"
	"github.com/otelcol-accel/otelcol-accel/internal/e2etest"
	"github.com/otelcol-accel/otelcol-accel/internal/pricing"
)

// Money is conserved across the whole demo fleet: for every physical device
// the simulator runs, the accelerator.price of every resource the gateway
// exports for it — the device's own resource (for what its partitions and
// consumers leave), its MIG instances and NeuronCores, one copy per consumer
// of a time-sliced, MPS or DRA-shared device — adds up to the
// device's price in the bundled table (instance price / accelerator count),
// each priced at the share it says it has; every pod that holds a device is
// on one of them with its team; and nobody's MIG instances are unallocated.
//
//	go test -tags e2e -count=1 -run Conservation ./test/e2e/   (after make dist accelsim)
//
// The same fleet run checks that every physical quantity is counted once
// (checkCountedOnce).
func TestConservationOfDevicePrices(t *testing.T) {
	sink := e2etest.StartOTLPSink(t, e2etest.SinkOptions{Keep: true})
	fleet := e2etest.StartFleet(t, e2etest.FleetOptions{
		// With timestamps the test can tell the latest scrape's series from
		// those the exporter keeps (metric_expiration) after a resource's
		// attributes changed.
		GatewayConfigs: []string{"yaml:exporters::prometheus::send_timestamps: true", gatewayOTLPCopy(t, sink)},
	})
	table, err := pricing.Bundled()
	if err != nil {
		t.Fatal(err)
	}
	devices := conservedDevices(t, fleet.Sim.Endpoints, table)
	url := fleet.Gateway.PrometheusURL()

	var groups map[deviceKey][]priceSeries
	e2etest.Await(t, 3*time.Minute, "every device's accelerator_price_USD_per_hour at the gateway", func() (string, bool) {
		groups, err = scrapeDevicePrices(url)
		if err != nil {
			return err.Error(), false
		}
		var missing []string
		for _, d := range devices {
			if len(groups[d.key]) == 0 {
				missing = append(missing, d.key.String())
			}
		}
		return "devices without it:\n  " + strings.Join(missing, "\n  "), len(missing) == 0
	})

	// A property of every scrape, not of a lucky one: three in a row.
	for round := 0; round < 3 && !t.Failed(); round++ {
		if round > 0 {
			time.Sleep(2500 * time.Millisecond)
			if groups, err = scrapeDevicePrices(url); err != nil {
				t.Fatal(err)
			}
		}
		for _, d := range devices {
			checkDevice(t, round, d, latest(groups[d.key]))
		}
	}

	checkCountedOnce(t, fleet, sink, devices)
	checkAdviceNamesAHolder(t, filepath.Join(fleet.OutDir, "events.jsonl"))
}

// deviceKey names a physical device: device ids repeat across nodes
// (neuron_device_0 on every Neuron node).
type deviceKey struct{ node, id string }

func (k deviceKey) String() string { return k.node + " " + k.id }

// conservedDevice is one physical device and what the gateway must say of it.
type conservedDevice struct {
	key   deviceKey
	price float64 // USD per device-hour
	dev   endpoints.Device
	teams map[string]string // pod → team
}

func conservedDevices(t *testing.T, f *endpoints.File, table *pricing.Table) []conservedDevice {
	t.Helper()
	var out []conservedDevice
	for _, node := range f.Nodes {
		row, match := table.Lookup(node.InstanceType, node.Region, "")
		if match != pricing.ExactMatch || row.AcceleratorCount <= 0 {
			t.Fatalf("node %s: %s in %s has no row of its own in the bundled table (%v)", node.Name, node.InstanceType, node.Region, match)
		}
		teams := map[string]string{}
		for _, p := range node.Pods {
			teams[p.Name] = p.Team
		}
		for _, d := range node.Devices {
			out = append(out, conservedDevice{
				key:   deviceKey{node.Name, d.ID},
				price: row.PricePerHour / float64(row.AcceleratorCount),
				dev:   d,
				teams: teams,
			})
		}
	}
	if len(out) == 0 {
		t.Fatal("endpoints.json lists no devices")
	}
	return out
}

// priceSeries is one accelerator_price_USD_per_hour series.
type priceSeries struct {
	labels map[string]string
	value  float64
	ms     int64 // sample timestamp
}

func (p priceSeries) share() float64 {
	s, ok := p.labels["accelerator_partition_share"]
	if !ok {
		return 1 // missing means the whole device
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return math.NaN()
	}
	return v
}

func (p priceSeries) String() string {
	return fmt.Sprintf("%s partition %s/%s share %s %s pod %q = %.6f",
		p.labels["hw_id"], p.labels["accelerator_partition_type"], p.labels["accelerator_partition_id"],
		p.labels["accelerator_partition_share"], p.labels["accelerator_allocation_state"], p.labels["k8s_pod_name"], p.value)
}

// scrapeDevicePrices groups the gateway's price series by physical device:
// hw_parent when present (MIG instances, NeuronCores, time-sliced and MPS
// copies), else hw_id.
func scrapeDevicePrices(url string) (map[deviceKey][]priceSeries, error) {
	fams, err := e2etest.ScrapePrometheus(url)
	if err != nil {
		return nil, err
	}
	out := map[deviceKey][]priceSeries{}
	fam, ok := fams["accelerator_price_USD_per_hour"]
	if !ok {
		return out, nil
	}
	for _, m := range fam.GetMetric() {
		ps := priceSeries{labels: labelMap(m), value: m.GetGauge().GetValue(), ms: m.GetTimestampMs()}
		id := ps.labels["hw_parent"]
		if id == "" {
			id = ps.labels["hw_id"]
		}
		k := deviceKey{ps.labels["k8s_node_name"], id}
		out[k] = append(out[k], ps)
	}
	return out, nil
}

func labelMap(m *dto.Metric) map[string]string {
	l := make(map[string]string, len(m.GetLabel()))
	for _, lp := range m.GetLabel() {
		l[lp.GetName()] = lp.GetValue()
	}
	return l
}

// latest keeps the series of the device's newest scrape. The exporter keeps
// a series for metric_expiration after its resource's attributes change
// (a remainder's share, a pod arriving); those are history, not the device.
// Series of one scrape carry the same data-point time, give or take the
// receiver's own timing, well under the agents' 2 s interval.
func latest(all []priceSeries) []priceSeries {
	var newest int64
	for _, p := range all {
		newest = max(newest, p.ms)
	}
	out := make([]priceSeries, 0, len(all))
	for _, p := range all {
		if p.ms >= newest-1000 {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

func checkDevice(t *testing.T, round int, d conservedDevice, ss []priceSeries) {
	t.Helper()
	describe := func() string {
		lines := make([]string, len(ss))
		for i, s := range ss {
			lines[i] = s.String()
		}
		return strings.Join(lines, "\n    ")
	}
	sum := 0.0
	for _, s := range ss {
		sum += s.value
		if share := s.share(); math.IsNaN(share) || math.Abs(s.value-d.price*share) > 1e-9 {
			t.Errorf("scrape %d, %s: %s is not the device price %.6f × its share", round, d.key, s, d.price)
		}
	}
	if math.Abs(sum-d.price) > 1e-6 {
		t.Errorf("scrape %d, %s: prices add up to %.9f USD/h, the device costs %.9f:\n    %s", round, d.key, sum, d.price, describe())
	}

	// Every holder is on a series of what it holds, with its team.
	held := func(h endpoints.Holder, of func(priceSeries) bool, what string) {
		for _, s := range ss {
			if of(s) && s.labels["k8s_pod_name"] == h.Pod && s.labels["accelerator_team"] == d.teams[h.Pod] {
				return
			}
		}
		t.Errorf("scrape %d, %s: no series of %s names its holder %s/%s (team %q):\n    %s",
			round, d.key, what, h.Namespace, h.Pod, d.teams[h.Pod], describe())
	}
	anyOf := func(priceSeries) bool { return true }
	for _, h := range d.dev.Holders {
		held(h, anyOf, "the device")
	}
	for _, m := range d.dev.MIG {
		inst := func(s priceSeries) bool {
			id := s.labels["hw_id"]
			return id == m.UUID || id == d.dev.ID+"/gi"+strconv.Itoa(m.GIID)
		}
		what := fmt.Sprintf("MIG instance gi%d (%s)", m.GIID, m.Profile)
		for _, h := range m.Holders {
			held(h, inst, what)
		}
		if len(m.Holders) == 0 {
			checkUnallocated(t, round, d, ss, inst, what, describe)
		}
	}
	if len(d.dev.Holders) == 0 && len(d.dev.MIG) == 0 {
		checkUnallocated(t, round, d, ss, anyOf, "the unheld device", describe)
	}
}

// checkUnallocated: what nobody holds has series, all of them unallocated.
func checkUnallocated(t *testing.T, round int, d conservedDevice, ss []priceSeries, of func(priceSeries) bool, what string, describe func() string) {
	t.Helper()
	n := 0
	for _, s := range ss {
		if !of(s) {
			continue
		}
		n++
		if s.labels["accelerator_allocation_state"] != "unallocated" {
			t.Errorf("scrape %d, %s: %s is held by nobody but its series says %q: %s",
				round, d.key, what, s.labels["accelerator_allocation_state"], s)
		}
	}
	if n == 0 {
		t.Errorf("scrape %d, %s: %s has no price series:\n    %s", round, d.key, what, describe())
	}
}

// checkAdviceNamesAHolder: rightsizing, training-efficiency and
// inference-under-capacity findings are advice to whoever runs the
// workload; each must name a pod, an ECS task, a job or a workload. The
// demo raises such findings within a minute of data (findings.window 1m);
// waiting for one keeps the check from passing on an empty file.
func checkAdviceNamesAHolder(t *testing.T, path string) {
	t.Helper()
	advice := map[string]bool{"rightsizing": true, "training_efficiency": true, "inference_under_capacity": true}
	holderKeys := []string{"k8s.pod.name", "aws.ecs.task.arn", "accelerator.job.id", "accelerator.workload.name"}
	deadline := time.Now().Add(90 * time.Second)
	for {
		seen := 0
		for _, ev := range readEvents(t, path) {
			kind, _ := ev["accelerator.finding.kind"].(string)
			if ev["event.name"] != "accelerator.finding" || !advice[kind] {
				continue
			}
			seen++
			named := false
			for _, k := range holderKeys {
				if v, _ := ev[k].(string); v != "" {
					named = true
				}
			}
			if !named {
				t.Errorf("a %s finding about %v names nobody who could act on it: %v", kind, ev["hw.id"], ev["body"])
			}
		}
		if seen > 0 || t.Failed() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no rightsizing, training or inference finding in %s after waiting 90 s", path)
		}
		time.Sleep(2 * time.Second)
	}
}
