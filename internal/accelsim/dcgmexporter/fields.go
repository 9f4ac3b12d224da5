// Package dcgmexporter serves what NVIDIA dcgm-exporter 4.x serves on
// /metrics for one node: DCGM_FI_* families in DCGM field-id order, one
// series per GPU (or per GPU instance when the GPU is in MIG mode, the GPU's
// own families repeated on each instance's row, read a moment apart: see
// migrows.go) with the exporter's label template, and, with Kubernetes
// mapping on, the pod,
// namespace and container of the device's holder as the exporter's default
// mode finds them (one pod per device, the last in the kubelet's list wins).
package dcgmexporter

import "github.com/otelcol-accel/otelcol-accel/internal/accelsim/sim"

// field is one counter of the exporter's CSV: name, Prometheus type, help
// (etc/default-counters.csv), the DCGM field id that orders the output, and
// how to read it from a sample.
type field struct {
	id    int
	name  string
	typ   string
	help  string
	isF   bool // DCGM_FT_DOUBLE: rendered with %f
	onMIG bool // reported for GPU instances
	get   func(s *sim.GPUSample) (int64, float64, bool)
}

func i64(f func(s *sim.GPUSample) int64) func(s *sim.GPUSample) (int64, float64, bool) {
	return func(s *sim.GPUSample) (int64, float64, bool) { return f(s), 0, true }
}

func f64(f func(s *sim.GPUSample) float64) func(s *sim.GPUSample) (int64, float64, bool) {
	return func(s *sim.GPUSample) (int64, float64, bool) { return 0, f(s), true }
}

// xidFieldID is DCGM_FI_DEV_XID_ERRORS, which also carries err_code/err_msg.
const xidFieldID = 230

// clockEventsFieldID is DCGM_FI_DEV_CLOCK_THROTTLE_REASONS, commented out in
// dcgm-exporter's default counters: printed only where a node's
// dcgm_exporter.clock_events enables it.
const clockEventsFieldID = 112

