//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/kernlog"
	"github.com/otelcol-accel/otelcol-accel/internal/e2etest"
	"github.com/otelcol-accel/otelcol-accel/internal/xid"
)

// Issue 29: a fatal XID written on a simulated node in each form the tools
// on a node write (every dmesg time format with and without -x, journalctl
// -k's outputs, syslog, /dev/kmsg records), through the node's agent
// following its kernel log (demo-agent.yaml, source: file) and the gateway,
// reaches the console's health events exactly once. Each form gets its own
// (GPU, fatal XID) pair so that a lost or a doubled line shows by name.
func TestFatalXIDInEveryKernelLogFormReachesTheConsoleOnce(t *testing.T) {
	const node = "gpu-l4-a" // the story leaves its GPUs without failures
	console := e2etest.FreeEndpoint(t)
	fleet := e2etest.StartFleet(t, e2etest.FleetOptions{
		Nodes:      []string{node},
		GatewayEnv: []string{"OTELCOL_ACCEL_INSIGHTS_ENDPOINT=" + console},
	})
	n := fleet.Sim.Node(t, node)
	var gpus []string
	for _, d := range n.Devices {
		if len(d.Failures) > 0 {
			t.Fatalf("%s's GPU %s has failures in the story; this test needs a node without", node, d.ID)
		}
		gpus = append(gpus, d.ID)
	}
	if len(gpus) == 0 || n.KernelLog == "" {
		t.Fatalf("%s has no GPUs (%d) or no kernel log (%q)", node, len(gpus), n.KernelLog)
	}
	sort.Strings(gpus)
	bus := map[string]string{}
	for _, d := range n.Devices {
		bus[d.ID] = kernlog.NVRMBus(d.PCIBusID)
	}

	// The console knows the node's GPUs before anything is written, so
	// that every XID below has its device.
	e2etest.Await(t, 2*time.Minute, "the console lists "+node+"'s GPUs", func() (string, bool) {
		var page struct {
			TotalDevices int `json:"total_devices"`
		}
		if err := consoleJSON(console, "/api/v1/devices?node="+node+"&page_size=100", &page); err != nil {
			return err.Error(), false
		}
		return fmt.Sprintf("%d devices", page.TotalDevices), page.TotalDevices >= len(gpus)
	})

	codes := fatalXIDs()
	want := map[string]string{} // "gpu xid" → the form that wrote it
	boot := bootTime(t)
	var lines []string
	for i, form := range kernlog.Forms {
		gpu := gpus[i%len(gpus)]
		code := codes[(i/len(gpus))%len(codes)]
		key := gpu + " " + strconv.Itoa(code)
		if prev, dup := want[key]; dup {
			t.Fatalf("forms %q and %q would write the same XID %d on %s: add fatal codes", prev, form.Name, code, gpu)
		}
		want[key] = form.Name
		now := time.Now()
		msg := fmt.Sprintf("NVRM: Xid (PCI:%s): %d, pid='<unknown>', name=<unknown>, %s", bus[gpu], code, xid.Lookup(code).Description)
		lines = append(lines, form.Render(kernlog.Stamp{Wall: now, SinceBoot: now.Sub(boot), SincePrev: 0, First: true, Seq: 1_000_000 + i}, msg))
	}
	f, err := os.OpenFile(n.KernelLog, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		// One write a line, as the kernel's log writers append.
		if _, err := f.WriteString(l + "\n"); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	seen := func() (map[string]int, error) {
		var list struct {
			Events []struct {
				Name     string `json:"name"`
				DeviceID string `json:"device_id"`
				XID      *int64 `json:"xid"`
			} `json:"events"`
		}
		if err := consoleJSON(console, "/api/v1/events?window=1h", &list); err != nil {
			return nil, err
		}
		got := map[string]int{}
		for _, e := range list.Events {
			if e.Name == accelschema.EventXID && e.XID != nil {
				got[e.DeviceID+" "+strconv.FormatInt(*e.XID, 10)]++
			}
		}
		return got, nil
	}
	describe := func(got map[string]int) string {
		var missing, doubled, stray []string
		for key, form := range want {
			switch got[key] {
			case 0:
				missing = append(missing, form)
			case 1:
			default:
				doubled = append(doubled, fmt.Sprintf("%s (%d×)", form, got[key]))
			}
		}
		for key := range got {
			if _, ok := want[key]; !ok {
				stray = append(stray, key)
			}
		}
		sort.Strings(missing)
		sort.Strings(doubled)
		sort.Strings(stray)
		return fmt.Sprintf("missing: %v; more than once: %v; not written: %v", missing, doubled, stray)
	}
	e2etest.Await(t, 3*time.Minute, "a console event for each form's XID", func() (string, bool) {
		got, err := seen()
		if err != nil {
			return err.Error(), false
		}
		for key := range want {
			if got[key] == 0 {
				return describe(got), false
			}
		}
		return describe(got), true
	})
	// Once: past the de-duplication window and another collection, nothing
	// is doubled and nothing was made that was not written.
	time.Sleep(15 * time.Second)
	got, err := seen()
	if err != nil {
		t.Fatal(err)
	}
	for key := range want {
		if got[key] != 1 {
			t.Errorf("%s", describe(got))
			break
		}
	}
	for key := range got {
		if _, ok := want[key]; !ok {
			t.Errorf("an XID event nobody wrote: %s (%s)", key, describe(got))
		}
	}
}

// fatalXIDs are the catalogue's XIDs that fail a GPU, but 79 (its own
// device-lost path) and 154 (whose text is a recovery action).
func fatalXIDs() []int {
	var out []int
	for code := 1; code < 200; code++ {
		c := xid.Lookup(code)
		if c.Known && c.State == accelschema.HWStateFailed && code != 79 && code != 154 {
			out = append(out, code)
		}
	}
	return out
}

// bootTime is when this machine booted, as the agent reads it
// (/proc/uptime): the zero of dmesg's and /dev/kmsg's stamps.
func bootTime(t *testing.T) time.Time {
	b, err := os.ReadFile("/proc/uptime")
	if err != nil {
		t.Fatal(err)
	}
	secs, err := strconv.ParseFloat(strings.Fields(string(b))[0], 64)
	if err != nil {
		t.Fatal(err)
	}
	return time.Now().Add(-time.Duration(secs * float64(time.Second)))
}

func consoleJSON(endpoint, path string, into any) error {
	resp, err := http.Get("http://" + endpoint + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(into)
}
