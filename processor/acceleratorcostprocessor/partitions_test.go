package acceleratorcostprocessor

import (
	"testing"
	"time"

	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/accelschema/countcheck"
)

// The tests below check the one property the whole cost model rests on: the
// prices of the resources of one physical device add up to the device's
// price, whatever the receivers and the attributes processor made of it.
// test.8gpu is 1 USD per GPU-hour; test.neuron 2 USD per device-hour (two
// cores of 1 USD).

// priceOfDevice adds the accelerator.price of every output resource that
// belongs to the physical device hwID (itself, its partitions, the copies of
// either, the processor's remainder), and checks on each that the exported
// accelerator.partition.share is what it was priced at.
func priceOfDevice(t *testing.T, md pmetric.Metrics, hwID string, devicePrice float64) (sum float64, n int) {
	t.Helper()
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		attrs := md.ResourceMetrics().At(i).Resource().Attributes()
		id, parent := stringAttr(attrs, s.AttrHWID), stringAttr(attrs, s.AttrHWParent)
		if id != hwID && parent != hwID {
			continue
		}
		c := costOfResource(md.ResourceMetrics().At(i))
		if !c.found {
			continue
		}
		share := 1.0
		if v, ok := attrs.Get(s.AttrPartitionShare); ok {
			share = v.Double()
		}
		if !near(c.price, devicePrice*share) {
			t.Errorf("%s (partition %s): price %v but share %v of %v", id, stringAttr(attrs, s.AttrPartitionID), c.price, share, devicePrice)
		}
		sum += c.price
		n++
	}
	return sum, n
}

func costOfResource(rm pmetric.ResourceMetrics) costOut {
	md := pmetric.NewMetrics()
	rm.CopyTo(md.ResourceMetrics().AppendEmpty())
	return costOf(md, stringAttr(rm.Resource().Attributes(), s.AttrHWID), "")
}

func TestOverbookedMIGLayoutIsScaledToTheGPU(t *testing.T) {
	for _, tc := range []struct {
		name      string
		instances []resource
		// want is each instance's price (USD/h, = its share of 1 USD/h).
		want map[string]float64
	}{
		{
			// 3g.40gb (4/8 of the memory) + 4g.40gb (4/7 of the compute):
			// 15/14 of a GPU by their own shares, scaled by 14/15.
			name: "3g.40gb + 4g.40gb",
			instances: []resource{
				migInstance("GPU-A", "1", "3g.40gb", 0.5, held("a", s.WorkloadBatch, s.MetricGREngineActive, 0.5)...),
				migInstance("GPU-A", "2", "4g.40gb", 4.0/7, held("b", s.WorkloadBatch, s.MetricGREngineActive, 0.5)...),
			},
			want: map[string]float64{"GPU-A/gi1": 0.5 * 14 / 15, "GPU-A/gi2": 4.0 / 7 * 14 / 15},
		},
		{
			// The demo's H100 GPU 0, shares left for the processor to work
			// out from the profiles: 4/8 + 2/7 + 1/7 + 1/7 = 15/14.
			name: "3g + 2g + 1g + 1g without shares",
			instances: []resource{
				withoutShare(migInstance("GPU-B", "2", "3g.40gb", 0, held("a", s.WorkloadBatch, s.MetricGREngineActive, 0.5)...)),
				withoutShare(migInstance("GPU-B", "3", "2g.20gb", 0, s.AttrAllocationState, s.AllocationUnallocated, s.MetricGREngineActive, 0.0)),
				withoutShare(migInstance("GPU-B", "9", "1g.10gb", 0, s.AttrAllocationState, s.AllocationUnallocated, s.MetricGREngineActive, 0.0)),
				withoutShare(migInstance("GPU-B", "10", "1g.10gb", 0, s.AttrAllocationState, s.AllocationUnallocated, s.MetricGREngineActive, 0.0)),
			},
			want: map[string]float64{
				"GPU-B/gi2": 0.5 * 14 / 15, "GPU-B/gi3": 2.0 / 7 * 14 / 15,
				"GPU-B/gi9": 1.0 / 7 * 14 / 15, "GPU-B/gi10": 1.0 / 7 * 14 / 15,
			},
		},
		{
			// 4/8 + 4/8 fill the memory: exactly one GPU, nothing scaled
			// (the 7th compute slice is fragmentation inside the shares).
			name: "2 × 3g.40gb",
			instances: []resource{
				migInstance("GPU-C", "1", "3g.40gb", 0.5, held("a", s.WorkloadBatch, s.MetricGREngineActive, 0.5)...),
				migInstance("GPU-C", "2", "3g.40gb", 0.5, held("b", s.WorkloadBatch, s.MetricGREngineActive, 0.5)...),
			},
			want: map[string]float64{"GPU-C/gi1": 0.5, "GPU-C/gi2": 0.5},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, testConfig())
			h.send(at(0), tc.instances...)
			out := h.send(at(step), tc.instances...)
			for hwID, want := range tc.want {
				got := costOf(out, hwID, "")
				if !near(got.price, want) || !near(got.cost, want*0.01) {
					t.Errorf("%s: price %v cost %v, want %v and %v", hwID, got.price, got.cost, want, want*0.01)
				}
			}
			parent := stringAttr(tc.instances[0].attrsMap(), s.AttrHWParent)
			sum, n := priceOfDevice(t, out, parent, 1)
			if !near(sum, 1) || n != len(tc.instances) {
				t.Errorf("the GPU's %d resources cost %v per hour, want 1 from %d instances (no remainder)", n, sum, len(tc.instances))
			}
		})
	}
}

