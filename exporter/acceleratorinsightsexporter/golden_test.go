package acceleratorinsightsexporter

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorinsightsexporter/internal/fixture"
)

// goldenPaths are every endpoint, some with filters, on the fixture.
var goldenPaths = []string{
	"/api/v1/filters",
	"/api/v1/fleet",
	"/api/v1/fleet?team=research",
	"/api/v1/fleet?family=aws_neuron",
	"/api/v1/devices",
	"/api/v1/devices?node=gpu-b",
	"/api/v1/devices?page=2&page_size=2",
	"/api/v1/device?id=GPU-A0",
	"/api/v1/device?id=GPU-A1",
	"/api/v1/device?id=GPU-B0",
	"/api/v1/device?id=GPU-B0%2Fgi1",
	"/api/v1/device?id=GPU-B1",
	"/api/v1/device?id=neuron_device_0",
	"/api/v1/pod?namespace=llm&name=vllm-0",
	"/api/v1/pod?namespace=notebooks&name=nb-2",
	"/api/v1/teams",
	"/api/v1/teams?namespace=research",
	"/api/v1/findings",
	"/api/v1/findings?state=all&kind=rightsizing",
	"/api/v1/inference",
	"/api/v1/capacity",
	"/api/v1/reliability",
	"/api/v1/events?device=GPU-A1",
}

// The API's answers on the fixture, reviewed as files.
func TestGoldenMemory(t *testing.T) {
	c := startConsole(t, testConfig(), nil, "golden")
	c.feed(t, fixture.Now)
	for _, path := range goldenPaths {
		t.Run(path, func(t *testing.T) {
			resp, body := c.get(t, path)
			require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
			checkGolden(t, path, body)
		})
	}
}
