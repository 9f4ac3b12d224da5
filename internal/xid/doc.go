// Package xid classifies accelerator health signals — NVIDIA XIDs, ECC and
// row-remap state, lost devices, Neuron hardware ECC events, a dead MPS
// daemon — into a failure mode, a device state (hw.state) and a recommended
// action.
//
// Sources, in order of authority:
//   - NVIDIA, "Xid Errors" and "Analyzing Xid Errors with the Xid Catalog"
//     (docs.nvidia.com/deploy/xid-errors/): mnemonic, description and the
//     catalogue's "immediate action" resolution bucket (RESTART_APP,
//     RESET_GPU, RESTART_BM, IGNORE, WORKFLOW_*). Buckets map onto our action
//     vocabulary: RESTART_APP→restart_app, RESET_GPU→reset_gpu,
//     RESTART_BM→reboot_node, IGNORE→monitor, WORKFLOW_XID_48 and
//     WORKFLOW_NVLINK_ERR→drain_and_reset, CHECK_MECHANICALS→check_hardware,
//     CONTACT_SUPPORT→contact_support.
//   - AWS EKS node monitoring agent's list of fatal XIDs (46, 48, 54, 62, 63,
//     64, 74, 79, 95, 109, 110, 119, 120, 136, 140, 142, 143, 151, 155, 156,
//     158), which sets hw.state=failed for the ones it drains on.
//   - NVML row-remapper semantics (nvmlDeviceGetRemappedRows): pending means
//     the remap happens at the next reset and unaffected work keeps running;
//     failure means the RMA threshold is reached.
//   - AWS Neuron documentation for hardware ECC events: uncorrected errors on
//     an instance are remedied by replacing the instance.
//
// The table is data, not policy code: see catalogue.go.
package xid
