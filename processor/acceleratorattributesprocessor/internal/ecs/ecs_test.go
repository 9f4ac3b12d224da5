package ecs

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/ecs/dockertest"
)

func socket(t *testing.T) string {
	dir, err := os.MkdirTemp("", "dk")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "docker.sock")
}

// loadFixtures reads testdata/containers.json and inspect_<i>.json.
func loadFixtures(t *testing.T) ([]map[string]any, map[string]json.RawMessage) {
	raw, err := os.ReadFile("testdata/containers.json")
	require.NoError(t, err)
	var list []map[string]any
	require.NoError(t, json.Unmarshal(raw, &list))
	inspect := map[string]json.RawMessage{}
	for i, c := range list {
		b, err := os.ReadFile(filepath.Join("testdata", "inspect_"+string(rune('0'+i))+".json"))
		require.NoError(t, err)
		inspect[c["Id"].(string)] = b
	}
	return list, inspect
}

func TestContainersFromDockerd(t *testing.T) {
	sock := socket(t)
	srv, err := dockertest.Start(sock)
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	list, inspect := loadFixtures(t)
	srv.SetContainers(list, inspect)

	c := New(sock, 5*time.Second)
	got, err := c.Containers(context.Background())
	require.NoError(t, err)
	require.Len(t, got, 3, "the agent container has no task label and is filtered out")

	assert.Equal(t, "vllm", got[0].Name)
	assert.Equal(t, "arn:aws:ecs:us-east-1:123456789012:task/gpu-prod/0f6c3e0e3a2b4c5d8e9f0a1b2c3d4e5f", got[0].TaskARN)
	assert.Equal(t, "arn:aws:ecs:us-east-1:123456789012:cluster/gpu-prod", got[0].Cluster)
	assert.Equal(t, "llm-serve", got[0].TaskFamily)
	assert.Equal(t, []string{"GPU-8f3c2a5e-1d2b-4c3d-9e8f-0a1b2c3d4e5f"}, got[0].Devices)
	assert.InDelta(t, 0.5, got[0].MPSActiveThreads, 1e-9)
	assert.Equal(t, "search", got[0].Labels["team"])

	assert.Equal(t, []string{"GPU-8f3c2a5e-1d2b-4c3d-9e8f-0a1b2c3d4e5f", "3"}, got[1].Devices)
	assert.InDelta(t, 0.25, got[1].MPSActiveThreads, 1e-9)
	assert.Empty(t, got[2].Devices, "NVIDIA_VISIBLE_DEVICES=all names no device")

	// Inspected once; a second refresh only lists.
	assert.Equal(t, 3, srv.Inspects())
	_, err = c.Containers(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 3, srv.Inspects())

	// A container that stops is forgotten.
	srv.SetContainers(list[:1], inspect)
	got, err = c.Containers(context.Background())
	require.NoError(t, err)
	assert.Len(t, got, 1)
	assert.Len(t, c.inspected, 1)
}

func TestMalformedAndMissing(t *testing.T) {
	sock := socket(t)
	c := New(sock, 2*time.Second)
	_, err := c.Containers(context.Background())
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.Contains(t, e.Hint, "does not exist")
	assert.Contains(t, e.Hint, "ecs.docker_socket")

	srv, err := dockertest.Start(sock)
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	srv.SetRawList([]byte(`[{"Id":"abc","Labels":{`))
	_, err = c.Containers(context.Background())
	require.ErrorAs(t, err, &e)
	assert.Contains(t, err.Error(), "/containers/json")
	assert.Contains(t, err.Error(), "JSON")

	// Listed but gone before inspect: the error is reported, not a panic or a hang.
	list, _ := loadFixtures(t)
	srv.SetContainers(list[:1], nil)
	_, err = c.Containers(context.Background())
	require.ErrorAs(t, err, &e)
	assert.Contains(t, err.Error(), "HTTP 404")
}

func TestParseVisibleDevices(t *testing.T) {
	assert.Nil(t, ParseVisibleDevices("all"))
	assert.Nil(t, ParseVisibleDevices(" NONE "))
	assert.Nil(t, ParseVisibleDevices(""))
	assert.Equal(t, []string{"0", "2"}, ParseVisibleDevices("0,,2 "))
}

func FuzzFromInspect(f *testing.F) {
	for i := 0; i < 4; i++ {
		if b, err := os.ReadFile(filepath.Join("testdata", "inspect_"+string(rune('0'+i))+".json")); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var a inspectAnswer
		if json.Unmarshal(data, &a) != nil {
			return
		}
		ct := fromInspect(a)
		if ct.MPSActiveThreads < 0 || ct.MPSActiveThreads > 1 {
			t.Fatalf("active threads %v", ct.MPSActiveThreads)
		}
		for _, d := range ct.Devices {
			if d == "" {
				t.Fatal("empty device")
			}
		}
	})
}
