package dcgmreceiver

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/nvmltest"
)

func hostNames(md pmetric.Metrics) map[string]bool {
	out := map[string]bool{}
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		v, _ := md.ResourceMetrics().At(i).Resource().Attributes().Get(accelschema.AttrHostName)
		out[v.Str()] = true
	}
	return out
}

func withNodeName(w outside, node string) outside {
	env := w.getenv
	w.getenv = func(k string) string {
		if k == "K8S_NODE_NAME" {
			return node
		}
		return env(k)
	}
	return w
}

// dcgm-exporter's Hostname/hostname label is the exporter's own host name,
// in Kubernetes its pod's (nvidia-dcgm-exporter-…): host.name is the node
// the collector knows it runs on, from K8S_NODE_NAME, else its host name.
func TestHostNameIsTheNode(t *testing.T) {
	const node = "ip-10-0-3-17.ec2.internal"
	for _, name := range []string{"dcgm-exporter-4.x-8xh100.txt", "dcgm-exporter-3.x-a100-mig-rows.txt"} {
		body := fixture(t, name)
		srv := serveText(t, func() []byte { return body })
		h := start(t, exporterConfig(srv.URL), withNodeName(testWorld(t, nil), node))
		assert.Equal(t, map[string]bool{node: true}, hostNames(h.scrape(t)), name)
	}

	f, err := nvmltest.New(nvmltest.Options{})
	require.NoError(t, err)
	h := start(t, manualConfig(), withNodeName(testWorld(t, f), node))
	h.waitNVML(t)
	assert.Equal(t, map[string]bool{node: true}, hostNames(h.scrape(t)), "nvml: the node, not the pod's host name")
}

// Only a collector that knows no name for its host takes the exporter's
// label, in either spelling.
func TestHostNameFallsBackToTheExporterLabel(t *testing.T) {
	for name, want := range map[string]string{
		"dcgm-exporter-2.x.txt":        "dcgm-exporter-7xq2p", // Hostname
		"dcgm-exporter-4.x-8xh100.txt": "p5-node-17",          // hostname
	} {
		body := fixture(t, name)
		srv := serveText(t, func() []byte { return body })
		w := testWorld(t, nil)
		w.hostname = func() (string, error) { return "", errors.New("no host name") }
		h := start(t, exporterConfig(srv.URL), w)
		assert.Equal(t, map[string]bool{want: true}, hostNames(h.scrape(t)), name)
	}
}
