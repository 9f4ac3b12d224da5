//go:build load

package load

import (
	"context"

	"go.opentelemetry.io/collector/pdata/pmetric"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The interval the budgets are stated at (docs/performance.md).
const agentInterval = 10 * time.Second

type settings struct {
	intervals   int
	sizes       []int
	gatewayGPUs []int
	soak        time.Duration
}

func loadSettings(t *testing.T) settings {
	s := settings{intervals: 12, sizes: []int{8, 64, 512}, gatewayGPUs: []int{2000, 10000}, soak: 5 * time.Minute}
	if v := os.Getenv("OTELCOL_ACCEL_LOAD_INTERVALS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("OTELCOL_ACCEL_LOAD_INTERVALS=%q: want a positive integer", v)
		}
		s.intervals = n
	}
	if v := os.Getenv("OTELCOL_ACCEL_LOAD_SIZES"); v != "" {
		s.sizes = nil
		for _, f := range strings.Split(v, ",") {
			if f == "0" {
				continue
			}
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || (n != 8 && n != 64 && n != 512) {
				t.Fatalf("OTELCOL_ACCEL_LOAD_SIZES=%q: sizes are 8, 64 and 512 (testdata/node-N.yaml); 0 skips the agents", v)
			}
			s.sizes = append(s.sizes, n)
		}
	}
	if v := os.Getenv("OTELCOL_ACCEL_LOAD_GATEWAY_GPUS"); v != "" {
		s.gatewayGPUs = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 0 || n%8 != 0 {
				t.Fatalf("OTELCOL_ACCEL_LOAD_GATEWAY_GPUS=%q: want multiples of 8 (0 skips the gateway)", v)
			}
			if n > 0 {
				s.gatewayGPUs = append(s.gatewayGPUs, n)
			}
		}
	}
	if v := os.Getenv("OTELCOL_ACCEL_LOAD_SOAK"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			t.Fatalf("OTELCOL_ACCEL_LOAD_SOAK=%q: want a duration (0 skips the soak)", v)
		}
		s.soak = d
	}
	if v := os.Getenv("OTELCOL_ACCEL_LOAD_BINARY"); v != "" && v != "installed" && v != "built" {
		t.Fatalf("OTELCOL_ACCEL_LOAD_BINARY=%q: want installed (the default) or built", v)
	}
	return s
}

func TestLoad(t *testing.T) {
	s := loadSettings(t)
	ctx := context.Background()
	res := &results{Machine: describeMachine(t), Settings: s.describe()}
	// The 8-GPU agent's export is what the gateway is fed, 1250 times over.
	var captured capture
	var template pmetric.Metrics
	for _, gpus := range s.sizes {
		t.Run("agent-"+strconv.Itoa(gpus)+"gpu", func(t *testing.T) {
			var keep func(pmetric.Metrics)
			if gpus == 8 {
				keep = captured.add
			}
			run := runAgentSize(ctx, t, gpus, s.intervals, agentInterval, keep)
			res.Agents = append(res.Agents, run)
			logAgentRun(t, run)
			if gpus == 8 {
				template = captured.oneInterval(run.windowStart.Add(agentInterval), agentInterval)
				saveTemplate(t, template)
			}
		})
	}
	if s.soak > 0 {
		t.Run("soak", func(t *testing.T) {
			r := runSoak(ctx, t, s.soak)
			r.log(t)
			res.Soak = r
		})
	}
	for _, target := range gatewayTargets(t) {
		for _, gpus := range s.gatewayGPUs {
			t.Run("gateway-"+target.Name+"-"+strconv.Itoa(gpus)+"gpu", func(t *testing.T) {
				if template == (pmetric.Metrics{}) || template.DataPointCount() == 0 {
					t.Skip("the gateway replays the 8-GPU agent's output: include size 8")
				}
				g := runGateway(ctx, t, target, template, "load-8", 8, gpus/8, s.intervals, agentInterval)
				g.log(t)
				res.Gateways = append(res.Gateways, g)
			})
		}
	}
	res.write(t)
}
