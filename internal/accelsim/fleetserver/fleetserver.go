// Package fleetserver starts every simulated source of a fleet — the
// Kubernetes API, and per node dcgm-exporter, kubelet PodResources and the
// inference servers of its pods — and describes them in endpoints.json.
package fleetserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/catalog"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/dcgmexporter"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/endpoints"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/fleet"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/inference"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/kernlog"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/kubeapi"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/podresources"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/sim"
)

// Options say what to serve and where.
type Options struct {
	// ScenarioPath is recorded in endpoints.json and passed to neuron-monitor.
	ScenarioPath string
	StateDir     string
	Seed         uint64
	Speed        float64
	// PortBase, when non-zero, gives the Kubernetes API PortBase, then one
	// port per NVIDIA node's dcgm-exporter, then one per inference server,
	// in scenario order. Zero picks free ports.
	PortBase int
	// Host is the address to listen on (default 127.0.0.1).
	Host string
	// Executable is the accelsim binary neuron-monitor commands run.
	Executable string
	Clock      sim.Clock
}

// Running is a served fleet.
type Running struct {
	File     *endpoints.File
	Path     string
	World    *sim.World
	Timeline sim.Timeline
	kube     *kubeapi.Server
	https    []*http.Server
	grpcs    []*grpc.Server
	sockets  []string
	wg       sync.WaitGroup
	conns    connTracker
	// stopKernelLogs ends the kernel log writers.
	stopKernelLogs context.CancelFunc
}

// connTracker remembers connections that never sent a request. Clients dial
// ahead and may park such a connection; http.Server.Shutdown waits for it,
// so Close closes it first.
type connTracker struct {
	mu    sync.Mutex
	fresh map[net.Conn]struct{}
}

func (c *connTracker) track(conn net.Conn, st http.ConnState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fresh == nil {
		c.fresh = map[net.Conn]struct{}{}
	}
	if st == http.StateNew {
		c.fresh[conn] = struct{}{}
	} else {
		delete(c.fresh, conn)
	}
}

func (c *connTracker) closeFresh() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for conn := range c.fresh {
		_ = conn.Close()
	}
	c.fresh = nil
}

// Start serves fleet f. On error everything already started is stopped.
func Start(f *fleet.Fleet, opts Options) (_ *Running, err error) {
	if opts.Host == "" {
		opts.Host = "127.0.0.1"
	}
	if opts.Clock == nil {
		opts.Clock = sim.WallClock{}
	}
	if opts.Speed <= 0 {
		opts.Speed = 1
	}
	dir, err := filepath.Abs(opts.StateDir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("state directory: %w", err)
	}
	started := opts.Clock.Now().UTC()
	tl := sim.Timeline{Start: started, Speed: opts.Speed, Clock: opts.Clock}
	world := sim.NewWorld(f)
	kernelCtx, stopKernelLogs := context.WithCancel(context.Background())
	r := &Running{World: world, Timeline: tl, stopKernelLogs: stopKernelLogs}
	defer func() {
		if err != nil {
			_ = r.Close(context.Background())
		}
	}()
	port := opts.PortBase
	listen := func(what string) (net.Listener, error) {
		addr := net.JoinHostPort(opts.Host, "0")
		if opts.PortBase != 0 {
			addr = net.JoinHostPort(opts.Host, strconv.Itoa(port))
			port++
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("%s: listen on %s: %w (choose another --port-base)", what, addr, err)
		}
		return l, nil
	}
	serveHTTP := func(l net.Listener, h http.Handler) string {
		hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ConnState: r.conns.track}
		r.https = append(r.https, hs)
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			_ = hs.Serve(l)
		}()
		return "http://" + l.Addr().String()
	}

	store, err := kubeapi.NewStore(kubeapi.Objects(f))
	if err != nil {
		return nil, err
	}
	r.kube = kubeapi.NewServer(store)
	l, err := listen("Kubernetes API")
	if err != nil {
		return nil, err
	}
	apiURL := serveHTTP(l, r.kube)
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := kubeapi.WriteKubeconfig(kubeconfig, apiURL, f.Cluster); err != nil {
		return nil, err
	}
	file := &endpoints.File{
		SchemaVersion: endpoints.SchemaVersion, Scenario: opts.ScenarioPath, Seed: f.Seed, Speed: opts.Speed,
		StartedAt: started, Cluster: f.Cluster, Region: f.Region, Kubeconfig: kubeconfig, KubernetesAPI: apiURL,
	}
	for _, n := range f.Nodes {
		en := describeNode(n)
		if n.Kind == catalog.KindNVIDIA {
			l, err := listen("dcgm-exporter of " + n.Name)
			if err != nil {
				return nil, err
			}
			en.DCGMExporterURL = serveHTTP(l, dcgmexporter.NewHandler(world, n, tl)) + "/metrics"
			en.DCGMPerPodUsage = n.DCGM.VirtualGPUs
		}
		sock := filepath.Join(dir, n.Name, "kubelet.sock")
		sl, err := podresources.Listen(sock)
		if err != nil {
			return nil, err
		}
		r.sockets = append(r.sockets, sock)
		prs := podresources.New(n)
		followEvictions(store, n.Name, prs)
		gs := podresources.NewGRPCServer(prs)
		r.grpcs = append(r.grpcs, gs)
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			_ = gs.Serve(sl)
		}()
		en.PodResourcesSocket = sock
		en.KernelLog = filepath.Join(dir, n.Name, "kern.log")
		if err := writeKernelLog(kernelCtx, &r.wg, en.KernelLog, n, tl); err != nil {
			return nil, err
		}
		if n.Kind == catalog.KindNeuron {
			cmd, err := neuronMonitorCommand(dir, n, f.Seed, opts, started)
			if err != nil {
				return nil, err
			}
			en.NeuronMonitor = cmd
		}
		file.Nodes = append(file.Nodes, en)
	}
	// Inference servers come after all exporters so --port-base layouts
	// stay stable when pods are added.
	for i, n := range f.Nodes {
		for _, p := range n.Pods {
			if p.Inference == nil {
				continue
			}
			l, err := listen("inference server of " + p.Namespace + "/" + p.Name)
			if err != nil {
				return nil, err
			}
			url := serveHTTP(l, inference.NewHandler(world, p.Inference, tl, started)) + "/metrics"
			file.Nodes[i].Inference = append(file.Nodes[i].Inference, endpoints.InferenceTarget{
				URL: url, Server: p.Inference.Server, Model: p.Inference.Model,
				Pod: p.Name, Namespace: p.Namespace, PodUID: p.UID, Container: p.Inference.Container,
			})
		}
	}
	r.File = file
	r.Path, err = endpoints.Write(dir, file)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// followEvictions keeps a node's PodResources in step with the simulated
