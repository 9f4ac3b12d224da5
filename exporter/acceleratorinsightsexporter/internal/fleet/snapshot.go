// Package fleet is the console's view of the fleet: the snapshot both
// backends produce (one Resource per device, partition or consumer copy, one
// Server per inference endpoint, the MPS daemons), and the views the JSON
// API serves, computed from it by one set of functions, so that the memory
// and Prometheus backends answer alike.
package fleet

import (
	"time"

	"github.com/otelcol-accel/otelcol-accel/internal/xid"
)

// Identity is what a resource's attributes say it is. Empty strings are
// unknown.
type Identity struct {
	HWID          string
	Parent        string
	Node          string
	Cluster       string
	Host          string
	Kind          string // accelerator.kind: the family
	Vendor        string
	Model         string
	Index         int // accelerator.device.index; -1 unknown
	InstanceType  string
	Zone          string
	Region        string
	PartitionType string
	PartitionID   string
	Profile       string
	// Share is accelerator.partition.share; NaN when the resource had none.
	Share      float64
	Allocation string // accelerator.allocation.state
	Namespace  string
	Pod        string
	PodUID     string
	Container  string
	Team       string
	Workload   string
	WorkType   string
}

// Resource is one device, partition or consumer copy with its latest
// readings. Nil pointers are values the source did not report.
type Resource struct {
	Identity
	// Health is hw.status's current state (device resources only).
	Health string
	// Cause is the failure the device's hw.errors counters name
	// (xid.ErrorWatch), nil when none does: the console shows its action
	// until a health event says more (failure.go).
	Cause *xid.Cause
	// Utilization is hw.gpu.utilization, else accelerator.gr_engine.active.
	Utilization       *float64
	MemoryUsed        *float64
	MemoryLimit       *float64
	MemoryUtilization *float64
	// PricePerHour is accelerator.price (already this resource's share).
	PricePerHour *float64
	// WastePerHour is the rate of accelerator.waste by reason, USD/h.
	WastePerHour map[string]float64
}

// Quantiles are latency percentiles in seconds.
type Quantiles struct {
	P50 *float64 `json:"p50"`
	P90 *float64 `json:"p90"`
	P99 *float64 `json:"p99"`
}

// Server is one inference endpoint serving one model.
type Server struct {
	Endpoint  string
	Provider  string
	Model     string
	Node      string
	Cluster   string
	Namespace string
	Pod       string
	PodUID    string
	Team      string
	Workload  string

	RequestRate       *float64
	TTFT, ITL, E2E    Quantiles
	RequestsRunning   *float64
	RequestsWaiting   *float64
	KVCache           *float64
	PrefixHitRatio    *float64
	PreemptionsPerSec *float64
	InputTokensPerSec *float64
	OutputTokensPerS  *float64
}

// MPS is one node's MPS control daemon.
type MPS struct {
	Node          string
	Cluster       string
	Up            *bool
	Servers       *float64
	ActiveThreads *float64
}

// Snapshot is the fleet at one moment, as one backend sees it.
type Snapshot struct {
	At        time.Time
	Resources []Resource
	Servers   []Server
	MPS       []MPS
}

// Point is one sample of a series: unix seconds and value.
type Point [2]float64

// Series is one chart's data.
type Series struct {
	Name     string  `json:"name"`
	Metric   string  `json:"metric"`
	Unit     string  `json:"unit"`
	Resource string  `json:"resource"`
	Points   []Point `json:"points"`
}

// ChartMetric names a device chart and the metric it draws.
type ChartMetric struct {
	Name   string
	Metric string
	Unit   string
}
