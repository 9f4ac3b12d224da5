package acceleratorattributesprocessor

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/collector/processor/processorhelper"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	corev1 "k8s.io/api/core/v1"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/metadata"
)

// TestTraceThroughOTLPReceiverGainsItsPodsDevice sends a span over real
// OTLP/gRPC to the collector's own OTLP receiver, which hands it on with
// the connection's address: the processor finds the pod by that address
// (the test's loopback address stands for the pod IP) and adds the GPU the
// pod holds, as a node agent's traces pipeline does.
func TestTraceThroughOTLPReceiverGainsItsPodsDevice(t *testing.T) {
	objects := podIPs(kubernetesNode())
	for _, o := range objects {
		if p, ok := o.(*corev1.Pod); ok && p.Name == "llama-train-0" {
			p.Status.PodIP = "127.0.0.1"
			p.Status.PodIPs = []corev1.PodIP{{IP: "127.0.0.1"}}
		}
	}
	h := newHarness(t, objects...)
	kubernetesKubelet(h.kubelet)
	h.start()

	sink := new(consumertest.TracesSink)
	ctx := context.Background()
	proc, err := processorhelper.NewTraces(ctx, processortest.NewNopSettings(metadata.Type), h.cfg, sink, h.p.processTraces,
		processorhelper.WithCapabilities(processorCapabilities))
	require.NoError(t, err)

	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	endpoint := l.Addr().String()
	require.NoError(t, l.Close())
	factory := otlpreceiver.NewFactory()
	rcfg := factory.CreateDefaultConfig().(*otlpreceiver.Config)
	rcfg.Protocols.GRPC.GetOrInsertDefault().NetAddr.Endpoint = endpoint
	rcv, err := factory.CreateTraces(ctx, receivertest.NewNopSettings(factory.Type()), rcfg, proc)
	require.NoError(t, err)
	require.NoError(t, rcv.Start(ctx, componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, rcv.Shutdown(context.Background())) })

	conn, err := grpc.NewClient(endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	td := ptrace.NewTraces()
	spansFrom(td, "trainer", nil)
	require.Eventually(t, func() bool {
		_, err := ptraceotlp.NewGRPCClient(conn).Export(ctx, ptraceotlp.NewExportRequestFromTraces(td))
		return err == nil
	}, 10*time.Second, 20*time.Millisecond, "the receiver listens")

	require.Len(t, sink.AllTraces(), 1)
	attrs := sink.AllTraces()[0].ResourceSpans().At(0).Resource().Attributes()
	assert.Equal(t, []string{gpu0}, strSlice(t, attrs, accelschema.AttrAcceleratorHWIDs))
	assert.Equal(t, "llama-train-0", strAttr(attrs, accelschema.AttrK8sPodName))
	assert.Equal(t, nodeName, strAttr(attrs, accelschema.AttrK8sNodeName))
	assert.Equal(t, "trainer", strAttr(attrs, "service.name"))
}
