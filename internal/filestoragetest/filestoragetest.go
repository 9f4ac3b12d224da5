// Package filestoragetest runs contrib's file_storage extension for tests.
//
// Components that keep state across restarts (the cost processor's
// baselines, the insights console's decisions, the remediator's plans, the
// kernel log position, the EMF exporter's persistent queue) are tested
// against the real extension over a temporary directory rather than a fake
// storage.Client, so that what a test stores goes through the same bbolt
// files a collector writes. This package is the one place that knows how to
// create and start it; pair it with componenthealthtest.Host, whose
// Extensions map is what GetExtensions hands to the component under test.
package filestoragetest // import "github.com/otelcol-accel/otelcol-accel/internal/filestoragetest"

import (
	"context"
	"os"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/extension/extensiontest"
)

// ID is the ID Start and StartNoCleanup give the extension: file_storage,
// as a collector configuration names it.
var ID = component.NewID(filestorage.NewFactory().Type())

// Start creates the file_storage extension over dir (created if missing),
// starts it and shuts it down when the test ends. Call it before starting
// the components that use it: cleanups run last in first out, so those
// components stop first, as the collector stops extensions last.
func Start(tb testing.TB, dir string) (extension.Extension, component.ID) {
	tb.Helper()
	ext, id := StartNoCleanup(tb, dir)
	tb.Cleanup(func() {
		if err := ext.Shutdown(context.Background()); err != nil {
			tb.Errorf("shutting down file_storage over %s: %v", dir, err)
		}
	})
	return ext, id
}

// StartNoCleanup is Start for a test that simulates a restart: the caller
// shuts the extension down itself, after the components that use it and
// before it starts another one over the same dir, as a restarted collector
// would.
func StartNoCleanup(tb testing.TB, dir string) (extension.Extension, component.ID) {
	tb.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		tb.Fatalf("file_storage directory: %v", err)
	}
	f := filestorage.NewFactory()
	cfg := f.CreateDefaultConfig().(*filestorage.Config)
	cfg.Directory = dir
	set := extensiontest.NewNopSettings(f.Type())
	set.ID = ID
	ext, err := f.Create(context.Background(), set, cfg)
	if err != nil {
		tb.Fatalf("creating file_storage over %s: %v", dir, err)
	}
	if err := ext.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		tb.Fatalf("starting file_storage over %s: %v", dir, err)
	}
	return ext, ID
}
