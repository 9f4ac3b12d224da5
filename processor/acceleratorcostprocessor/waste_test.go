package acceleratorcostprocessor

import (
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

// One interval of 36 s on a test.8gpu GPU (8 USD/h / 8 GPUs = 1 USD per
// GPU-hour) costs 1 × 36/3600 = 0.01 USD. Every expectation below is that
// number times the fraction docs/cost-model.md gives for the reason.
const step = 36 * time.Second

func TestWasteReasons(t *testing.T) {
	gib := float64(1 << 30)
	tests := []struct {
		name      string
		resources func(i int) []resource // batch i (0 is the first sighting)
		batches   int
		hwID      string
		partID    string
		cost      float64
		waste     map[string]float64
		setup     func(h *harness)
	}{
		{
			name: "busy: cost and no waste",
			resources: func(int) []resource {
				return []resource{gpu("GPU-busy", held("llm", s.WorkloadBatch, s.MetricGREngineActive, 0.7)...)}
			},
			batches: 2, hwID: "GPU-busy", cost: 0.01, waste: nil,
		},
		{
			name: "idle: allocated, GR-engine active below 5 %",
			resources: func(int) []resource {
				return []resource{gpu("GPU-idle", held("notebook", s.WorkloadInteractive, s.MetricGREngineActive, 0.02)...)}
			},
			batches: 2, hwID: "GPU-idle", cost: 0.01, waste: map[string]float64{s.WasteIdle: 0.01},
		},
		{
			name: "idle: the best signal wins (GR-engine 0.6 over utilization 0.01)",
			resources: func(int) []resource {
				return []resource{gpu("GPU-gr", held("job", s.WorkloadBatch, s.MetricGREngineActive, 0.6, s.MetricGPUUtilization, 0.01)...)}
			},
			batches: 2, hwID: "GPU-gr", cost: 0.01, waste: nil,
		},
		{
			name: "idle: utilization when it is the only signal",
			resources: func(int) []resource {
				return []resource{gpu("GPU-util", held("job", s.WorkloadBatch, s.MetricGPUUtilization, 0.01)...)}
			},
			batches: 2, hwID: "GPU-util", cost: 0.01, waste: map[string]float64{s.WasteIdle: 0.01},
		},
		{
			name: "unallocated: nobody holds it, busy or not",
			resources: func(int) []resource {
				return []resource{gpu("GPU-free", s.AttrAllocationState, s.AllocationUnallocated, s.MetricGREngineActive, 0.0)}
			},
			batches: 2, hwID: "GPU-free", cost: 0.01, waste: map[string]float64{s.WasteUnallocated: 0.01},
		},
		{
			name: "allocation state missing, no holder: treated as allocated",
			resources: func(int) []resource {
				return []resource{gpu("GPU-unknown", s.MetricGREngineActive, 0.5)}
			},
			batches: 2, hwID: "GPU-unknown", cost: 0.01, waste: nil,
		},
		{
			name: "unavailable: hw.status failed, even when unallocated",
			resources: func(int) []resource {
				return []resource{gpu("GPU-dead", s.AttrAllocationState, s.AllocationUnallocated, s.MetricStatus, s.HWStateFailed)}
			},
			batches: 2, hwID: "GPU-dead", cost: 0.01, waste: map[string]float64{s.WasteUnavailable: 0.01},
		},
		{
			name: "unavailable: a health event between the batches",
			resources: func(int) []resource {
				return []resource{gpu("GPU-xid", held("job", s.WorkloadBatch, s.MetricGREngineActive, 0.9)...)}
			},
			setup: func(h *harness) {
				h.sendLogs(healthEvent("GPU-xid", at(10*time.Second), 79, s.HWStateFailed, s.ActionRebootNode))
			},
			batches: 2, hwID: "GPU-xid", cost: 0.01, waste: map[string]float64{s.WasteUnavailable: 0.01},
		},
		{
			name: "degraded is not unavailable",
			resources: func(int) []resource {
				return []resource{gpu("GPU-degraded", held("job", s.WorkloadBatch, s.MetricGREngineActive, 0.9, s.MetricStatus, s.HWStateDegraded)...)}
			},
			batches: 2, hwID: "GPU-degraded", cost: 0.01, waste: nil,
		},
		{
			name: "training inefficiency: tensor activity 0.3 against a baseline of 0.6",
			resources: func(i int) []resource {
				tensor := 0.6
				if i == 4 {
					tensor = 0.3
				}
				return []resource{gpu("GPU-train", held("pretrain", s.WorkloadTraining, s.MetricGREngineActive, 0.9, s.MetricTensorActive, tensor)...)}
			},
			// Batches 1-3 build a baseline of exactly 0.6 (min_samples 3);
			// batch 4 wastes 1 − 0.3/0.6 = 0.5 of its 0.01.
			batches: 5, hwID: "GPU-train", cost: 0.04, waste: map[string]float64{s.WasteTrainingInefficiency: 0.005},
		},
		{
			name: "training within tolerance: 0.5 against 0.6 is not waste",
			resources: func(i int) []resource {
				tensor := 0.6
				if i == 4 {
					tensor = 0.5 // above 0.6 × (1 − 0.2)
				}
				return []resource{gpu("GPU-train-ok", held("pretrain2", s.WorkloadTraining, s.MetricGREngineActive, 0.9, s.MetricTensorActive, tensor)...)}
			},
			batches: 5, hwID: "GPU-train-ok", cost: 0.04, waste: nil,
		},
		{
			name: "inference under-utilized: activity 0.1, KV cache 0.2, empty queue",
			resources: func(int) []resource {
				return []resource{
					gpu("GPU-serve", held("chat", s.WorkloadInference, s.MetricGREngineActive, 0.1)...),
					res(s.AttrK8sPodUID, "uid-chat", s.AttrGenAIProviderName, s.ServerVLLM,
						s.MetricKVCacheUtilization, 0.2, s.MetricRequestsWaiting, 0.0, s.MetricRequestsRunning, 2.0),
				}
			},
			// load = max(0.1, 0.2) = 0.2; wasted 1 − 0.2/0.6 = 2/3 of 0.01.
			batches: 2, hwID: "GPU-serve", cost: 0.01, waste: map[string]float64{s.WasteInferenceUnderutilized: 0.01 * 2 / 3},
		},
		{
			name: "inference joined by namespace and pod name when the UID is missing",
			resources: func(int) []resource {
				return []resource{
					gpu("GPU-serve2", held("chat2", s.WorkloadInference, s.MetricGREngineActive, 0.1)...),
					res(s.AttrK8sPodName, "chat2-0", s.AttrK8sNamespaceName, "ml",
						s.MetricKVCacheUtilization, 0.3, s.MetricRequestsWaiting, 0.0),
				}
			},
			// load 0.3 is not below inference_max_kv_cache 0.3: not under-utilized.
			batches: 2, hwID: "GPU-serve2", cost: 0.01, waste: nil,
		},
		{
			name: "inference with a queue is not under-utilized",
			resources: func(int) []resource {
				return []resource{
					gpu("GPU-serve3", held("chat3", s.WorkloadInference, s.MetricGREngineActive, 0.1)...),
					res(s.AttrK8sPodUID, "uid-chat3", s.MetricKVCacheUtilization, 0.1, s.MetricRequestsWaiting, 4.0),
				}
			},
			batches: 2, hwID: "GPU-serve3", cost: 0.01, waste: nil,
		},
		{
			name: "overprovisioned memory: 8 GiB of 80 at activity 0.3, once the window is half covered",
			resources: func(int) []resource {
				return []resource{gpu("GPU-mem", held("etl", s.WorkloadBatch, s.MetricGREngineActive, 0.3,
					s.MetricGPUMemoryUsage, 8*gib, s.MetricGPUMemoryLimit, 80*gib)...)}
			},
			// Window 4 min, min coverage 0.5: intervals 1-3 (108 s) do not
			// cover 120 s, 4 and 5 do. Need = max(0.1, 0.3) × 1.2 = 0.36;
			// wasted 1 − 0.36 = 0.64 of 0.01, twice.
			batches: 6, hwID: "GPU-mem", cost: 0.05, waste: map[string]float64{s.WasteOverprovisionedMemory: 2 * 0.0064},
		},
		{
			name: "memory not overprovisioned: 35 GiB of 80",
			resources: func(int) []resource {
				return []resource{gpu("GPU-mem2", held("etl2", s.WorkloadBatch, s.MetricGREngineActive, 0.3,
					s.MetricGPUMemoryUsage, 35*gib, s.MetricGPUMemoryLimit, 80*gib)...)}
			},
			// 35/80 × 1.2 = 0.525, not below 0.5.
			batches: 6, hwID: "GPU-mem2", cost: 0.05, waste: nil,
		},
		{
			name: "fragmentation: two 3g.40gb leave a compute slice stranded inside their shares",
			resources: func(int) []resource {
				return []resource{
					migInstance("GPU-P1", "1", "3g.40gb", 0.5, held("a", s.WorkloadBatch, s.MetricGREngineActive, 0.5)...),
					migInstance("GPU-P1", "2", "3g.40gb", 0.5, held("b", s.WorkloadBatch, s.MetricGREngineActive, 0.5)...),
				}
			},
			// Σ shares = 1, remainder 0, stranded 1/7: each instance pays
			// 0.5 × 0.01 = 0.005, of which 1/7 is fragmentation.
			batches: 2, hwID: "GPU-P1/gi1", cost: 0.005, waste: map[string]float64{s.WasteFragmentation: 0.005 / 7},
		},
		{
			name: "time-sliced copy: its own processes decide, not the busy device",
			resources: func(int) []resource {
				return []resource{
					sharedGPU("GPU-TS", 0, s.AllocationAllocated, s.MetricGREngineActive, 0.8),
					sliced("GPU-TS", "GPU-TS::0", 0.5, held("quiet", s.WorkloadBatch, s.MetricProcessUtilization, []float64{0.01, 0.005})...),
					sliced("GPU-TS", "GPU-TS::1", 0.5, held("loud", s.WorkloadBatch, s.MetricProcessUtilization, []float64{0.79})...),
				}
			},
			batches: 2, hwID: "GPU-TS", partID: "GPU-TS::0", cost: 0.005, waste: map[string]float64{s.WasteIdle: 0.005},
		},
		{
			name: "time-sliced copy: its pod's own utilization (per_pod_usage) decides, not the busy device",
			resources: func(int) []resource {
				return []resource{
					sharedGPU("GPU-PP", 0, s.AllocationAllocated, s.MetricGREngineActive, 0.8),
					sliced("GPU-PP", "GPU-PP::0", 0.5, held("quiet", s.WorkloadBatch, s.MetricGPUUtilization, 0.01)...),
					sliced("GPU-PP", "GPU-PP::1", 0.5, held("loud", s.WorkloadBatch, s.MetricGPUUtilization, 0.79)...),
				}
			},
			batches: 2, hwID: "GPU-PP", partID: "GPU-PP::0", cost: 0.005, waste: map[string]float64{s.WasteIdle: 0.005},
		},
		{
			name: "time-sliced copy measured by nobody: the idle device's activity decides",
			resources: func(int) []resource {
				return []resource{
					sharedGPU("GPU-TI", 0.5, s.AllocationUnallocated, s.MetricGREngineActive, 0.01),
					sliced("GPU-TI", "GPU-TI::0", 0.5, held("quiet", s.WorkloadBatch)...),
				}
			},
			batches: 2, hwID: "GPU-TI", partID: "GPU-TI::0", cost: 0.005, waste: map[string]float64{s.WasteIdle: 0.005},
		},
		{
			name: "time-sliced copy measured by nobody: the busy device is nobody's idle waste",
			resources: func(int) []resource {
				return []resource{
					sharedGPU("GPU-TB", 0.5, s.AllocationUnallocated, s.MetricGREngineActive, 0.7),
					sliced("GPU-TB", "GPU-TB::0", 0.5, held("busy", s.WorkloadBatch)...),
				}
			},
			batches: 2, hwID: "GPU-TB", partID: "GPU-TB::0", cost: 0.005, waste: nil,
		},
		{
			name: "the shared GPU's own resource: the half nobody holds is unallocated",
			resources: func(int) []resource {
				return []resource{
					sharedGPU("GPU-TU", 0.5, s.AllocationUnallocated, s.MetricGREngineActive, 0.7),
					sliced("GPU-TU", "GPU-TU::0", 0.5, held("busy", s.WorkloadBatch)...),
				}
			},
			batches: 2, hwID: "GPU-TU", partID: deviceOwn, cost: 0.005, waste: map[string]float64{s.WasteUnallocated: 0.005},
		},
		{
			name: "reserved by a placeholder and idle: unallocated",
			resources: func(int) []resource {
				return []resource{gpu("GPU-res", s.AttrAllocationState, s.AllocationReserved, s.MetricGREngineActive, 0.01)}
			},
			batches: 2, hwID: "GPU-res", cost: 0.01, waste: map[string]float64{s.WasteUnallocated: 0.01},
		},
		{
			name: "reserved by a placeholder and busy: in use by workloads the scheduler placed there",
			resources: func(int) []resource {
				return []resource{gpu("GPU-res-busy", s.AttrAllocationState, s.AllocationReserved, s.MetricGREngineActive, 0.6)}
			},
			batches: 2, hwID: "GPU-res-busy", cost: 0.01, waste: nil,
		},
		{
			name: "reserved with no activity signal: nothing shows it in use",
			resources: func(int) []resource {
				return []resource{gpu("GPU-res-dark", s.AttrAllocationState, s.AllocationReserved, s.MetricPower, 100.0)}
			},
			batches: 2, hwID: "GPU-res-dark", cost: 0.01, waste: map[string]float64{s.WasteUnallocated: 0.01},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.Baselines.MinSamples = 3
			h := newHarness(t, cfg)
			var last costOut
			for i := 0; i < tt.batches; i++ {
				if i == 1 && tt.setup != nil {
					tt.setup(h)
				}
				last = costOf(h.send(at(time.Duration(i)*step), tt.resources(i)...), tt.hwID, tt.partID)
			}
			if !last.found {
				t.Fatal("no cost scope on the resource")
			}
			if !near(last.cost, tt.cost) {
				t.Errorf("cost %.10f, want %.10f", last.cost, tt.cost)
			}
			wantWaste(t, last, tt.waste)
			if last.totalWaste() > last.cost+1e-12 {
				t.Errorf("waste %.10f exceeds cost %.10f", last.totalWaste(), last.cost)
			}
		})
	}
}

