package static

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLoadYAMLAndCSV(t *testing.T) {
	y, err := Load("testdata/mapping.yaml")
	require.NoError(t, err)
	c, err := Load("testdata/mapping.csv")
	require.NoError(t, err)
	require.Len(t, y, 2)
	require.Len(t, c, 2)
	assert.Equal(t, Row{Line: 3, Device: "GPU-8f3c2a5e-1d2b-4c3d-9e8f-0a1b2c3d4e5f", JobID: "81234", Team: "research",
		WorkloadName: "llama-pretrain", WorkloadType: "training"}, y[0])
	assert.Equal(t, Row{Line: 8, Device: "3", JobID: "81240", Team: "ranking", WorkloadType: "batch", Share: 0.5, Host: "gpu-a-17"}, y[1])
	assert.Equal(t, Row{Line: 3, Device: "GPU-8f3c2a5e-1d2b-4c3d-9e8f-0a1b2c3d4e5f", JobID: "81234", Team: "research",
		WorkloadName: "llama-pretrain", WorkloadType: "training"}, c[0])
	assert.Equal(t, Row{Line: 4, Device: "3", JobID: "81240", Team: "ranking", WorkloadType: "batch"}, c[1])
}

func TestMalformedFilesNameFileAndLine(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"m.yaml", "devices:\n  - device: GPU-1\n    team: a\n  - device: GPU-2\n    teem: b\n", "m.yaml:5: unknown key \"teem\""},
		{"m.yaml", "devices:\n  - device: GPU-1\n    team: a\n    workload_type: gaming\n", "m.yaml:2: workload_type \"gaming\""},
		{"m.yaml", "devices:\n  - device: GPU-1\n    team: a\n    share: 1.5\n", "m.yaml:2: share \"1.5\""},
		{"m.yaml", "devices:\n  - team: a\n", "m.yaml:2: device is empty"},
		{"m.yaml", "devices:\n  - device: GPU-1\n", "m.yaml:2: device GPU-1 has no job_id"},
		{"m.yaml", "gpus: []\n", "m.yaml:1: unknown key \"gpus\""},
		{"m.yaml", "devices: {a: b}\n", "m.yaml:1: devices: must be a list"},
		{"m.yaml", "devices:\n  - device: [a, b]\n", "m.yaml:2: device must be a single value"},
		{"m.yaml", "devices: [\n", "m.yaml: yaml:"},
		{"m.yaml", "", "m.yaml:1: empty file"},
		{"m.csv", "device,team\nGPU-1,a\nGPU-2\n", "m.csv: record on line 3"},
		{"m.csv", "device,tema\n", "m.csv:1: unknown column \"tema\""},
		{"m.csv", "team,job_id\na,1\n", "m.csv:1: the header has no device column"},
		{"m.csv", "device,team,workload_type\nGPU-1,a,x\n", "m.csv:2: workload_type \"x\""},
		{"m.csv", "", "m.csv:1: empty file"},
		{"m.txt", "device,team\n", "unknown mapping file type"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), tt.name)
			require.NoError(t, os.WriteFile(path, []byte(tt.body), 0o644))
			_, err := Load(path)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestReloadKeepsPreviousMappingOnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "map.csv")
	require.NoError(t, os.WriteFile(path, []byte("device,team\nGPU-1,a\n"), 0o644))
	f, err := Open(path)
	require.NoError(t, err)
	assert.Equal(t, "a", f.Rows()[0].Team)

	changed, err := f.Reload()
	require.NoError(t, err)
	assert.False(t, changed, "same mtime and size: nothing to do")

	touch := func(body string, at time.Time) {
		require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
		require.NoError(t, os.Chtimes(path, at, at))
	}
	touch("device,team\nGPU-1,b\nGPU-2,c\n", time.Now().Add(time.Second))
	changed, err = f.Reload()
	require.NoError(t, err)
	assert.True(t, changed)
	assert.Len(t, f.Rows(), 2)

	touch("device,team\nGPU-1\n", time.Now().Add(2*time.Second))
	changed, err = f.Reload()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "keeping the previous mapping")
	assert.False(t, changed)
	assert.Len(t, f.Rows(), 2)

	require.NoError(t, os.Remove(path))
	_, err = f.Reload()
	assert.ErrorContains(t, err, "keeping the previous mapping")
	assert.Len(t, f.Rows(), 2)

	_, err = Open(filepath.Join(t.TempDir(), "missing.yaml"))
	assert.ErrorContains(t, err, "mapping file")
}

func FuzzParse(f *testing.F) {
	for _, p := range []string{"testdata/mapping.yaml", "testdata/mapping.csv"} {
		b, _ := os.ReadFile(p)
		f.Add(b, p == "testdata/mapping.csv")
	}
	f.Fuzz(func(t *testing.T, data []byte, isCSV bool) {
		var rows []Row
		var err error
		if isCSV {
			rows, err = ParseCSV("f.csv", data)
		} else {
			rows, err = ParseYAML("f.yaml", data)
		}
		if err != nil {
			return
		}
		for _, r := range rows {
			if r.Device == "" || r.Share < 0 || r.Share > 1 {
				t.Fatalf("accepted bad row %+v", r)
			}
		}
	})
}
