package acceleratorinsightsexporter

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.uber.org/zap"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorinsightsexporter/internal/k8sstore"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorinsightsexporter/internal/logstore"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorinsightsexporter/internal/memstore"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorinsightsexporter/internal/metadata"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorinsightsexporter/internal/promstore"
	"github.com/otelcol-accel/otelcol-accel/internal/componenthealth"
	"github.com/otelcol-accel/otelcol-accel/internal/hostguard"
)

// insightsExporter is one console: the model (or the Prometheus client),
// the log store and the HTTP server.
type insightsExporter struct {
	cfg      *Config
	set      exporter.Settings
	logger   *zap.Logger
	warn     *componenthealth.Logger
	problems *componenthealth.Problems

	mem     *memstore.Store // nil with backend prometheus
	logs    *logstore.Store
	api     *api
	tel     *metadata.TelemetryBuilder
	plans   *plansAPI
	k8s     *k8sstore.Store // accelerator_k8s and the latency diagnosis
	storage storage.Client

	server   *http.Server
	listener net.Listener
	guard    *hostguard.Guard
	writers  *writers
	routes   []string // the mux's patterns, every route the console serves
	done     sync.WaitGroup
}

func newExporter(cfg *Config, set exporter.Settings) (*insightsExporter, error) {
	token := make([]byte, 24)
	if _, err := rand.Read(token); err != nil {
		return nil, fmt.Errorf("making the CSRF token: %w", err)
	}
	e := &insightsExporter{
		cfg: cfg, set: set, logger: set.Logger,
		warn:     componenthealth.NewLogger(set.Logger, time.Minute),
		problems: componenthealth.NewProblems(),
		logs:     logstore.New(cfg.Logs.MaxEvents, cfg.Logs.MaxFindings),
	}
	e.api = &api{logs: e.logs, idle: cfg.IdleUtilization, rateWindow: cfg.RateWindow, retention: cfg.Memory.Retention,
		token: hex.EncodeToString(token), version: set.BuildInfo.Version, now: time.Now, warn: e.warn, audit: set.Logger}
	e.logs.SetRetention(cfg.Logs.DecisionRetention)
	tel, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	e.tel, e.api.tel = tel, tel
	e.plans = newPlansAPI(cfg.Remediation, e.api.token)
	e.k8s = k8sstore.New(k8sRecords, cfg.Memory.Expiry)
	if cfg.Backend == BackendMemory {
		e.mem = memstore.New(memstore.Config{Retention: cfg.Memory.Retention, PointsPerSeries: cfg.Memory.PointsPerSeries,
			Expiry: cfg.Memory.Expiry, RateWindow: cfg.RateWindow})
		e.api.backend = memoryBackend{e.mem}
	}
	if err := registerSeries(tel, e.mem); err != nil {
		tel.Shutdown()
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	return e, nil
}

func (e *insightsExporter) consumeMetrics(md pmetric.Metrics) {
	e.k8s.ConsumeMetrics(md)
	if e.mem != nil {
		countPoints(e.tel, e.mem.Consume(md))
	}
}

func (e *insightsExporter) consumeLogs(ld plog.Logs) {
	// Prune first: a finding raised again after the retention is open.
	if _, err := e.logs.PruneDue(context.Background(), e.api.now()); err != nil {
		e.warn.Warn("storage", "acknowledge/dismiss decisions past logs.decision_retention were not removed from storage", zap.Error(err))
	}
	e.logs.Consume(ld)
	e.k8s.ConsumeLogs(ld)
}

// handler is the console's HTTP handler (API, assets, security headers),
// every route behind the guard of the names it may be reached by.
func (e *insightsExporter) handler(guard *hostguard.Guard) http.Handler {
	mux := newRouteMux()
	e.api.routes(mux)
	e.plans.routes(mux)
	e.api.lifecycleRoutes(mux, e.k8s)
	mux.Handle("/", staticHandler())
	e.routes = mux.patterns
	return securityHeaders(countRequests(e.tel, guard.Handler(mux)))
}

func (e *insightsExporter) Start(ctx context.Context, host component.Host) error {
	e.problems.Start(host)
	if e.cfg.Backend == BackendPrometheus {
		client, err := e.cfg.Prometheus.ToClient(ctx, host.GetExtensions(), e.set.TelemetrySettings)
		if err != nil {
			return fmt.Errorf("prometheus: %w", err)
		}
		e.api.backend = promstore.New(client, e.cfg.Prometheus.Endpoint, e.cfg.RateWindow, e.cfg.Prometheus.Step, e.problems.Reporter("prometheus"))
	}
	if e.cfg.Storage != nil {
		c, err := storageClient(ctx, host, *e.cfg.Storage, e.set.ID)
		if err != nil {
			return err
		}
		if err := e.logs.UseStorage(ctx, c); err != nil {
			// The console still works; decisions of the last run are not
			// shown and new ones overwrite the unreadable record.
			e.problems.Fail("storage", err)
			e.logger.Warn("accelerator_insights: findings' acknowledge/dismiss state not restored", zap.Error(err))
		}
		e.storage = c
	}
	ln, err := e.cfg.ToListener(ctx)
	if err != nil {
		return fmt.Errorf("endpoint %s: cannot listen (another process on that port? set endpoint): %w", e.cfg.NetAddr.Endpoint, err)
	}
	guard, err := hostguard.New(e.cfg.Names, listenerPort(ln.Addr()), "accelerator_insights console", e.logger)
	if err != nil {
		_ = ln.Close()
		return err
	}
	e.writers = newWriters(e.cfg, ln.Addr())
	e.api.writers, e.plans.writers = e.writers, e.writers
	srv, err := e.cfg.ToServer(ctx, host.GetExtensions(), e.set.TelemetrySettings, e.handler(guard))
	if err != nil {
		_ = ln.Close()
		return err
	}
	e.server, e.listener, e.guard = srv, ln, guard
	e.logger.Info("accelerator_insights: console serving", zap.String("url", "http://"+ln.Addr().String()+"/"),
		zap.Strings("allowed_hosts", guard.Hosts()))
	if why := e.writers.readOnly(); why != "" {
		e.logger.Warn("accelerator_insights: the console is " + why)
	}
	e.done.Add(1)
	go func() {
		defer e.done.Done()
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			e.problems.Fail("server", err)
		}
	}()
	e.plans.start(host)
	return nil
}

