package filestoragetest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"
)

// What one extension stores, a second one over the same directory reads:
// the restart the callers of StartNoCleanup simulate. The directory is
// created when missing.
func TestSecondExtensionOverTheSameDirReadsWhatTheFirstStored(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "not", "yet")
	owner := component.MustNewID("test")

	first, id := StartNoCleanup(t, dir)
	require.Equal(t, "file_storage", id.String())
	client, err := first.(storage.Extension).GetClient(ctx, component.KindProcessor, owner, "state")
	require.NoError(t, err)
	require.NoError(t, client.Set(ctx, "k", []byte("v")))
	require.NoError(t, client.Close(ctx))
	require.NoError(t, first.Shutdown(ctx))

	second, _ := Start(t, dir)
	client, err = second.(storage.Extension).GetClient(ctx, component.KindProcessor, owner, "state")
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, client.Close(ctx)) })
	got, err := client.Get(ctx, "k")
	require.NoError(t, err)
	require.Equal(t, []byte("v"), got)
}
