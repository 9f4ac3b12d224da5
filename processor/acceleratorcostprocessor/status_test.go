package acceleratorcostprocessor

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/extension/xextension/storage"

	s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/componenthealth/componenthealthtest"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorcostprocessor/internal/metadata"
)

// flakyStorage is a storage extension whose reads and writes fail until
// told otherwise.
type flakyStorage struct {
	component.StartFunc
	component.ShutdownFunc

	mu             sync.Mutex
	getErr, setErr error
}

func (f *flakyStorage) GetClient(context.Context, component.Kind, component.ID, string) (storage.Client, error) {
	return f, nil
}

func (f *flakyStorage) Get(context.Context, string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return nil, f.getErr
}

func (f *flakyStorage) Set(context.Context, string, []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.setErr
}

func (f *flakyStorage) Delete(context.Context, string) error               { return nil }
func (f *flakyStorage) Batch(context.Context, ...*storage.Operation) error { return nil }
func (f *flakyStorage) Close(context.Context) error                        { return nil }

func (f *flakyStorage) failWrites(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.setErr = err
}

// The storage error and a broken pricing file are one status: the file
// being fixed no longer reports OK while the storage is still broken.
func TestStorageAndPricingProblemsAreOneStatus(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prices.csv")
	write := func(price string) {
		tmp := path + ".tmp"
		require.NoError(t, os.WriteFile(tmp, []byte("instance_type,price_per_hour,accelerator_count,accelerator_model\nlab.gpu,"+price+",8,A100\n"), 0o600))
		require.NoError(t, os.Rename(tmp, path))
	}
	write("8")
	store := &flakyStorage{getErr: errors.New("disk I/O error"), setErr: errors.New("disk full")}
	extID := component.MustNewID("file_storage")
	cfg := testConfig()
	cfg.Pricing.Files = []string{path}
	cfg.Pricing.ReloadInterval = 5 * time.Millisecond
	cfg.Baselines.Storage = &extID
	cfg.Baselines.SaveInterval = 5 * time.Millisecond
	host := &componenthealthtest.Host{Extensions: map[component.ID]component.Component{extID: store}}
	h := newHarness(t, cfg, withHost(host, component.NewIDWithName(metadata.Type, "status")))

	last := func() string {
		e := host.Last()
		if e == nil || e.Err() == nil {
			return ""
		}
		return e.Err().Error()
	}
	waitFor := func(want string) {
		t.Helper()
		require.Eventually(t, func() bool { return last() == want }, 5*time.Second, 5*time.Millisecond, "status: %q", last())
	}
	const (
		readErr  = "baselines storage: reading training baselines from file_storage: disk I/O error"
		writeErr = "baselines storage: saving training baselines to file_storage: disk full"
	)
	require.Equal(t, readErr, last(), "reported at Start")

	write("-16")
	waitFor(readErr + "; pricing files: " + path + ":2: price_per_hour \"-16\" is negative")
	write("8")
	waitFor(readErr)
	require.Equal(t, componentstatus.StatusRecoverableError, host.Last().Status(), "the storage is still broken")

	train := func(i int) {
		r := append([]any{s.AttrHostType, "lab.gpu"}, held("pretrain", s.WorkloadTraining, s.MetricGREngineActive, 0.9, s.MetricTensorActive, 0.6)...)
		h.send(at(time.Duration(i)*step), gpu("GPU-T", r...))
	}
	i := 0
	for ; last() != writeErr; i++ { // until the baselines have something to save
		require.Less(t, i, 500, "status: %q", last())
		train(i)
		time.Sleep(5 * time.Millisecond)
	}

	store.failWrites(nil)
	for ; host.Last().Status() != componentstatus.StatusOK; i++ {
		require.Less(t, i, 500, "status: %q", last())
		train(i)
		time.Sleep(5 * time.Millisecond)
	}
	h.shutdown()
}