// fields are the default counters plus DCGM_FI_PROF_SM_ACTIVE and
// DCGM_FI_DEV_ROW_REMAP_PENDING, sorted by field id as the exporter renders.
var fields = []field{
	{100, "DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz).", false, true, i64(func(s *sim.GPUSample) int64 { return s.SMClock })},
	{101, "DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz).", false, true, i64(func(s *sim.GPUSample) int64 { return s.MemClock })},
	{clockEventsFieldID, "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "gauge", "Current clock throttle reasons.", false, true, i64(func(s *sim.GPUSample) int64 { return s.ThrottleReasons })},
	{140, "DCGM_FI_DEV_MEMORY_TEMP", "gauge", "Memory temperature (in C).", false, true, i64(func(s *sim.GPUSample) int64 { return s.MemTemp })},
	{150, "DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C).", false, true, i64(func(s *sim.GPUSample) int64 { return s.GPUTemp })},
	{155, "DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W).", true, true, f64(func(s *sim.GPUSample) float64 { return s.PowerW })},
	{156, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter", "Total energy consumption since boot (in mJ).", false, true, i64(func(s *sim.GPUSample) int64 { return s.EnergyMJ })},
	{202, "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "counter", "Total number of PCIe retries.", false, true, i64(func(s *sim.GPUSample) int64 { return s.PCIeReplay })},
	{203, "DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %).", false, false, i64(func(s *sim.GPUSample) int64 { return s.GPUUtil })},
	{204, "DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %).", false, false, i64(func(s *sim.GPUSample) int64 { return s.MemCopyUtil })},
	{206, "DCGM_FI_DEV_ENC_UTIL", "gauge", "Encoder utilization (in %).", false, true, i64(func(s *sim.GPUSample) int64 { return s.EncUtil })},
	{207, "DCGM_FI_DEV_DEC_UTIL", "gauge", "Decoder utilization (in %).", false, true, i64(func(s *sim.GPUSample) int64 { return s.DecUtil })},
	{xidFieldID, "DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered.", false, true, i64(func(s *sim.GPUSample) int64 { return s.XID })},
	{251, "DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB).", false, true, i64(func(s *sim.GPUSample) int64 { return s.FBFree })},
	{252, "DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB).", false, true, i64(func(s *sim.GPUSample) int64 { return s.FBUsed })},
	{253, "DCGM_FI_DEV_FB_RESERVED", "gauge", "Framebuffer memory reserved (in MiB).", false, true, i64(func(s *sim.GPUSample) int64 { return s.FBReserved })},
	// Row remapping cannot be queried on a GPU with active MIG instances.
	{393, "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "counter", "Number of remapped rows for uncorrectable errors", false, false, i64(func(s *sim.GPUSample) int64 { return s.UncorrRows })},
	{394, "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "counter", "Number of remapped rows for correctable errors", false, false, i64(func(s *sim.GPUSample) int64 { return s.CorrRows })},
	{395, "DCGM_FI_DEV_ROW_REMAP_FAILURE", "gauge", "Whether remapping of rows has failed", false, false, i64(func(s *sim.GPUSample) int64 { return s.RemapFailure })},
	{396, "DCGM_FI_DEV_ROW_REMAP_PENDING", "gauge", "Whether remapping of rows is pending", false, false, i64(func(s *sim.GPUSample) int64 { return s.RemapPending })},
	{449, "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "counter", "Total number of NVLink bandwidth counters for all lanes.", false, true, func(s *sim.GPUSample) (int64, float64, bool) {
		return s.NVLinkTotal, 0, s.NVLinkTotal >= 0
	}},
	{1001, "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gauge", "Ratio of time the graphics engine is active.", true, true, f64(func(s *sim.GPUSample) float64 { return s.GREngine })},
	{1002, "DCGM_FI_PROF_SM_ACTIVE", "gauge", "The ratio of cycles an SM has at least 1 warp assigned.", true, true, f64(func(s *sim.GPUSample) float64 { return s.SMActive })},
	{1004, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "gauge", "Ratio of cycles the tensor (HMMA) pipe is active.", true, true, f64(func(s *sim.GPUSample) float64 { return s.Tensor })},
	{1005, "DCGM_FI_PROF_DRAM_ACTIVE", "gauge", "Ratio of cycles the device memory interface is active sending or receiving data.", true, true, f64(func(s *sim.GPUSample) float64 { return s.DRAM })},
	{1009, "DCGM_FI_PROF_PCIE_TX_BYTES", "gauge", "The rate of data transmitted over the PCIe bus - including both protocol headers and data payloads - in bytes per second.", false, true, i64(func(s *sim.GPUSample) int64 { return s.PCIeTxBytes })},
	{1010, "DCGM_FI_PROF_PCIE_RX_BYTES", "gauge", "The rate of data received over the PCIe bus - including both protocol headers and data payloads - in bytes per second.", false, true, i64(func(s *sim.GPUSample) int64 { return s.PCIeRxBytes })},
}

// FieldNames lists the families the simulated exporter can emit.
func FieldNames() []string {
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = f.name
	}
	return out
}

// xidText is the err_msg the exporter attaches to DCGM_FI_DEV_XID_ERRORS for
// the XIDs scenarios use (internal/pkg/collector/xid_errors.go).
var xidText = map[int64]string{
	0:   "No Error",
	13:  "Graphics Engine Exception",
	31:  "GPU memory page fault",
	43:  "GPU stopped processing",
	45:  "Preemptive cleanup, due to previous errors -- Most likely to see when running multiple cuda",
	48:  "Double Bit ECC Error",
	63:  "ECC page retirement or row remapping recording event",
	64:  "ECC page retirement or row remapper recording failure",
	74:  "NVLINK Error",
	79:  "GPU has fallen off the bus",
	92:  "High single-bit ECC error rate",
	94:  "Contained ECC error",
	95:  "Uncontained ECC error",
	119: "GSP RPC Timeout",
	154: "GPU Recovery Action Changed",
}

func xidMessage(code int64) string {
	if s, ok := xidText[code]; ok {
		return s
	}
	return "Unknown Error"
}
