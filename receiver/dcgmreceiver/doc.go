// Package dcgmreceiver reports every NVIDIA GPU and MIG instance on a node in
// the unified accelerator schema (internal/accelschema), read in-process
// through NVML or from an existing dcgm-exporter, and emits health events
// (XID, uncorrected ECC, row remap, lost GPU, MPS daemon down) as log records
// classified by internal/xid.
//
// One instance serves both the metrics and the logs pipeline under the same
// component ID, so NVML is opened once.
//
//go:generate ../../bin/mdatagen metadata.yaml
package dcgmreceiver
