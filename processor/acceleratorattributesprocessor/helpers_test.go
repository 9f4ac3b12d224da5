package acceleratorattributesprocessor

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/k8sclient"
	"github.com/otelcol-accel/otelcol-accel/internal/k8sclient/k8sclienttest"
	prt "github.com/otelcol-accel/otelcol-accel/internal/podresources/podresourcestest"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/kube"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/nvmlmig"
)

var update = flag.Bool("update", false, "rewrite the expected golden files in testdata/expected")

const nodeName = "gpu-node-1"

// statusHost records the status events the processor reports.
type statusHost struct {
	component.Host
	mu     sync.Mutex
	events []*componentstatus.Event
}

func (h *statusHost) Report(e *componentstatus.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, e)
}

func (h *statusHost) last() *componentstatus.Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.events) == 0 {
		return nil
	}
	return h.events[len(h.events)-1]
}

// harness runs the processor against a real PodResources gRPC server on a
// unix socket, client-go's fake API server, and a fake /proc.
type harness struct {
	t        testing.TB
	dir      string
	socket   string
	kubelet  *prt.Server
	client   *fake.Clientset
	procRoot string
	host     *statusHost
	logs     *observer.ObservedLogs
	p        *attributesProcessor
	cfg      *Config
	// mig, when set, stands in for NVML (go-nvml's mock servers).
	mig nvmlmig.Resolver
}

func newHarness(t testing.TB, objects ...runtime.Object) *harness {
	dir, err := os.MkdirTemp("", "aap")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	h := &harness{t: t, dir: dir, socket: filepath.Join(dir, "kubelet.sock"), procRoot: filepath.Join(dir, "proc"), host: &statusHost{Host: componenttest.NewNopHost()}}
	h.kubelet = prt.New()
	require.NoError(t, h.kubelet.Start(h.socket))
	t.Cleanup(h.kubelet.Stop)
	h.client = fake.NewClientset(objects...)
	h.client.Resources = []*metav1.APIResourceList{{GroupVersion: "resource.k8s.io/v1"}}
	require.NoError(t, os.MkdirAll(h.procRoot, 0o755))
	cfg := createDefaultConfig().(*Config)
	cfg.NodeName = nodeName
	cfg.PodResourcesSocket = h.socket
	cfg.ProcRoot = h.procRoot
	cfg.MIGLookup = migLookupNone
	cfg.RefreshInterval = time.Hour // tests refresh explicitly
	cfg.PodLabels = []string{"app"}
	h.cfg = cfg
	return h
}

// start creates and starts the processor, then waits for the informers.
func (h *harness) start() {
	core, logs := observer.New(zap.DebugLevel)
	h.logs = logs
	tel := componenttest.NewNopTelemetrySettings()
	tel.Logger = zap.New(core)
	h.p = newAttributesProcessor(h.cfg, tel)
	h.p.registry = registryOf(h.client)
	h.p.openMIG = func() (nvmlmig.Resolver, func(), error) {
		if h.mig != nil {
			return h.mig, func() {}, nil
		}
		return nil, nil, errNoNVML
	}
	require.NoError(h.t, h.p.Start(context.Background(), h.host))
	h.t.Cleanup(func() { require.NoError(h.t, h.p.Shutdown(context.Background())) })
	if w := h.p.watcher(); w != nil {
		require.Eventually(h.t, func() bool { return w.Synced() || len(w.Problems()) > 0 }, 10*time.Second, 5*time.Millisecond)
	}
	h.p.refresh(context.Background())
}

// watcher is the Kubernetes API source's watcher; nil when the source is off
// or could not start.
func (p *attributesProcessor) watcher() *kube.Watcher {
	for _, s := range p.sources {
		if k, ok := s.(*kubernetesSource); ok {
			return k.w
		}
	}
	return nil
}

// registryOf hands out informers over client only, so tests of several
// processors do not share informers through the process's registry.
func registryOf(client kubernetes.Interface) *k8sclient.Registry {
	return k8sclient.NewRegistry(k8sclienttest.Providers(client))
}

func (h *harness) process(md pmetric.Metrics) pmetric.Metrics {
	out, err := h.p.processMetrics(context.Background(), md)
	require.NoError(h.t, err)
	return out
}

// writeCgroup places a process in a pod's cgroup in the fake /proc.
func (h *harness) writeCgroup(pid int, content string) {
	dir := filepath.Join(h.procRoot, strconv.Itoa(pid))
	require.NoError(h.t, os.MkdirAll(dir, 0o755))
	require.NoError(h.t, os.WriteFile(filepath.Join(dir, "cgroup"), []byte(content), 0o644))
}

// Resource builders, shaped like the receivers' output (docs/architecture.md).

type kv struct {
	k string
	v any
}

func putAttrs(m pcommon.Map, kvs []kv) {
	for _, a := range kvs {
		switch v := a.v.(type) {
		case string:
			m.PutStr(a.k, v)
		case int:
			m.PutInt(a.k, int64(v))
		case float64:
			m.PutDouble(a.k, v)
		}
	}
}

