package model

import "github.com/otelcol-accel/otelcol-accel/internal/mig"

// MIGShare is the cost share of a MIG profile on its GPU, before the GPU's
// layout is fitted (mig.Fit); 0 when the profile cannot be read. The GPU's
// memory comes from its reported size, else from its model name.
func MIGShare(profile string, gpuMemoryBytes float64, modelName string) float64 {
	p, err := mig.ParseProfile(profile)
	if err != nil {
		return 0
	}
	gb := gpuMemoryBytes / (1 << 30)
	if gb <= 0 {
		gb = mig.MemoryGBFromModel(modelName)
	}
	return p.Share(gb)
}
