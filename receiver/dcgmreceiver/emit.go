package dcgmreceiver

import (
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/health"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/metadata"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/model"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/mps"
)

// hwStates are the values of hw.status, one data point each.
var hwStates = []metadata.AttributeHwState{
	metadata.AttributeHwStateOk, metadata.AttributeHwStateDegraded,
	metadata.AttributeHwStateFailed, metadata.AttributeHwStatePredictedFailure,
}

// emitter turns snapshots into metrics through the mdatagen builder, so that
// every metric and resource attribute can be switched off in the config.
// Not safe for concurrent use: scrapes are serialized.
type emitter struct {
	mb  *metadata.MetricsBuilder
	cfg metadata.MetricsBuilderConfig
}

func newEmitter(cfg metadata.MetricsBuilderConfig, set receiver.Settings, start time.Time) *emitter {
	return &emitter{
		mb:  metadata.NewMetricsBuilder(cfg, set, metadata.WithStartTime(pcommon.NewTimestampFromTime(start))),
		cfg: cfg,
	}
}

func (e *emitter) emit(snap *model.Snapshot, tracker *health.Tracker, mpsStatus *mps.Status, hostName string) pmetric.Metrics {
	ts := pcommon.NewTimestampFromTime(snap.Time)
	for i := range snap.Samples {
		s := &snap.Samples[i]
		e.recordSample(ts, s)
		if !s.IsMIG() {
			// hw.status and XID counts are the physical GPU's: its MIG
			// instances' XIDs and conditions count on it.
			e.recordHealth(ts, s, tracker, snap.Time)
		}
		e.mb.EmitForResource(metadata.WithResource(buildResource(e.mb.NewResourceBuilder(), s.Identity)))
	}
	if mpsStatus != nil && mpsStatus.Checked {
		up := int64(0)
		if mpsStatus.Up {
			up = 1
		}
		e.mb.RecordAcceleratorMpsDaemonUpDataPoint(ts, up)
		if mpsStatus.Up {
			if v := mpsStatus.Servers; v.OK {
				e.mb.RecordAcceleratorMpsServersDataPoint(ts, int64(v.V))
			}
			if v := mpsStatus.DefaultActiveThreads; v.OK {
				e.mb.RecordAcceleratorMpsActiveThreadPercentageDataPoint(ts, v.V)
			}
		}
		e.mb.EmitForResource(metadata.WithResource(nodeResource(e.mb.NewResourceBuilder(), hostName)))
	}
	return e.mb.Emit()
}