func gpuAttrs(uuid string, index int) []kv {
	return []kv{
		{accelschema.AttrHWID, uuid}, {accelschema.AttrHWType, accelschema.HWTypeGPU},
		{accelschema.AttrHWVendor, accelschema.VendorNVIDIA}, {accelschema.AttrHWModel, "NVIDIA H100 80GB HBM3"},
		{accelschema.AttrKind, accelschema.KindNvidiaGPU}, {accelschema.AttrDeviceIndex, index},
		{accelschema.AttrPartitionType, accelschema.PartitionNone}, {accelschema.AttrPartitionShare, 1.0},
		{accelschema.AttrHostName, nodeName},
	}
}

func migAttrs(hwID, parent string, index, gi int, profile string, share float64) []kv {
	return []kv{
		{accelschema.AttrHWID, hwID}, {accelschema.AttrHWParent, parent}, {accelschema.AttrHWType, accelschema.HWTypeGPU},
		{accelschema.AttrHWVendor, accelschema.VendorNVIDIA}, {accelschema.AttrHWModel, "NVIDIA H100 80GB HBM3"},
		{accelschema.AttrKind, accelschema.KindNvidiaGPU}, {accelschema.AttrDeviceIndex, index},
		{accelschema.AttrPartitionType, accelschema.PartitionMIG}, {accelschema.AttrPartitionID, strconv.Itoa(gi)},
		{accelschema.AttrMIGGPUInstanceID, gi}, {accelschema.AttrPartitionProfile, profile},
		{accelschema.AttrPartitionShare, share}, {accelschema.AttrHostName, nodeName},
	}
}

// addDevice appends a device or partition resource as the receivers emit
// it: utilization (measured for the resource), power only on a physical
// device's own resource (no hw.parent: counted once per device), and, for
// each pid, per-process points.
func addDevice(md pmetric.Metrics, attrs []kv, pids ...int) pmetric.ResourceMetrics {
	return addReadings(md, attrs, true, pids...)
}

// addDeviceReadings appends the own resource of a GPU whose utilization is
// reported by its MIG instances, or per pod (the dcgm receiver's
// per_pod_usage emits no total beside the pods' points): it carries only
// what is counted per device.
func addDeviceReadings(md pmetric.Metrics, attrs []kv) pmetric.ResourceMetrics {
	return addReadings(md, attrs, false)
}

func addReadings(md pmetric.Metrics, attrs []kv, utilization bool, pids ...int) pmetric.ResourceMetrics {
	rm := md.ResourceMetrics().AppendEmpty()
	putAttrs(rm.Resource().Attributes(), attrs)
	sm := rm.ScopeMetrics().AppendEmpty()
	sm.Scope().SetName("github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver")
	ts := pcommon.NewTimestampFromTime(time.Unix(1754300000, 0))
	gauge := func(name, unit string, v float64) {
		m := sm.Metrics().AppendEmpty()
		m.SetName(name)
		m.SetUnit(unit)
		dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
		dp.SetTimestamp(ts)
		dp.SetDoubleValue(v)
	}
	if utilization {
		gauge(accelschema.MetricGPUUtilization, "1", 0.62)
	}
	if strAttr(rm.Resource().Attributes(), accelschema.AttrHWParent) == "" {
		gauge(accelschema.MetricPower, "W", 412.5)
	}
	if len(pids) > 0 {
		mem := sm.Metrics().AppendEmpty()
		mem.SetName(accelschema.MetricProcessMemoryUsage)
		mem.SetUnit("By")
		util := sm.Metrics().AppendEmpty()
		util.SetName(accelschema.MetricProcessUtilization)
		util.SetUnit("1")
		memDPs, utilDPs := mem.SetEmptyGauge().DataPoints(), util.SetEmptyGauge().DataPoints()
		for i, pid := range pids {
			dp := memDPs.AppendEmpty()
			dp.SetTimestamp(ts)
			dp.SetIntValue(int64(1+i) << 30)
			dp.Attributes().PutInt(accelschema.AttrProcessPID, int64(pid))
			dp = utilDPs.AppendEmpty()
			dp.SetTimestamp(ts)
			dp.SetDoubleValue(0.1 * float64(1+i))
			dp.Attributes().PutInt(accelschema.AttrProcessPID, int64(pid))
		}
	}
	return rm
}

// addInference appends an inference server's resource.
func addInference(md pmetric.Metrics, attrs []kv) {
	rm := md.ResourceMetrics().AppendEmpty()
	putAttrs(rm.Resource().Attributes(), attrs)
	m := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	m.SetName(accelschema.MetricRequestsRunning)
	m.SetUnit("{request}")
	dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
	dp.SetTimestamp(pcommon.NewTimestampFromTime(time.Unix(1754300000, 0)))
	dp.SetIntValue(7)
}

// resources indexes the output by hw.id and holder, for assertions.
func resourcesByID(md pmetric.Metrics) map[string][]pmetric.ResourceMetrics {
	out := map[string][]pmetric.ResourceMetrics{}
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		id := strAttr(rms.At(i).Resource().Attributes(), accelschema.AttrHWID)
		out[id] = append(out[id], rms.At(i))
	}
	return out
}

func resAttr(rm pmetric.ResourceMetrics, key string) any {
	v, ok := rm.Resource().Attributes().Get(key)
	if !ok {
		return nil
	}
	return v.AsRaw()
}

func fakeClientset(objects []runtime.Object) *fake.Clientset {
	c := fake.NewClientset(objects...)
	c.Resources = []*metav1.APIResourceList{{GroupVersion: "resource.k8s.io/v1"}}
	return c
}