// with sets resource attributes.
func with(r resource, kv ...any) resource {
	for i := 0; i+1 < len(kv); i += 2 {
		r.attrs[kv[i].(string)] = kv[i+1]
	}
	return r
}

// withoutShare drops accelerator.partition.share, as a receiver that does
// not know the GPU's memory would.
func withoutShare(r resource) resource {
	delete(r.attrs, s.AttrPartitionShare)
	return r
}

func (r resource) attrsMap() pcommon.Map {
	m := pcommon.NewMap()
	_ = m.FromRaw(r.attrs)
	return m
}

// neuronDevice is a device-level Neuron resource as the attributes
// processor leaves it: in place for one holder of all its cores (type
// neuroncore, the cores as the partition id, share 1), else as the receiver
// made it (its cores say who holds them).
func neuronDevice(partType, partID string, share float64, kv ...any) resource {
	return res(append([]any{
		s.AttrHWID, "neuron_device_0", s.AttrHWModel, "inferentia2", s.AttrKind, s.KindAWSNeuron,
		s.AttrDeviceIndex, 0, s.AttrPartitionType, partType, s.AttrPartitionID, partID, s.AttrPartitionShare, share,
		s.AttrHostType, "test.neuron", s.AttrK8sNodeName, "node-n",
		s.MetricGPUMemoryUsage, []float64{1 << 30, 2 << 30},
	}, kv...)...)
}

func neuronCore(i int, kv ...any) resource {
	id := []string{"0", "1"}[i]
	return res(append([]any{
		s.AttrHWID, "neuron_device_0/neuroncore_" + id, s.AttrHWParent, "neuron_device_0", s.AttrNeuronCoreIndex, i,
		s.AttrHWModel, "inferentia2", s.AttrKind, s.KindAWSNeuron, s.AttrPartitionType, s.PartitionNeuronCore,
		s.AttrPartitionID, id, s.AttrPartitionShare, 0.5, s.AttrHostType, "test.neuron", s.AttrK8sNodeName, "node-n",
		s.MetricGPUUtilization, 0.5,
	}, kv...)...)
}