func (e *emitter) recordSample(ts pcommon.Timestamp, s *model.Sample) {
	mb := e.mb
	gauge := func(v model.Value, record func(pcommon.Timestamp, float64)) {
		if v.OK {
			record(ts, v.V)
		}
	}
	intValue := func(v model.Value, record func(pcommon.Timestamp, int64)) {
		if v.OK {
			record(ts, int64(v.V))
		}
	}
	if v := s.GPUUtil; v.OK {
		mb.RecordHwGpuUtilizationDataPoint(ts, v.V, metadata.AttributeHwGpuTaskGeneral)
	}
	if v := s.EncoderUtil; v.OK {
		mb.RecordHwGpuUtilizationDataPoint(ts, v.V, metadata.AttributeHwGpuTaskEncoder)
	}
	if v := s.DecoderUtil; v.OK {
		mb.RecordHwGpuUtilizationDataPoint(ts, v.V, metadata.AttributeHwGpuTaskDecoder)
	}
	if v := s.MemUsed; v.OK {
		mb.RecordHwGpuMemoryUsageDataPoint(ts, int64(v.V))
	}
	for _, p := range s.PodGPUUtil {
		mb.RecordHwGpuUtilizationDataPoint(ts, p.V, metadata.AttributeHwGpuTaskGeneral, metadata.WithAcceleratorConsumerPodMetricAttribute(p.Pod))
	}
	for _, p := range s.PodMemUsed {
		mb.RecordHwGpuMemoryUsageDataPoint(ts, int64(p.V), metadata.WithAcceleratorConsumerPodMetricAttribute(p.Pod))
	}
	// MemTotal is the resource's own size: the GPU's, or the MIG instance's,
	// which must not read as a second GPU's memory.
	if s.IsMIG() {
		intValue(s.MemTotal, mb.RecordAcceleratorPartitionMemoryLimitDataPoint)
	} else {
		intValue(s.MemTotal, mb.RecordHwGpuMemoryLimitDataPoint)
	}
	gauge(s.MemUtil, mb.RecordHwGpuMemoryUtilizationDataPoint)
	gauge(s.Power, mb.RecordHwPowerDataPoint)
	gauge(s.Energy, mb.RecordHwEnergyDataPoint)
	if v := s.TempGPU; v.OK {
		mb.RecordHwTemperatureDataPoint(ts, v.V, metadata.AttributeHwSensorLocationGpu)
	}
	if v := s.TempMemory; v.OK {
		mb.RecordHwTemperatureDataPoint(ts, v.V, metadata.AttributeHwSensorLocationMemory)
	}
	if v := s.ClockSM; v.OK {
		mb.RecordAcceleratorClockFrequencyDataPoint(ts, v.V, metadata.AttributeAcceleratorClockTypeSm)
	}
	if v := s.ClockMemory; v.OK {
		mb.RecordAcceleratorClockFrequencyDataPoint(ts, v.V, metadata.AttributeAcceleratorClockTypeMemory)
	}
	for reason := 0; reason < model.NumThrottleReasons; reason++ {
		attr := metadata.MapAttributeAcceleratorThrottleReason[model.ThrottleReasonNames[reason]]
		if v := s.ThrottleActive[reason]; v.OK {
			mb.RecordAcceleratorClockThrottleActiveDataPoint(ts, int64(v.V), attr)
		}
		if v := s.ThrottleTime[reason]; v.OK {
			mb.RecordAcceleratorClockThrottleTimeDataPoint(ts, v.V, attr)
		}
	}
	for link := 0; link < model.NumLinks; link++ {
		linkAttr := metadata.MapAttributeAcceleratorLinkType[model.LinkNames[link]]
		for dir := 0; dir < model.NumDirections; dir++ {
			dirAttr := metadata.MapAttributeHwDirection[model.DirectionNames[dir]]
			if v := s.LinkBytes[link][dir]; v.OK {
				mb.RecordHwGpuIoDataPoint(ts, int64(v.V), dirAttr, linkAttr)
			}
			if v := s.LinkRate[link][dir]; v.OK {
				mb.RecordAcceleratorLinkThroughputDataPoint(ts, v.V, dirAttr, linkAttr)
			}
		}
	}
	for kind := 0; kind < model.NumErrorTypes; kind++ {
		if v := s.Errors[kind]; v.OK {
			mb.RecordHwErrorsDataPoint(ts, int64(v.V), metadata.MapAttributeErrorType[model.ErrorTypeNames[kind]])
		}
	}
	gauge(s.GREngineActive, mb.RecordAcceleratorGrEngineActiveDataPoint)
	gauge(s.SMActive, mb.RecordAcceleratorSmActiveDataPoint)
	gauge(s.SMOccupancy, mb.RecordAcceleratorSmOccupancyDataPoint)
	gauge(s.TensorActive, mb.RecordAcceleratorTensorActiveDataPoint)
	gauge(s.DRAMActive, mb.RecordAcceleratorDramActiveDataPoint)
	for cause := 0; cause < model.NumRetirementCauses; cause++ {
		if v := s.RetiredPages[cause]; v.OK {
			mb.RecordAcceleratorMemoryRetiredPagesDataPoint(ts, int64(v.V),
				metadata.MapAttributeAcceleratorMemoryRetirementCause[model.RetirementCauseNames[cause]])
		}
	}
	if v := s.RemappedCorrectable; v.OK {
		mb.RecordAcceleratorMemoryRemappedRowsDataPoint(ts, int64(v.V), metadata.AttributeAcceleratorMemoryRemapTypeCorrectable)
	}
	if v := s.RemappedUncorrectable; v.OK {
		mb.RecordAcceleratorMemoryRemappedRowsDataPoint(ts, int64(v.V), metadata.AttributeAcceleratorMemoryRemapTypeUncorrectable)
	}
	intValue(s.RemapPending, mb.RecordAcceleratorMemoryRowRemapPendingDataPoint)
	intValue(s.RemapFailed, mb.RecordAcceleratorMemoryRowRemapFailedDataPoint)
	for _, p := range s.Processes {
		if p.MemBytes.OK {
			mb.RecordAcceleratorProcessMemoryUsageDataPoint(ts, int64(p.MemBytes.V), p.PID)
		}
		if p.SMUtil.OK {
			mb.RecordAcceleratorProcessUtilizationDataPoint(ts, p.SMUtil.V, p.PID)
		}
	}
}

