package e2etest

import (
	"context"
	"net"
	"sync"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	// The zstd and snappy decompressors a collector's otlp receiver
	// accepts (configgrpc registers them), so an exporter set to either can
	// be pointed here as at a real gateway.
	_ "go.opentelemetry.io/collector/config/configgrpc"
	"google.golang.org/grpc"
	// Collectors compress OTLP/gRPC with gzip by default.
	_ "google.golang.org/grpc/encoding/gzip"
)

// OTLPSink is an OTLP/gRPC server on loopback that stands in for whatever a
// collector exports to (a gateway, a vendor's endpoint): it accepts every
// request and counts what arrived. Point an otlp_grpc exporter at Endpoint.
type OTLPSink struct {
	Endpoint string

	srv *grpc.Server

	mu          sync.Mutex
	points      int64
	metricsReqs int64
	logRecords  int64
	logsReqs    int64
	keep        bool
	metrics     []pmetric.Metrics
	logs        []plog.Logs
	onMetrics   func(pmetric.Metrics)
	changed     chan struct{}
}

// SinkOptions tunes StartOTLPSink.
type SinkOptions struct {
	// Keep stores every request (for tests that look at the data); load
	// runs leave it off and only count.
	Keep bool
	// OnMetrics, if set, sees every metrics request as it arrives. It must
	// not keep md after returning unless it copies it.
	OnMetrics func(md pmetric.Metrics)
	// Listen is the address to serve on; empty: a free loopback port. A
	// backend that is down at first is an address from FreeEndpoint that
	// the test starts the sink on later.
	Listen string
}

// StartOTLPSink starts a sink; it stops when the test ends.
func StartOTLPSink(t testing.TB, opts SinkOptions) *OTLPSink {
	t.Helper()
	addr := opts.Listen
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("OTLP sink: %v", err)
	}
	s := &OTLPSink{
		Endpoint:  l.Addr().String(),
		srv:       grpc.NewServer(grpc.MaxRecvMsgSize(256 << 20)),
		keep:      opts.Keep,
		onMetrics: opts.OnMetrics,
		changed:   make(chan struct{}),
	}
	pmetricotlp.RegisterGRPCServer(s.srv, &sinkMetrics{s: s})
	plogotlp.RegisterGRPCServer(s.srv, &sinkLogs{s: s})
	go func() { _ = s.srv.Serve(l) }()
	t.Cleanup(s.srv.Stop)
	return s
}

type sinkMetrics struct {
	pmetricotlp.UnimplementedGRPCServer
	s *OTLPSink
}

func (m *sinkMetrics) Export(_ context.Context, req pmetricotlp.ExportRequest) (pmetricotlp.ExportResponse, error) {
	md := req.Metrics()
	if m.s.onMetrics != nil {
		m.s.onMetrics(md)
	}
	n := int64(md.DataPointCount())
	m.s.mu.Lock()
	m.s.points += n
	m.s.metricsReqs++
	if m.s.keep {
		cp := pmetric.NewMetrics()
		md.CopyTo(cp)
		m.s.metrics = append(m.s.metrics, cp)
	}
	m.s.notifyLocked()
	m.s.mu.Unlock()
	return pmetricotlp.NewExportResponse(), nil
}

type sinkLogs struct {
	plogotlp.UnimplementedGRPCServer
	s *OTLPSink
}

func (l *sinkLogs) Export(_ context.Context, req plogotlp.ExportRequest) (plogotlp.ExportResponse, error) {
	ld := req.Logs()
	l.s.mu.Lock()
	l.s.logRecords += int64(ld.LogRecordCount())
	l.s.logsReqs++
	if l.s.keep {
		cp := plog.NewLogs()
		ld.CopyTo(cp)
		l.s.logs = append(l.s.logs, cp)
	}
	l.s.notifyLocked()
	l.s.mu.Unlock()
	return plogotlp.NewExportResponse(), nil
}

func (s *OTLPSink) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// Points is the number of metric data points received so far.
func (s *OTLPSink) Points() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.points
}

// MetricsRequests is the number of metrics export requests received.
func (s *OTLPSink) MetricsRequests() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.metricsReqs
}

// LogRecords is the number of log records received so far.
func (s *OTLPSink) LogRecords() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logRecords
}

// Metrics returns the kept metrics requests received from index from on,
// with the index to pass next time. Only with SinkOptions.Keep.
func (s *OTLPSink) Metrics(from int) ([]pmetric.Metrics, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if from > len(s.metrics) {
		from = len(s.metrics)
	}
	return append([]pmetric.Metrics(nil), s.metrics[from:]...), len(s.metrics)
}

// Logs returns the kept logs requests. Only with SinkOptions.Keep.
func (s *OTLPSink) Logs() []plog.Logs {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]plog.Logs(nil), s.logs...)
}

// WaitMetrics calls check with every kept metrics request as it arrives,
// from request index from on, until check returns true (then it returns
// the index after that request) or ctx ends.
func (s *OTLPSink) WaitMetrics(ctx context.Context, from int, check func(pmetric.Metrics) bool) (int, error) {
	for {
		s.mu.Lock()
		batch := append([]pmetric.Metrics(nil), s.metrics[min(from, len(s.metrics)):]...)
		changed := s.changed
		s.mu.Unlock()
		for _, md := range batch {
			from++
			if check(md) {
				return from, nil
			}
		}
		select {
		case <-ctx.Done():
			return from, ctx.Err()
		case <-changed:
		}
	}
}