func migInstance(parent, gi, profile string, share float64, kv ...any) resource {
	return res(append([]any{
		s.AttrHWID, parent + "/gi" + gi, s.AttrHWParent, parent, s.AttrHWModel, "NVIDIA A100-SXM4-80GB",
		s.AttrKind, s.KindNvidiaGPU, s.AttrPartitionType, s.PartitionMIG, s.AttrPartitionID, gi,
		s.AttrPartitionProfile, profile, s.AttrPartitionShare, share,
		s.AttrHostType, "test.8gpu", s.AttrCloudRegion, "us-east-1", s.AttrK8sNodeName, "node-a",
		s.AttrHWVendor, s.VendorNVIDIA,
	}, kv...)...)
}

// sharedGPU is the own resource of a GPU the attributes processor shares
// among consumers: its identity as received, no holder, the device's
// readings, and the share its consumers leave.
func sharedGPU(gpuID string, share float64, state string, kv ...any) resource {
	return gpu(gpuID, append([]any{s.AttrPartitionShare, share, s.AttrAllocationState, state}, kv...)...)
}

func sliced(gpuID, replica string, share float64, kv ...any) resource {
	return res(append([]any{
		s.AttrHWID, gpuID, s.AttrHWParent, gpuID, s.AttrHWModel, "NVIDIA A100-SXM4-80GB",
		s.AttrPartitionType, s.PartitionTimeSlicing, s.AttrPartitionID, replica, s.AttrPartitionShare, share,
		s.AttrHostType, "test.8gpu", s.AttrK8sNodeName, "node-a",
	}, kv...)...)
}

func healthEvent(hwID string, t pcommon.Timestamp, code int64, state, action string) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr(s.AttrHWID, hwID)
	lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.SetTimestamp(t)
	lr.Body().SetStr("XID event")
	lr.Attributes().PutStr(s.AttrEventName, s.EventXID)
	lr.Attributes().PutInt(s.AttrXID, code)
	lr.Attributes().PutStr(s.AttrHWState, state)
	if action != "" {
		lr.Attributes().PutStr(s.AttrHealthAction, action)
	}
	return ld
}
