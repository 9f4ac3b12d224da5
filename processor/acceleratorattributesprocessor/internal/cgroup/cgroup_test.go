package cgroup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	podUID = "6b3e0e2a-1c8d-4f4e-9b7a-2d5c8e1f0a3b"
	cid    = "3f9a1c2b4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8"
)

func TestParseFixtures(t *testing.T) {
	tests := []struct {
		file string
		want Owner
	}{
		{"v1_cgroupfs_burstable.txt", Owner{PodUID: podUID, ContainerID: cid}},
		{"v1_systemd_containerd.txt", Owner{PodUID: podUID, ContainerID: cid}},
		{"v2_systemd_containerd.txt", Owner{PodUID: podUID, ContainerID: cid}},
		{"v2_cgroupfs_guaranteed.txt", Owner{PodUID: podUID, ContainerID: cid}},
		{"v2_crio_cgroupns.txt", Owner{PodUID: podUID, ContainerID: cid}},
		{"v1_ecs.txt", Owner{ContainerID: cid}},
		{"v2_docker_systemd.txt", Owner{ContainerID: cid}},
		{"v2_host_process.txt", Owner{}},
		{"v2_pod_sandbox_only.txt", Owner{PodUID: podUID}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", tt.file))
			require.NoError(t, err)
			defer f.Close()
			got, err := Parse(f)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestParseMalformedNamesTheLine(t *testing.T) {
	_, err := Parse(strings.NewReader("0::/ok\nno colons here\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "line 2")

	_, err = Parse(strings.NewReader("7:one colon only\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "line 1")
}

func TestParsePathRejectsLookalikes(t *testing.T) {
	// "pod" inside another word, short uids, non-hex: none is a pod.
	for _, p := range []string{
		"/kubepods/burstable/ipod6b3e0e2a-1c8d-4f4e-9b7a-2d5c8e1f0a3b",
		"/kubepods/burstable/pod6b3e0e2a-1c8d-4f4e-9b7a",
		"/kubepods/burstable/pod6b3e0e2a-1c8d-4f4e-9b7a-2d5c8e1f0aZZ",
		"/kubepods/burstable/pod6b3e0e2a+1c8d-4f4e-9b7a-2d5c8e1f0a3b",
	} {
		assert.Empty(t, ParsePath(p).PodUID, p)
	}
	assert.Empty(t, ParsePath("/system.slice/docker-abc.scope").ContainerID)
}

func TestResolverReadsProcAndCaches(t *testing.T) {
	root := t.TempDir()
	writeCgroup := func(pid, content string) {
		require.NoError(t, os.MkdirAll(filepath.Join(root, pid), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, pid, "cgroup"), []byte(content), 0o644))
	}
	writeCgroup("4242", "0::/kubepods/pod"+podUID+"/"+cid+"\n")
	now := time.Unix(1000, 0)
	r := NewResolver(root, time.Minute)
	r.SetClock(func() time.Time { return now })

	o, err := r.Lookup(4242)
	require.NoError(t, err)
	assert.Equal(t, Owner{PodUID: podUID, ContainerID: cid}, o)

	// The pid is reused by a host process: the cached answer holds until the ttl.
	writeCgroup("4242", "0::/system.slice/sshd.service\n")
	o, _ = r.Lookup(4242)
	assert.Equal(t, podUID, o.PodUID)
	now = now.Add(2 * time.Minute)
	o, err = r.Lookup(4242)
	require.NoError(t, err)
	assert.Equal(t, Owner{}, o)

	_, err = r.Lookup(999999)
	require.ErrorIs(t, err, ErrNoProcess)
	_, err = r.Lookup(-1)
	require.ErrorIs(t, err, ErrNoProcess)

	assert.Equal(t, 3, r.Len())
	now = now.Add(2 * time.Minute)
	r.Prune()
	assert.Equal(t, 0, r.Len())
}

func TestResolverFixtureTree(t *testing.T) {
	r := NewResolver(filepath.Join("testdata", "proc"), time.Minute)
	o, err := r.Lookup(4242)
	require.NoError(t, err)
	assert.Equal(t, podUID, o.PodUID)
	o, err = r.Lookup(4343)
	require.NoError(t, err)
	assert.Equal(t, cid, o.ContainerID)
	o, err = r.Lookup(1)
	require.NoError(t, err)
	assert.Equal(t, Owner{}, o)
}

func FuzzParse(f *testing.F) {
	entries, _ := os.ReadDir("testdata")
	for _, e := range entries {
		if b, err := os.ReadFile(filepath.Join("testdata", e.Name())); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("0::/kubepods-pod" + strings.Repeat("a", 36) + ".slice"))
	f.Fuzz(func(t *testing.T, data []byte) {
		o, err := Parse(strings.NewReader(string(data)))
		if err != nil {
			return
		}
		if o.PodUID != "" && len(o.PodUID) != 36 {
			t.Fatalf("pod uid %q", o.PodUID)
		}
		if o.ContainerID != "" && len(o.ContainerID) != 64 {
			t.Fatalf("container id %q", o.ContainerID)
		}
	})
}
