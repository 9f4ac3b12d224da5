package kernellog

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FakeSysfs lays out the kernel's sysfs links for devices at the paths
// given (relative to /sys/devices), and drivers' bindings, under dir.
func fakeSysfs(t *testing.T, devices map[string]string, drivers map[string][]string) string {
	t.Helper()
	dir := t.TempDir()
	for bus, path := range devices {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "devices", path), 0o755))
		link := filepath.Join(dir, "bus", "pci", "devices", bus)
		require.NoError(t, os.MkdirAll(filepath.Dir(link), 0o755))
		require.NoError(t, os.Symlink(filepath.Join("..", "..", "..", "devices", path), link))
	}
	for driver, buses := range drivers {
		d := filepath.Join(dir, "bus", "pci", "drivers", driver)
		require.NoError(t, os.MkdirAll(d, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(d, "bind"), nil, 0o600))
		for _, bus := range buses {
			require.NoError(t, os.Symlink(filepath.Join("..", "..", "..", "..", "devices", devices[bus]), filepath.Join(d, bus)))
		}
	}
	return dir
}

func TestPCITopology(t *testing.T) {
	sys := fakeSysfs(t, map[string]string{
		"0000:00:03.0": "pci0000:00/0000:00:03.0",
		"0000:03:00.0": "pci0000:00/0000:00:03.0/0000:03:00.0",
		"0000:03:00.1": "pci0000:00/0000:00:03.0/0000:03:00.1",
		// An HGX baseboard: a switch's ports between the root port and the GPU.
		"0000:91:00.0": "pci0000:80/0000:80:01.0/0000:81:00.0/0000:82:08.0/0000:91:00.0",
	}, map[string][]string{"nvidia": {"0000:03:00.0", "0000:91:00.0"}})
	p := &PCITopology{SysPath: sys}
	assert.Equal(t, []string{"0000:00:03.0"}, p.Upstream("0000:03:00.0"))
	assert.Equal(t, []string{"0000:80:01.0", "0000:81:00.0", "0000:82:08.0"}, p.Upstream("0000:91:00.0"))
	assert.True(t, p.Behind("0000:91:00.0", "0000:81:00.0"))
	assert.False(t, p.Behind("0000:03:00.0", "0000:80:01.0"))
	assert.Nil(t, p.Upstream("0000:aa:00.0"), "a device sysfs does not know")
	assert.Equal(t, []string{"0000:03:00.0", "0000:91:00.0"}, p.Bound("nvidia"))
	assert.Nil(t, p.Bound("neuron"))
	assert.True(t, SameSlot("0000:03:00.1", "0000:03:00.0"))
	assert.False(t, SameSlot("0000:03:01.0", "0000:03:00.0"))
}
