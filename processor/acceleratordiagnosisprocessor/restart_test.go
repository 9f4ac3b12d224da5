package acceleratordiagnosisprocessor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"

	s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/componenthealth/componenthealthtest"
	"github.com/otelcol-accel/otelcol-accel/internal/filestoragetest"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratordiagnosisprocessor/internal/metadata"
)

// A restart keeps the endpoints' baselines: the first run learns TTFT and
// ITL baselines and saves them on shutdown through file_storage; a second
// processor over the same directory diagnoses a regression in its first
// windows after the warm-up, which without them it could not (min_samples
// windows would have to pass first, and learn the regressed latencies as
// the normal).
func TestRestartKeepsBaselinesThroughFileStorage(t *testing.T) {
	dir := t.TempDir()
	id := component.NewIDWithName(metadata.Type, "restart")
	run := func(from, to int, change func(*fleet)) []regressionFinding {
		ext, extID := filestoragetest.StartNoCleanup(t, dir)
		defer func() { require.NoError(t, ext.Shutdown(context.Background())) }()
		cfg := testConfig()
		cfg.Baselines.Storage = &extID
		h := newHarness(t, cfg, &componenthealthtest.Host{Extensions: map[component.ID]component.Component{extID: ext}}, id)
		f := twoReplicas()
		if change != nil {
			change(f)
		}
		drive(h, f, from, to, nil)
		h.shutdown() // saves the baselines
		return h.findings()
	}

	require.Empty(t, run(0, steadyScrapes, nil), "run 1: steady")
	// Run 2, a fresh processor, an hour later: the servers' histograms start
	// again (new start time), and TTFT has quadrupled with the KV cache full.
	later := int(time.Hour / step)
	fs := run(later, later+20, func(f *fleet) {
		for _, sv := range f.servers {
			sv.start = at(time.Duration(later) * step)
			sv.kv, sv.preemptPerScrape = 0.97, 3
		}
		regress(f)
	})
	require.Len(t, fs, 1, "the restored baseline judges the first windows after the warm-up")
	assert.Equal(t, s.CauseKVCachePressure, fs[0].cause)
	assert.Contains(t, fs[0].evidence, "ttft_baseline_p95=0.195")
}

// Without storage the same second run raises nothing: the restart test
// above fails if the baselines are not what carries the judgement.
func TestWithoutStorageARestartForgets(t *testing.T) {
	id := component.NewIDWithName(metadata.Type, "forget")
	for _, r := range []struct {
		from, to int
		regress  bool
	}{{0, steadyScrapes, false}, {240, 260, true}} {
		h := newHarness(t, testConfig(), nil, id)
		f := twoReplicas()
		if r.regress {
			regress(f)
		}
		drive(h, f, r.from, r.to, nil)
		h.shutdown()
		assert.Empty(t, h.findings())
	}
}
