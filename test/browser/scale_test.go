//go:build e2e

package browser

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/e2etest"
)

const (
	scaleNodes      = 1250
	devicesPerNode  = 8
	scaleDevices    = scaleNodes * devicesPerNode
	consolePageSize = 50 // nodes per grid page (pages/fleet.js)
)

// A fleet of 10,000 GPUs stays usable: the gateway receives them over OTLP
// as agents would send them, and the console draws one page of the grid
// (50 nodes) at a time, pages through it, and filters it to one node.
func TestConsoleTenThousandDevices(t *testing.T) {
	insights := e2etest.FreeEndpoint(t)
	gw := e2etest.StartCollector(t, e2etest.CollectorOptions{
		Configs: []string{e2etest.ConfigPath("gateway.yaml"), e2etest.ConfigPath("demo-gateway.yaml")},
		Env:     []string{EnvInsights + "=" + insights, "OTELCOL_ACCEL_DEMO_DIR=" + t.TempDir()},
	})
	client, err := e2etest.DialOTLP(gw.Env[e2etest.EnvOTLPGRPC])
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Two rounds, as two collection intervals: utilization needs a point.
	for round := 0; round < 2; round++ {
		for first := 0; first < scaleNodes; first += 125 {
			if err := client.Send(ctx, scaleBatch(first, 125, time.Now())); err != nil {
				t.Fatalf("sending the fleet to the gateway: %v", err)
			}
		}
	}
	api := API{Base: "http://" + insights + "/"}
	e2etest.Await(t, time.Minute, fmt.Sprintf("the console to count the %d devices sent", scaleDevices), func() (string, bool) {
		var f Fleet
		if err := api.Get("fleet", nil, &f); err != nil {
			return err.Error(), false
		}
		return fmt.Sprintf("%d devices", f.Devices.Total), f.Devices.Total == scaleDevices
	})

	b := StartBrowser(t, screenshotDir(t, "scale"))
	b.Visit(api.Base+"fleet", "fleet")
	b.CheckConsole("fleet of 10,000")
	if got := b.Text(`[data-k=devices-total]`); got != strconv.Itoa(scaleDevices) {
		t.Errorf("fleet page: %s devices, want %d", got, scaleDevices)
	}
	pages := (scaleNodes + consolePageSize - 1) / consolePageSize
	if got, want := b.Text(`[data-k=page]`), fmt.Sprintf("page 1 of %d", pages); got != want {
		t.Errorf("pager: %q, want %q", got, want)
	}
	if got, want := b.Eval(`String(document.querySelectorAll('.tiles a.tile').length)`), strconv.Itoa(consolePageSize*devicesPerNode); got != want {
		t.Errorf("one page of the grid draws %s tiles, want %s (50 nodes of 8)", got, want)
	}
	b.Screenshot("fleet-10000")
	b.Click(`nav.pager a:last-child`)
	b.WaitFor(`location.search.includes('page=2')`)
	b.WaitPage("fleet")
	if got, want := b.Text(`[data-k=page]`), fmt.Sprintf("page 2 of %d", pages); got != want {
		t.Errorf("after next: pager %q, want %q", got, want)
	}
	if first := b.Eval(`document.querySelector('.node[data-node]').dataset.node`); first != scaleNodeName(consolePageSize) {
		t.Errorf("page 2 starts with node %s, want %s", first, scaleNodeName(consolePageSize))
	}
	node := scaleNodeName(777)
	b.Visit(api.Base+"fleet?"+query("node", node).Encode(), "fleet")
	if got := b.Text(`[data-k=devices-total]`); got != strconv.Itoa(devicesPerNode) {
		t.Errorf("filtered to %s: %s devices, want %d", node, got, devicesPerNode)
	}
	b.CheckConsole("fleet of 10,000, paged and filtered")
}

func scaleNodeName(i int) string { return fmt.Sprintf("gpu-node-%04d", i) }

// scaleBatch is what n nodes' agents send in one interval: each GPU's own
// resource with its identity and utilization.
func scaleBatch(first, n int, now time.Time) pmetric.Metrics {
	md := pmetric.NewMetrics()
	ts := pcommon.NewTimestampFromTime(now)
	for i := first; i < first+n && i < scaleNodes; i++ {
		for d := 0; d < devicesPerNode; d++ {
			rm := md.ResourceMetrics().AppendEmpty()
			a := rm.Resource().Attributes()
			a.PutStr(s.AttrHWID, fmt.Sprintf("GPU-%04d-%d", i, d))
			a.PutStr(s.AttrK8sNodeName, scaleNodeName(i))
			a.PutStr(s.AttrK8sClusterName, "scale")
			a.PutStr(s.AttrKind, s.KindNvidiaGPU)
			a.PutStr(s.AttrHWVendor, "NVIDIA")
			a.PutStr(s.AttrHWModel, "NVIDIA H100 80GB HBM3")
			a.PutStr(s.AttrDeviceIndex, strconv.Itoa(d))
			a.PutStr(s.AttrHostType, "p5.48xlarge")
			a.PutStr(s.AttrCloudZone, []string{"us-east-1a", "us-east-1b", "us-east-1c"}[i%3])
			a.PutStr(s.AttrPartitionType, s.PartitionNone)
			a.PutDouble(s.AttrPartitionShare, 1)
			// As an agent sends a fleet: three in four GPUs held by a pod
			// of one of 20 teams, every one priced and with its health, one
			// node in a hundred with a failed GPU.
			if d%4 != 3 {
				team := fmt.Sprintf("team-%02d", (i*devicesPerNode+d)%20)
				a.PutStr(s.AttrAllocationState, s.AllocationAllocated)
				a.PutStr(s.AttrK8sNamespaceName, "ns-"+team)
				a.PutStr(s.AttrK8sPodName, fmt.Sprintf("job-%04d-%d", i, d))
				a.PutStr(s.AttrK8sPodUID, fmt.Sprintf("uid-%04d-%d", i, d))
				a.PutStr(s.AttrTeam, team)
			} else {
				a.PutStr(s.AttrAllocationState, s.AllocationUnallocated)
			}
			sm := rm.ScopeMetrics().AppendEmpty()
			m := sm.Metrics().AppendEmpty()
			m.SetName(s.MetricGPUUtilization)
			m.SetUnit("1")
			p := m.SetEmptyGauge().DataPoints().AppendEmpty()
			p.SetTimestamp(ts)
			p.SetDoubleValue(float64((i*devicesPerNode+d)%100) / 100)
			state := s.HWStateOK
			if i%100 == 7 && d == 0 {
				state = s.HWStateFailed
			}
			status := sm.Metrics().AppendEmpty()
			status.SetName(s.MetricStatus)
			status.SetUnit("1")
			statusPoints := status.SetEmptySum().DataPoints()
			for _, st := range []string{s.HWStateOK, s.HWStateDegraded, s.HWStateFailed, s.HWStatePredictedFailure} {
				sp := statusPoints.AppendEmpty()
				sp.SetTimestamp(ts)
				sp.Attributes().PutStr(s.AttrHWState, st)
				if st == state {
					sp.SetIntValue(1)
				}
			}
			price := sm.Metrics().AppendEmpty()
			price.SetName(s.MetricPrice)
			price.SetUnit(s.UnitUSDPerHour)
			pp := price.SetEmptyGauge().DataPoints().AppendEmpty()
			pp.SetTimestamp(ts)
			pp.SetDoubleValue(12.29)
		}
	}
	return md
}