// recordHealth writes a GPU's hw.status (one point per state, 1 for the
// current one) and its XID counts, its MIG instances' included.
func (e *emitter) recordHealth(ts pcommon.Timestamp, s *model.Sample, tracker *health.Tracker, now time.Time) {
	state := metadata.MapAttributeHwState[tracker.State(s.Identity, now)]
	for _, st := range hwStates {
		v := int64(0)
		if st == state {
			v = 1
		}
		e.mb.RecordHwStatusDataPoint(ts, v, st)
	}
	for _, c := range tracker.XIDCounts(s.HWID) {
		e.mb.RecordHwErrorsDataPoint(ts, c.Count, metadata.AttributeErrorTypeXid, metadata.WithAcceleratorXidMetricAttribute(int64(c.Code)))
	}
}

// buildResource sets the identity docs/architecture.md prescribes for a GPU
// or MIG instance.
func buildResource(rb *metadata.ResourceBuilder, id model.Identity) pcommon.Resource {
	rb.SetHwID(id.HWID)
	rb.SetHwTypeGpu()
	rb.SetHwVendor(accelschema.VendorNVIDIA)
	rb.SetAcceleratorKindNvidiaGpu()
	setString(rb.SetHwModel, id.Model)
	setString(rb.SetHwDriverVersion, id.DriverVersion)
	setString(rb.SetAcceleratorPciBusID, id.PCIBusID)
	setString(rb.SetHostName, id.HostName)
	if id.Index >= 0 {
		rb.SetAcceleratorDeviceIndex(int64(id.Index))
	}
	if id.IsMIG() {
		rb.SetAcceleratorPartitionTypeMig()
		rb.SetHwParent(id.Parent)
		setString(rb.SetAcceleratorPartitionID, id.PartitionID)
		setString(rb.SetAcceleratorPartitionProfile, id.Profile)
		if id.GPUInstanceID >= 0 {
			rb.SetAcceleratorMigGpuInstanceID(int64(id.GPUInstanceID))
		}
		if id.ComputeInstanceID >= 0 {
			rb.SetAcceleratorMigComputeInstanceID(int64(id.ComputeInstanceID))
		}
	} else {
		rb.SetAcceleratorPartitionTypeNone()
	}
	if id.Share > 0 {
		rb.SetAcceleratorPartitionShare(id.Share)
	}
	setString(rb.SetK8sPodName, id.Pod)
	setString(rb.SetK8sNamespaceName, id.Namespace)
	setString(rb.SetK8sContainerName, id.Container)
	setString(rb.SetAcceleratorDraClaimName, id.DRA.ClaimName)
	setString(rb.SetAcceleratorDraClaimNamespace, id.DRA.ClaimNamespace)
	setString(rb.SetAcceleratorDraDriver, id.DRA.Driver)
	setString(rb.SetAcceleratorDraPool, id.DRA.Pool)
	setString(rb.SetAcceleratorDraDevice, id.DRA.Device)
	return rb.Emit()
}

// nodeResource is the resource of node-level signals (the MPS daemon): the
// host, and the vendor and kind so that vendor-neutral views can place it;
// it has no hw.id because it is no device.
func nodeResource(rb *metadata.ResourceBuilder, hostName string) pcommon.Resource {
	rb.SetHwVendor(accelschema.VendorNVIDIA)
	rb.SetAcceleratorKindNvidiaGpu()
	setString(rb.SetHostName, hostName)
	return rb.Emit()
}

func setString(set func(string), v string) {
	if v != "" {
		set(v)
	}
}