// cluster: a pod evicted or deleted through the API no longer holds its
// devices, so the agents' attribution changes as on a real node.
func followEvictions(store *kubeapi.Store, node string, prs *podresources.Server) {
	store.Observe(func(typ string, obj runtime.Object) {
		if p, ok := obj.(*corev1.Pod); ok && typ == "DELETED" && p.Spec.NodeName == node {
			prs.Remove(p.Namespace, p.Name)
		}
	})
}

// neuronMonitorCommand writes the node's neuron-monitor wrapper: an
// executable that takes the real binary's flags and runs accelsim.
func neuronMonitorCommand(dir string, n *fleet.Node, seed uint64, opts Options, started time.Time) (*endpoints.Command, error) {
	exe := opts.Executable
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return nil, err
		}
	}
	scenarioPath, err := filepath.Abs(opts.ScenarioPath)
	if err != nil {
		return nil, err
	}
	argv := []string{exe, "neuron-monitor", "--scenario", scenarioPath, "--node", n.Name,
		"--seed", strconv.FormatUint(seed, 10), "--speed", strconv.FormatFloat(opts.Speed, 'g', -1, 64),
		"--start", started.Format(time.RFC3339Nano)}
	quoted := make([]string, len(argv))
	for i, a := range argv {
		quoted[i] = shellQuote(a)
	}
	line := strings.Join(quoted, " ")
	path := filepath.Join(dir, n.Name, "neuron-monitor")
	script := "#!/bin/sh\n# neuron-monitor of simulated node " + n.Name + ": takes the real binary's flags (-c FILE).\nexec " + line + " \"$@\"\n"
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		return nil, fmt.Errorf("write neuron-monitor wrapper: %w", err)
	}
	env := []string{
		"ACCELSIM_SCENARIO=" + scenarioPath, "ACCELSIM_NODE=" + n.Name,
		"ACCELSIM_SEED=" + strconv.FormatUint(seed, 10), "ACCELSIM_SPEED=" + strconv.FormatFloat(opts.Speed, 'g', -1, 64),
		"ACCELSIM_START=" + started.Format(time.RFC3339Nano),
	}
	return &endpoints.Command{Path: path, Argv: argv, Env: env, CommandLine: line}, nil
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool { return !shellSafe(r) }) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shellSafe reports whether r needs no quoting in a POSIX shell word.
func shellSafe(r rune) bool {
	return r == '/' || r == '-' || r == '.' || r == '_' || r == ':' || r == '+' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
}

// writeKernelLog starts the node's kernel log writer.
func writeKernelLog(ctx context.Context, wg *sync.WaitGroup, path string, n *fleet.Node, tl sim.Timeline) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	// Created before Start returns, so an agent started next finds it.
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		return fmt.Errorf("kernel log of %s: %w", n.Name, err)
	}
	entries := kernlog.Entries(n)
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = kernlog.Run(ctx, path, n.Name, entries, tl)
	}()
	return nil
}

// Close stops every server and removes the sockets.
func (r *Running) Close(ctx context.Context) error {
	if r.stopKernelLogs != nil {
		r.stopKernelLogs()
	}
	if r.kube != nil {
		r.kube.Close()
	}
	// Servers shut down in parallel, after the connections that never
	// carried a request are closed.
	r.conns.closeFresh()
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for _, hs := range r.https {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := hs.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
				if cerr := hs.Close(); cerr != nil && !errors.Is(err, context.DeadlineExceeded) {
					mu.Lock()
					errs = append(errs, cerr)
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	for _, gs := range r.grpcs {
		done := make(chan struct{})
		go func() { gs.GracefulStop(); close(done) }()
		select {
		case <-done:
		case <-ctx.Done():
			gs.Stop()
		}
	}
	r.wg.Wait()
	for _, s := range r.sockets {
		_ = os.Remove(s)
	}
	return errors.Join(errs...)
}
