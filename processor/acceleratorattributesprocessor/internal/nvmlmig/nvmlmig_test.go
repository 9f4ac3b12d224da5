package nvmlmig

import (
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	mockserver "github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const migUUID = "MIG-4f5e6d7c-8b9a-5c4d-8e3f-2a1b0c9d8e7f"

// withMIG returns go-nvml's DGX A100 mock with one MIG device (GPU instance 5
// on GPU 2), as the driver would expose it after `nvidia-smi mig -cgi`.
func withMIG(t *testing.T) (*mockserver.Server, *int) {
	server := dgxa100.New()
	parent := server.Devices[2]
	lookups := 0
	migDev := &mock.Device{
		IsMigDeviceHandleFunc:                  func() (bool, nvml.Return) { return true, nvml.SUCCESS },
		GetDeviceHandleFromMigDeviceHandleFunc: func() (nvml.Device, nvml.Return) { return parent, nvml.SUCCESS },
		GetGpuInstanceIdFunc:                   func() (int, nvml.Return) { return 5, nvml.SUCCESS },
	}
	byUUID := server.DeviceGetHandleByUUIDFunc
	server.DeviceGetHandleByUUIDFunc = func(uuid string) (nvml.Device, nvml.Return) {
		lookups++
		if uuid == migUUID {
			return migDev, nvml.SUCCESS
		}
		return byUUID(uuid)
	}
	server.ErrorStringFunc = func(r nvml.Return) string {
		return "ERROR_" + map[nvml.Return]string{nvml.ERROR_INVALID_ARGUMENT: "INVALID_ARGUMENT", nvml.ERROR_LIBRARY_NOT_FOUND: "LIBRARY_NOT_FOUND"}[r]
	}
	return server, &lookups
}

func TestMIGPosition(t *testing.T) {
	server, lookups := withMIG(t)
	n, err := OpenWith(server)
	require.NoError(t, err)
	parentUUID, _ := server.Devices[2].GetUUID()

	pos, ok := n.MIGPosition(migUUID)
	require.True(t, ok)
	assert.Equal(t, Position{Parent: parentUUID, GI: 5}, pos)

	_, ok = n.MIGPosition("MIG-unknown")
	assert.False(t, ok)

	// Answers, found or not, are remembered.
	n.MIGPosition(migUUID)
	n.MIGPosition("MIG-unknown")
	assert.Equal(t, 2, *lookups)

	// A whole GPU is not a MIG device.
	gpu := server.Devices[0].(*mockserver.Device)
	gpu.IsMigDeviceHandleFunc = func() (bool, nvml.Return) { return false, nvml.SUCCESS }
	_, ok = n.MIGPosition(gpu.UUID)
	assert.False(t, ok)
}

func TestOpenWithoutLibrary(t *testing.T) {
	lib := &mock.Interface{
		InitFunc:        func() nvml.Return { return nvml.ERROR_LIBRARY_NOT_FOUND },
		ErrorStringFunc: func(nvml.Return) string { return "ERROR_LIBRARY_NOT_FOUND" },
	}
	_, err := OpenWith(lib)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "LIBRARY_NOT_FOUND")
}