func TestNeuronDeviceIsPricedOnceWhateverTheAttributesProcessorDid(t *testing.T) {
	pod := func(name string) []any {
		return []any{s.AttrK8sPodName, name, s.AttrK8sNamespaceName, "ml", s.AttrAllocationState, s.AllocationAllocated}
	}
	unallocated := []any{s.AttrAllocationState, s.AllocationUnallocated}
	for _, tc := range []struct {
		name      string
		resources []resource
	}{
		{
			name: "one holder of both cores: the device enriched in place and typed neuroncore",
			resources: []resource{
				neuronDevice(s.PartitionNeuronCore, "0,1", 1, pod("inf-0")...),
				neuronCore(0, pod("inf-0")...), neuronCore(1, pod("inf-0")...),
			},
		},
		{
			name: "cores held by two pods: the device allocated, not copied",
			resources: []resource{
				neuronDevice(s.PartitionNone, "", 1, s.AttrAllocationState, s.AllocationAllocated),
				neuronCore(0, pod("nb-0")...), neuronCore(1, pod("inf-0")...),
			},
		},
		{
			name: "nobody holds it: the device as the receiver made it",
			resources: []resource{
				neuronDevice(s.PartitionNone, "", 1, unallocated...),
				neuronCore(0, unallocated...), neuronCore(1, unallocated...),
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, testConfig())
			h.send(at(0), tc.resources...)
			out := h.send(at(step), tc.resources...)
			sum, n := priceOfDevice(t, out, "neuron_device_0", 2)
			if !near(sum, 2) || n != len(tc.resources) {
				t.Fatalf("neuron_device_0 costs %v per hour over %d resources, want 2 over %d", sum, n, len(tc.resources))
			}
			for i := 0; i < out.ResourceMetrics().Len(); i++ {
				rm := out.ResourceMetrics().At(i)
				attrs := rm.Resource().Attributes()
				_, isCore := attrs.Get(s.AttrNeuronCoreIndex)
				c := costOfResource(rm)
				switch {
				case isCore && !near(c.price, 1):
					t.Errorf("core %s: price %v, want 1", stringAttr(attrs, s.AttrHWID), c.price)
				case !isCore && c.price != 0:
					t.Errorf("device-level resource (partition %q): price %v, want 0: its cores carry the device",
						stringAttr(attrs, s.AttrPartitionID), c.price)
				}
			}
		})
	}
}

// A GPU whose own resource was given a partition type by an upstream
// processor (here a whole-GPU DRA claim) still stands only for what its MIG
// instances leave.
func TestMIGParentOfAnyPartitionTypeCarriesOnlyTheRemainder(t *testing.T) {
	h := newHarness(t, testConfig())
	parent := gpu("GPU-P", s.AttrPartitionType, s.PartitionDRA, s.AttrPartitionID, "gpu.nvidia.com/pool/gpu-0",
		s.AttrPartitionShare, 1.0, s.AttrAllocationState, s.AllocationAllocated, s.MetricPower, 300.0)
	a := migInstance("GPU-P", "1", "3g.40gb", 0.5, held("a", s.WorkloadBatch, s.MetricGREngineActive, 0.5)...)
	b := migInstance("GPU-P", "2", "4g.40gb", 4.0/7, s.AttrAllocationState, s.AllocationUnallocated, s.MetricGREngineActive, 0.0)
	h.send(at(0), parent, a, b)
	out := h.send(at(step), parent, a, b)
	if sum, n := priceOfDevice(t, out, "GPU-P", 1); !near(sum, 1) || n != 3 {
		t.Fatalf("GPU-P costs %v per hour over %d resources, want 1 over 3", sum, n)
	}
	if own := costOf(out, "GPU-P", "gpu.nvidia.com/pool/gpu-0"); own.price != 0 {
		t.Errorf("the GPU's own resource: price %v, want 0 (its instances fill it)", own.price)
	}
	if rem := costOf(out, "GPU-P", remainderID); rem.found {
		t.Error("a GPU with a resource of its own gets no synthetic remainder")
	}
}

