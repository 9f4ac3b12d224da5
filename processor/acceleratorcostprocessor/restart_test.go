package acceleratorcostprocessor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/processor/processortest"

	s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/componenthealth/componenthealthtest"
	"github.com/otelcol-accel/otelcol-accel/internal/filestoragetest"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorcostprocessor/internal/metadata"
)

// A restart keeps the training baselines: the first run learns a baseline of
// 0.6 and saves it on shutdown through file_storage; a second processor over
// the same directory books training inefficiency on its very first interval.
func TestRestartKeepsBaselinesThroughFileStorage(t *testing.T) {
	dir := t.TempDir()
	processorID := component.NewIDWithName(metadata.Type, "restart")
	train := func(tensor float64) resource {
		return gpu("GPU-T", held("pretrain", s.WorkloadTraining, s.MetricGREngineActive, 0.9, s.MetricTensorActive, tensor)...)
	}

	run := func(first time.Duration, batches int, tensor float64) costOut {
		ext, extID := filestoragetest.StartNoCleanup(t, dir)
		defer func() { require.NoError(t, ext.Shutdown(context.Background())) }()
		cfg := testConfig()
		cfg.Baselines.Storage = &extID
		cfg.Baselines.MinSamples = 5
		h := newHarness(t, cfg, withHost(&componenthealthtest.Host{Extensions: map[component.ID]component.Component{extID: ext}}, processorID))
		var last costOut
		for i := 0; i < batches; i++ {
			last = costOf(h.send(at(first+time.Duration(i)*step), train(tensor)), "GPU-T", "")
		}
		h.shutdown() // saves the baselines
		return last
	}

	// Run 1: six intervals at 0.6 (five samples): a warm baseline of 0.6.
	first := run(0, 6, 0.6)
	if first.waste[s.WasteTrainingInefficiency] != 0 {
		t.Fatalf("run 1 wasted %v", first.waste[s.WasteTrainingInefficiency])
	}

	// Run 2, a fresh processor: two batches at 0.3. Without the stored
	// baseline there would be nothing to compare with; with it the second
	// batch wastes 1 − 0.3/0.6 = 0.5 of 0.01.
	second := run(time.Hour, 2, 0.3)
	if !near(second.waste[s.WasteTrainingInefficiency], 0.005) {
		t.Fatalf("after the restart: training inefficiency %v, want 0.005", second.waste[s.WasteTrainingInefficiency])
	}
}

func TestStorageMisconfigurationFailsStart(t *testing.T) {
	cfg := testConfig()
	missing := component.MustNewID("file_storage")
	cfg.Baselines.Storage = &missing
	p := newCostProcessor(processortest.NewNopSettings(metadata.Type), cfg)
	require.ErrorContains(t, p.Start(context.Background(), componenttest.NewNopHost()),
		`baselines.storage: extension "file_storage" is not running; add it under`)

	nop := extensiontest.NewNopFactory()
	notStorage := component.NewID(nop.Type())
	ext, err := nop.Create(context.Background(), extensiontest.NewNopSettings(nop.Type()), nop.CreateDefaultConfig())
	require.NoError(t, err)
	cfg.Baselines.Storage = &notStorage
	p = newCostProcessor(processortest.NewNopSettings(metadata.Type), cfg)
	host := &componenthealthtest.Host{Extensions: map[component.ID]component.Component{notStorage: ext}}
	require.ErrorContains(t, p.Start(context.Background(), host), "is not a storage extension")
}

func TestCorruptStoredBaselinesStartEmpty(t *testing.T) {
	ext, extID := filestoragetest.Start(t, t.TempDir())
	id := component.NewIDWithName(metadata.Type, "corrupt")
	client, err := ext.(storage.Extension).GetClient(context.Background(), component.KindProcessor, id, baselinesKey)
	require.NoError(t, err)
	require.NoError(t, client.Set(context.Background(), baselinesKey, []byte(`{"version":1,"baselines":[{"workl`)))
	require.NoError(t, client.Close(context.Background()))

	cfg := testConfig()
	cfg.Baselines.Storage = &extID
	h := newHarness(t, cfg, withHost(&componenthealthtest.Host{Extensions: map[component.ID]component.Component{extID: ext}}, id))
	if n := h.logged.FilterMessageSnippet("stored training baselines are unreadable").Len(); n != 1 {
		t.Fatalf("want one error about the stored baselines, got %d", n)
	}
	if got := costOf(h.send(at(0), gpu("GPU-1", s.MetricGREngineActive, 0.5)), "GPU-1", ""); !got.found {
		t.Fatal("the processor runs without its baselines")
	}
}
