package acceleratorcostprocessor

import (
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/mig"
	"github.com/otelcol-accel/otelcol-accel/internal/xid"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorcostprocessor/internal/window"
)

// Waste reasons and finding kinds, in the order their cumulative values are
// kept and emitted.
var (
	wasteReasons = [...]string{
		s.WasteIdle, s.WasteUnallocated, s.WasteOverprovisionedMemory, s.WasteTrainingInefficiency,
		s.WasteInferenceUnderutilized, s.WasteUnavailable, s.WasteFragmentation,
	}
	findingKinds = [...]string{
		s.FindingRightsizing, s.FindingTrainingEfficiency, s.FindingInferenceUnderCapacity, s.FindingUnhealthyCapacity,
	}
)

const (
	wasteIdle = iota
	wasteUnallocated
	wasteMemory
	wasteTraining
	wasteInference
	wasteUnavailable
	wasteFragmentation
	numWasteReasons
)

const (
	findingRightsizing = iota
	findingTraining
	findingInference
	findingUnhealthy
	numFindingKinds
)

// resourceState is what the processor remembers about one device or
// partition resource between batches: its cumulative series and its window.
type resourceState struct {
	// attrs is a copy of the resource attributes, for findings raised when
	// the resource is not in the batch (a health event on the logs side).
	attrs pcommon.Map
	id    identity

	firstT, lastT pcommon.Timestamp
	seen          time.Time // wall clock, for the TTL

	cost     float64
	waste    [numWasteReasons]float64
	findings [numFindingKinds]int64
	raised   [numFindingKinds]pcommon.Timestamp

	win window.Window

	// devicePrice is the last price of the whole device per hour; share the
	// part of it this resource stands for.
	devicePrice, share float64
}

// childInfo is one partition of a physical device as last seen.
type childInfo struct {
	share   float64
	profile string
	parsed  mig.Profile // zero when the profile does not parse
	mig     bool
	lastT   pcommon.Timestamp
	seen    time.Time
}

// parentState is the layout of one physical device's partitions and, when
// the device has no resource of its own, the state of the remainder resource
// this processor emits for it.
type parentState struct {
	id       string // hw.id of the physical device
	batchSeq uint64 // the last batch that touched it
	children map[uint64]*childInfo
	// lastChildT is the newest child timestamp; interval the time between
	// the last two scrapes of the children (0 until known).
	lastChildT pcommon.Timestamp
	interval   pcommon.Timestamp
	// ownSeen is when the device's own (partition none) resource was last
	// seen; a device reported as a resource of its own carries its
	// remainder itself.
	ownSeen time.Time
	// template holds the device- and node-level attributes of a child, to
	// build the remainder resource from.
	template  pcommon.Map
	remainder *resourceState
	memoryGB  float64
	seen      time.Time

	// The layout of the last (batch, time) it was computed for, and scratch.
	cache      layout
	cacheBatch uint64
	cacheT     pcommon.Timestamp
	profiles   []mig.Profile
}

// sameScrape: child timestamps this close belong to the same scrape.
const sameScrape = pcommon.Timestamp(time.Second)

// layout is the parent's current partitions: those seen in the last scrape.
type layout struct {
	n int
	// scale is what the partitions' own shares are multiplied by so that
	// they add up to at most 1 (mig.FitFactor); sumShares is after scaling.
	scale         float64
	sumShares     float64
	hasMIG        bool
	remainder     float64 // 1 − Σ shares, at least 0
	stranded      float64 // mig.Stranded of the MIG layout
	fragRemainder float64 // part of the remainder that is stranded
	fragExcess    float64 // stranded capacity already inside the partitions' shares
}

// podSignals is the latest serving state of a pod, joined to the devices
// the pod holds.
type podSignals struct {
	t                    pcommon.Timestamp
	kv, waiting, running float64
	hasKV, hasQueue      bool
	seen                 time.Time
}

// healthState is what health events and hw.status said about a device.
type healthState struct {
	failedUntil  pcommon.Timestamp // from health events: event time + hold
	eventT       pcommon.Timestamp
	action, mode string
	description  string
	statusFailed bool // from the latest hw.status
	statusT      pcommon.Timestamp
	// statusSince is the data time hw.status turned failed.
	statusSince pcommon.Timestamp
	// errors names the failure the device's XID counts show
	// (healthcause.go), for a failure no health event has explained.
	errors xid.ErrorWatch
	seen   time.Time
}

// failedAt reports whether the interval that ends at t is spent failed: the
// latest hw.status says so, or a failure event happened before t and its
// hold has not run out.
func (h *healthState) failedAt(t pcommon.Timestamp) bool {
	return h.statusFailed || (h.failedUntil != 0 && h.eventT <= t && t <= h.failedUntil)
}
