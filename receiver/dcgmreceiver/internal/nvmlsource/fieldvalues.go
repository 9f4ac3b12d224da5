package nvmlsource

import (
	"encoding/binary"
	"math"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/model"
)

// allLinks asks an NVLink field for the sum over all links.
const allLinks = math.MaxUint32

// fieldRequests are read in one nvmlDeviceGetFieldValues call per GPU.
var fieldRequests = [...]struct {
	id    uint32
	scope uint32
	store func(s *model.Sample, v float64)
}{
	{nvml.FI_DEV_MEMORY_TEMP, 0, func(s *model.Sample, v float64) { s.TempMemory = model.Of(v) }},
	{nvml.FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL, 0, addError(model.ErrNVLinkCRC)},
	{nvml.FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL, 0, addError(model.ErrNVLinkCRC)},
	{nvml.FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL, 0, addError(model.ErrNVLinkReplay)},
	{nvml.FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL, 0, addError(model.ErrNVLinkRecovery)},
	{nvml.FI_DEV_PCIE_COUNT_TX_BYTES, 0, linkBytes(model.LinkPCIe, model.DirTransmit, 1)},
	{nvml.FI_DEV_PCIE_COUNT_RX_BYTES, 0, linkBytes(model.LinkPCIe, model.DirReceive, 1)},
	// NVLink data throughput counters are in KiB.
	{nvml.FI_DEV_NVLINK_THROUGHPUT_DATA_TX, allLinks, linkBytes(model.LinkNVLink, model.DirTransmit, 1024)},
	{nvml.FI_DEV_NVLINK_THROUGHPUT_DATA_RX, allLinks, linkBytes(model.LinkNVLink, model.DirReceive, 1024)},
}

func addError(kind int) func(s *model.Sample, v float64) {
	return func(s *model.Sample, v float64) { s.Errors[kind] = model.Of(s.Errors[kind].V + v) }
}

func linkBytes(link, dir int, scale float64) func(s *model.Sample, v float64) {
	return func(s *model.Sample, v float64) { s.LinkBytes[link][dir] = model.Of(v * scale) }
}

func (s *Source) readFieldValues(r *reading, smp *model.Sample) {
	var values [len(fieldRequests)]nvml.FieldValue
	for i, f := range fieldRequests {
		values[i].FieldId, values[i].ScopeId = f.id, f.scope
	}
	if !r.ok("GetFieldValues", r.g.handle.GetFieldValues(values[:])) {
		return
	}
	for i, v := range values {
		if nvml.Return(v.NvmlReturn) != nvml.SUCCESS {
			continue // a field this GPU or driver does not have
		}
		if f, ok := FieldValueFloat(v); ok {
			fieldRequests[i].store(smp, f)
		}
	}
}

// FieldValueFloat decodes an NVML field value by its declared type.
func FieldValueFloat(v nvml.FieldValue) (float64, bool) {
	b := v.Value[:]
	switch nvml.ValueType(v.ValueType) {
	case nvml.VALUE_TYPE_DOUBLE:
		return math.Float64frombits(binary.NativeEndian.Uint64(b)), true
	case nvml.VALUE_TYPE_UNSIGNED_INT:
		return float64(binary.NativeEndian.Uint32(b)), true
	case nvml.VALUE_TYPE_UNSIGNED_LONG, nvml.VALUE_TYPE_UNSIGNED_LONG_LONG:
		return float64(binary.NativeEndian.Uint64(b)), true
	case nvml.VALUE_TYPE_SIGNED_LONG_LONG:
		return float64(int64(binary.NativeEndian.Uint64(b))), true
	case nvml.VALUE_TYPE_SIGNED_INT:
		return float64(int32(binary.NativeEndian.Uint32(b))), true
	case nvml.VALUE_TYPE_UNSIGNED_SHORT:
		return float64(binary.NativeEndian.Uint16(b)), true
	}
	return 0, false
}