// Addr is where the server listens (after Start).
func (e *insightsExporter) Addr() string {
	if e.listener == nil {
		return ""
	}
	return e.listener.Addr().String()
}

func (e *insightsExporter) Shutdown(ctx context.Context) error {
	var errs []error
	if e.server != nil {
		errs = append(errs, e.server.Shutdown(ctx))
		e.done.Wait()
	}
	e.api.wait()
	e.plans.shutdown()
	e.logs.Close()
	if e.storage != nil {
		errs = append(errs, e.storage.Close(ctx))
	}
	e.problems.Shutdown()
	e.tel.Shutdown()
	return errors.Join(errs...)
}

func storageClient(ctx context.Context, host component.Host, ext, self component.ID) (storage.Client, error) {
	x, ok := host.GetExtensions()[ext]
	if !ok {
		return nil, fmt.Errorf("storage: extension %q is not running; add it under `extensions:` and to `service.extensions`", ext)
	}
	se, ok := x.(storage.Extension)
	if !ok {
		return nil, fmt.Errorf("storage: extension %q is not a storage extension (use file_storage)", ext)
	}
	c, err := se.GetClient(ctx, component.KindExporter, self, "findings")
	if err != nil {
		return nil, fmt.Errorf("storage: %q gave no client: %w", ext, err)
	}
	return c, nil
}

// listenerPort is the TCP port a listener was given ("" for a unix socket).
func listenerPort(addr net.Addr) string {
	if a, ok := addr.(*net.TCPAddr); ok {
		return strconv.Itoa(a.Port)
	}
	return ""
}