// A shared device reaches the processor as its own resource (every
// device-wide reading; the share its consumers leave) plus one copy per
// consumer (hw.parent = the device; only what was measured for it). Its
// resources' prices add up to the device's price whatever the sharing, and
// the output still counts every quantity once.
func TestSharedDeviceIsPricedOnce(t *testing.T) {
	gib := float64(1 << 30)
	deviceReadings := []any{s.MetricPower, 300.0, s.MetricGREngineActive, 0.4, s.MetricGPUMemoryLimit, 80 * gib}
	copyOf := func(gpuID, partType, partID string, share float64, pod string, kv ...any) resource {
		return res(append([]any{
			s.AttrHWID, gpuID, s.AttrHWParent, gpuID, s.AttrHWModel, "NVIDIA A100-SXM4-80GB", s.AttrKind, s.KindNvidiaGPU,
			s.AttrPartitionType, partType, s.AttrPartitionID, partID, s.AttrPartitionShare, share,
			s.AttrHostType, "test.8gpu", s.AttrCloudRegion, "us-east-1", s.AttrK8sNodeName, "node-a",
		}, append(held(pod, s.WorkloadBatch), kv...)...)...)
	}
	for _, tc := range []struct {
		name      string
		resources []resource
		physical  string
		// wantOwn is the price of the device's own resource (what is left).
		wantOwn float64
	}{
		{
			name: "time-sliced, half held",
			resources: []resource{
				sharedGPU("GPU-T", 0.5, s.AllocationUnallocated, deviceReadings...),
				copyOf("GPU-T", s.PartitionTimeSlicing, "GPU-T::0", 0.25, "a", s.MetricProcessUtilization, []float64{0.2}),
				copyOf("GPU-T", s.PartitionTimeSlicing, "GPU-T::1", 0.25, "b"),
			},
			physical: "GPU-T", wantOwn: 0.5,
		},
		{
			name: "DRA claim shared by two pods, all of it",
			resources: []resource{
				sharedGPU("GPU-D", 0, s.AllocationAllocated, deviceReadings...),
				copyOf("GPU-D", s.PartitionDRA, "gpu.nvidia.com/node-a/gpu-0", 0.5, "a", s.MetricGPUUtilization, 0.3),
				copyOf("GPU-D", s.PartitionDRA, "gpu.nvidia.com/node-a/gpu-0", 0.5, "b", s.MetricGPUUtilization, 0.1),
			},
			physical: "GPU-D", wantOwn: 0,
		},
		{
			name: "MPS over-booked by the attributes processor's inputs, and a reserved quarter",
			resources: []resource{
				sharedGPU("GPU-M", 0.25, s.AllocationReserved, deviceReadings...),
				copyOf("GPU-M", s.PartitionMPS, "1", 0.5, "a"),
				copyOf("GPU-M", s.PartitionMPS, "2", 0.5, "b"),
			},
			// 0.25 + 0.5 + 0.5: the copies are fitted to what is left.
			physical: "GPU-M", wantOwn: 0,
		},
		{
			name: "mapping-file shares (partition type left none)",
			resources: []resource{
				sharedGPU("GPU-S", 0.2, s.AllocationUnallocated, deviceReadings...),
				copyOf("GPU-S", s.PartitionNone, "", 0.4, "a"),
				copyOf("GPU-S", s.PartitionNone, "", 0.4, "b"),
			},
			physical: "GPU-S", wantOwn: 0.2,
		},
		{
			name: "a MIG instance shared through DRA",
			resources: []resource{
				gpu("GPU-X", s.AttrAllocationState, s.AllocationAllocated, s.MetricPower, 300.0),
				migInstance("GPU-X", "1", "3g.40gb", 0, s.AttrAllocationState, s.AllocationAllocated, s.MetricGREngineActive, 0.4),
				with(migInstance("GPU-X", "1", "3g.40gb", 0.25, held("a", s.WorkloadBatch)...), s.AttrPartitionType, s.PartitionDRA, s.AttrPartitionID, "dra-a"),
				with(migInstance("GPU-X", "1", "3g.40gb", 0.25, held("b", s.WorkloadBatch)...), s.AttrPartitionType, s.PartitionDRA, s.AttrPartitionID, "dra-b"),
				migInstance("GPU-X", "2", "3g.40gb", 0.5, s.AttrAllocationState, s.AllocationUnallocated, s.MetricGREngineActive, 0.0),
			},
			physical: "GPU-X", wantOwn: 0,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, testConfig())
			h.send(at(0), tc.resources...)
			out := h.send(at(step), tc.resources...)
			if sum, n := priceOfDevice(t, out, tc.physical, 1); !near(sum, 1) || n != len(tc.resources) {
				t.Errorf("%s costs %v per hour over %d resources, want 1 over %d", tc.physical, sum, n, len(tc.resources))
			}
			if own := costOf(out, tc.physical, deviceOwn); !own.found || !near(own.price, tc.wantOwn) {
				t.Errorf("the device's own resource: %+v, want price %v", own, tc.wantOwn)
			}
			if v := countcheck.Violations(out); len(v) > 0 {
				t.Errorf("not counted once:\n%s", strings.Join(v, "\n"))
			}
		})
	}
}

