package output

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
)

func lineEvents(n, size int) []Event {
	var out []Event
	for i := 0; i < n; i++ {
		msg := fmt.Sprintf(`{"n":%d,"pad":"%s"}`, i, strings.Repeat("p", size))
		out = append(out, Event{Timestamp: int64(i), Message: []byte(msg), Origin: i})
	}
	return out
}

func TestStdoutWritesOneLinePerEvent(t *testing.T) {
	var buf bytes.Buffer
	l := NewStdout(&buf)
	require.NoError(t, l.Start(context.Background(), componenttest.NewNopHost()))
	require.NoError(t, l.Send(context.Background(), lineEvents(3, 1), true))
	assert.Equal(t, "{\"n\":0,\"pad\":\"p\"}\n{\"n\":1,\"pad\":\"p\"}\n{\"n\":2,\"pad\":\"p\"}\n", buf.String())
	require.NoError(t, l.Shutdown(context.Background()))
}

func TestFileAppendsAndRotates(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "emf.log")
	require.NoError(t, os.WriteFile(path, []byte("{\"earlier\":1}\n"), 0o600))

	l := NewFile(path, 1000, 2)
	require.NoError(t, l.Start(context.Background(), componenttest.NewNopHost()))
	evs := lineEvents(30, 80) // ~100 bytes per line: about 10 lines per file
	require.NoError(t, l.Send(context.Background(), evs, true))
	require.NoError(t, l.Shutdown(context.Background()))

	var lines []string
	for _, name := range []string{path + ".2", path + ".1", path} {
		b, err := os.ReadFile(name)
		require.NoError(t, err)
		assert.LessOrEqual(t, len(b), 1000, name)
		lines = append(lines, strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")...)
	}
	_, err := os.Stat(path + ".3")
	assert.True(t, os.IsNotExist(err), "only max_backups old files are kept")
	// The newest lines are all there, in order, whole.
	tail := lines[len(lines)-10:]
	for i, line := range tail {
		assert.Equal(t, string(evs[20+i].Message), line)
	}
}

func TestFileWithoutRotationOnlyAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "emf.log")
	for i := 0; i < 2; i++ {
		l := NewFile(path, 0, 0)
		require.NoError(t, l.Start(context.Background(), componenttest.NewNopHost()))
		require.NoError(t, l.Send(context.Background(), lineEvents(5, 1000), false))
		require.NoError(t, l.Shutdown(context.Background()))
	}
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, 10, strings.Count(string(b), "\n"))
}

func TestFileThatCannotBeOpenedFailsStart(t *testing.T) {
	l := NewFile(filepath.Join(t.TempDir(), "missing-dir", "emf.log"), 0, 0)
	err := l.Start(context.Background(), componenttest.NewNopHost())
	require.ErrorContains(t, err, "opening output file")
}