func TestNoAdviceForResourcesNobodyHolds(t *testing.T) {
	gib := float64(1 << 30)
	// A MIG instance dcgm-exporter reports with no pod on it: idle, nearly
	// empty, and with no allocation state (the attributes processor could
	// not tell). It fits a 1g.10gb, but nobody could act on that.
	orphan := func(kv ...any) resource {
		return migInstance("GPU-O", "3", "2g.20gb", 2.0/7, append([]any{
			s.MetricGREngineActive, 0.0, s.MetricGPUMemoryUsage, 0.0, s.MetricGPUMemoryLimit, 20 * gib,
			s.AttrWorkloadType, s.WorkloadInference,
		}, kv...)...)
	}
	serving := []any{s.AttrK8sPodUID, "uid-x", s.MetricKVCacheUtilization, 0.0, s.MetricRequestsWaiting, 0.0}
	for _, tc := range []struct {
		name   string
		holder []any
		want   bool
	}{
		{"no holder", nil, false},
		{"a pod", []any{s.AttrK8sPodName, "x-0", s.AttrK8sNamespaceName, "ml", s.AttrK8sPodUID, "uid-x"}, true},
		{"a job from the mapping file", []any{s.AttrJobID, "81234"}, true},
		{"a workload", []any{s.AttrWorkloadName, "x"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, testConfig())
			for i := 0; i < 6; i++ {
				h.send(at(time.Duration(i)*minute), orphan(tc.holder...), res(serving...))
			}
			kinds := map[string]int{}
			for _, f := range h.findings() {
				k, _ := f.Attributes().Get(s.AttrFindingKind)
				kinds[k.Str()]++
			}
			if got := kinds[s.FindingRightsizing] > 0; got != tc.want {
				t.Errorf("rightsizing raised: %v, want %v (findings %v)", got, tc.want, kinds)
			}
			if !tc.want && len(kinds) > 0 {
				t.Errorf("findings about a resource nobody holds: %v", kinds)
			}
		})
	}

	// Unhealthy capacity is about the device, not its holder: still raised.
	h := newHarness(t, testConfig())
	h.send(at(0), orphan())
	h.sendLogs(healthEvent("GPU-O", at(10*time.Second), 79, s.HWStateFailed, s.ActionRebootNode))
	h.send(at(minute), orphan())
	found := false
	for _, f := range h.findings() {
		if k, _ := f.Attributes().Get(s.AttrFindingKind); k.Str() == s.FindingUnhealthyCapacity {
			found = true
		}
	}
	if !found {
		t.Error("no unhealthy-capacity finding for a failed GPU nobody holds")
	}
}

// neuron-monitor marks a failed device's cores failed in hw.status (metrics
// pipeline) and reports the hardware error, with the action, as an event on
// the device (logs pipeline), often a moment later. The cores' findings
// carry the device's action, not "contact support".
func TestCoreFailureTakesItsDevicesAction(t *testing.T) {
	h := newHarness(t, testConfig())
	failed := []any{s.MetricStatus, s.HWStateFailed}
	batchOf := func() []resource {
		return []resource{neuronDevice(s.PartitionNone, "", 1, failed...), neuronCore(0, failed...), neuronCore(1, failed...)}
	}
	h.send(at(0), batchOf()...)
	if n := len(h.findings()); n != 0 {
		t.Fatalf("%d findings before the health event had a chance to say why", n)
	}
	ev := healthEvent("neuron_device_0", at(time.Second), 0, s.HWStateFailed, s.ActionReplaceDevice)
	h.sendLogs(ev)
	h.send(at(step), batchOf()...)
	h.send(at(2*step), batchOf()...)
	fs := h.findings()
	if len(fs) != 2 {
		t.Fatalf("want one finding per core (the device resource costs nothing of its own), got %d", len(fs))
	}
	for _, f := range fs {
		if a, _ := f.Attributes().Get(s.AttrHealthAction); a.Str() != s.ActionReplaceDevice {
			t.Errorf("finding %q: action %q, want %q from the device's event", f.Body().Str(), a.Str(), s.ActionReplaceDevice)
		}
	}
}

// The other order: the device's event comes first, before the processor has
// seen its cores; the cores' first failed interval takes its action.
func TestCoreFailureAfterItsDevicesEvent(t *testing.T) {
	h := newHarness(t, testConfig())
	failed := []any{s.MetricStatus, s.HWStateFailed}
	h.sendLogs(healthEvent("neuron_device_0", at(0), 0, s.HWStateFailed, s.ActionReplaceDevice))
	for i := 0; i < 3; i++ {
		h.send(at(time.Duration(i)*step), neuronDevice(s.PartitionNone, "", 1, failed...), neuronCore(0, failed...), neuronCore(1, failed...))
	}
	fs := h.findings()
	if len(fs) != 2 {
		t.Fatalf("want one finding per core, got %d", len(fs))
	}
	for _, f := range fs {
		if a, _ := f.Attributes().Get(s.AttrHealthAction); a.Str() != s.ActionReplaceDevice {
			t.Errorf("finding %q: action %q, want %q from the device's event", f.Body().Str(), a.Str(), s.ActionReplaceDevice)
		}
	}
}
