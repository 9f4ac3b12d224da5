package acceleratorgpuresetreceiver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/receiver"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/componenthealth"
	"github.com/otelcol-accel/otelcol-accel/internal/k8sclient"
	"github.com/otelcol-accel/otelcol-accel/internal/podresources"
)

// outputTail bounds what of the command's output a report carries.
const outputTail = 2048

// uuidPattern is what a GPU UUID (or a MIG device's) looks like; anything
// else in the annotation is refused before it reaches the command.
var uuidPattern = regexp.MustCompile(`^(GPU|MIG)-[0-9A-Za-z-]{1,64}$`)

type resetReceiver struct {
	cfg      *Config
	set      receiver.Settings
	next     consumer.Logs
	rlog     *componenthealth.Logger
	problems *componenthealth.Problems

	// kube reads the node; built from cfg at Start unless a test set it.
	kube *k8sclient.RESTClient
	pods *podresources.Client

	// handled are the request values acted on (reset run, or refused):
	// each is acted on once. waiting is the last "waiting" report per
	// request, so that one is sent only when what holds the GPU changes.
	mu      sync.Mutex
	handled map[string]bool
	waiting map[string]string

	cancel context.CancelFunc
	done   sync.WaitGroup
}

func newReceiver(cfg *Config, set receiver.Settings, next consumer.Logs) *resetReceiver {
	return &resetReceiver{
		cfg: cfg, set: set, next: next,
		rlog:     componenthealth.NewLogger(set.Logger, time.Minute),
		problems: componenthealth.NewProblems(),
		handled:  map[string]bool{}, waiting: map[string]string{},
	}
}

func (r *resetReceiver) Start(_ context.Context, host component.Host) error {
	r.problems.Start(host)
	if r.kube == nil {
		rc, err := r.cfg.RestConfig()
		if err != nil {
			return fmt.Errorf("accelerator_gpu_reset: kubernetes: %w", err)
		}
		rc.UserAgent = "otelcol-accel-gpu-reset"
		if r.kube, err = k8sclient.NewClientForConfig(rc); err != nil {
			return fmt.Errorf("accelerator_gpu_reset: kubernetes: %w", err)
		}
	}
	pods, err := podresources.New(r.cfg.PodResourcesSocket)
	if err != nil {
		return fmt.Errorf("accelerator_gpu_reset: kubelet PodResources %s: %w", r.cfg.PodResourcesSocket, err)
	}
	r.pods = pods
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	r.done.Add(1)
	go func() {
		defer r.done.Done()
		t := time.NewTicker(r.cfg.PollInterval)
		defer t.Stop()
		for {
			r.poll(ctx)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return nil
}

func (r *resetReceiver) Shutdown(context.Context) error {
	if r.cancel != nil {
		r.cancel()
		r.done.Wait()
	}
	r.problems.Shutdown()
	if r.pods != nil {
		return r.pods.Close()
	}
	return nil
}

func (r *resetReceiver) key() string { return accelschema.GPUResetAnnotation(r.cfg.AnnotationPrefix) }

// poll reads the node's request and acts on it once nothing holds the GPU.
func (r *resetReceiver) poll(ctx context.Context) {
	node := &corev1.Node{}
	if err := r.kube.Get(ctx, k8sclient.Nodes.GroupVersionResource(), "", r.cfg.NodeName, node); err != nil {
		if ctx.Err() == nil {
			r.problems.Fail("node", err)
			r.rlog.Error("node", "accelerator_gpu_reset: own node not readable; no reset request is seen until it is", zap.String("node", r.cfg.NodeName), zap.Error(err))
		}
		return
	}
	r.problems.Clear("node")
	req := strings.TrimSpace(node.Annotations[r.key()])
	r.mu.Lock()
	seen := req == "" || r.handled[req]
	r.mu.Unlock()
	if seen {
		return
	}
	uuid, planID, ok := strings.Cut(req, "@")
	if !ok || !uuidPattern.MatchString(uuid) || planID == "" {
		r.finish(ctx, req, uuid, planID, accelschema.RemediationOutcomeFailed,
			fmt.Sprintf("request %s=%q is not <GPU uuid>@<plan id>: not run", r.key(), req))
		return
	}
	holders, err := r.holders(ctx, uuid)
	if err != nil {
		r.wait(ctx, req, uuid, planID, "the GPU's holders are unknown (kubelet PodResources: "+err.Error()+"): the reset waits")
		return
	}
	if len(holders) > 0 {
		r.wait(ctx, req, uuid, planID, "the GPU is held by "+strings.Join(holders, ", ")+": the reset waits until they are gone")
		return
	}
	out, err := r.run(ctx, uuid, planID)
	if err != nil {
		r.finish(ctx, req, uuid, planID, accelschema.RemediationOutcomeFailed, fmt.Sprintf("%s: %v: %s", strings.Join(r.argv(uuid, planID), " "), err, out))
		return
	}
	r.finish(ctx, req, uuid, planID, accelschema.RemediationOutcomeSucceeded, fmt.Sprintf("%s: %s", strings.Join(r.argv(uuid, planID), " "), out))
}

// holders are the pods whose containers the kubelet assigned the GPU to.
func (r *resetReceiver) holders(ctx context.Context, uuid string) ([]string, error) {
	pods, err := r.pods.List(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range pods {
		for _, c := range p.Containers {
			if slices.ContainsFunc(c.Devices, func(d podresources.Devices) bool { return slices.Contains(d.IDs, uuid) }) {
				out = append(out, p.Namespace+"/"+p.Name)
				break
			}
			// A DRA claim names its device by driver, pool and device
			// name, not by UUID: a pod with any claimed device may hold
			// this GPU, so it counts (the reset waits rather than guess).
			if slices.ContainsFunc(c.Claims, func(cl podresources.Claim) bool { return len(cl.Devices) > 0 }) {
				out = append(out, p.Namespace+"/"+p.Name+" (a DRA claim, which may be this GPU)")
				break
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

func (r *resetReceiver) argv(uuid, planID string) []string {
	out := make([]string, len(r.cfg.Command))
	for i, a := range r.cfg.Command {
		out[i] = strings.NewReplacer("{uuid}", uuid, "{plan}", planID).Replace(a)
	}
	return out
}

// run runs the reset command (no shell) and returns the tail of its
// output.
func (r *resetReceiver) run(ctx context.Context, uuid, planID string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.CommandTimeout)
	defer cancel()
	argv := r.argv(uuid, planID)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("timed out after %s", r.cfg.CommandTimeout)
	}
	out := strings.TrimSpace(buf.String())
	if len(out) > outputTail {
		out = "…" + out[len(out)-outputTail:]
	}
	return out, err
}

func (r *resetReceiver) wait(ctx context.Context, req, uuid, planID, why string) {
	r.mu.Lock()
	same := r.waiting[req] == why
	r.waiting[req] = why
	r.mu.Unlock()
	if !same {
		r.report(ctx, uuid, planID, accelschema.RemediationOutcomeWaiting, why)
	}
}

func (r *resetReceiver) finish(ctx context.Context, req, uuid, planID, outcome, detail string) {
	r.mu.Lock()
	r.handled[req] = true
	delete(r.waiting, req)
	r.mu.Unlock()
	lvl := r.set.Logger.Info
	if outcome != accelschema.RemediationOutcomeSucceeded {
		lvl = r.set.Logger.Warn
	}
	lvl("accelerator_gpu_reset: "+outcome, zap.String("node", r.cfg.NodeName), zap.String("device", uuid), zap.String("plan", planID), zap.String("detail", detail))
	r.report(ctx, uuid, planID, outcome, detail)
}

// report sends the outcome down the pipeline to the gateway's remediator.
func (r *resetReceiver) report(ctx context.Context, uuid, planID, outcome, detail string) {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	res := rl.Resource().Attributes()
	res.PutStr(accelschema.AttrK8sNodeName, r.cfg.NodeName)
	res.PutStr(accelschema.AttrHWID, uuid)
	lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	now := pcommon.NewTimestampFromTime(time.Now())
	lr.SetTimestamp(now)
	lr.SetObservedTimestamp(now)
	lr.SetSeverityNumber(plog.SeverityNumberInfo)
	if outcome == accelschema.RemediationOutcomeFailed {
		lr.SetSeverityNumber(plog.SeverityNumberError)
	}
	a := lr.Attributes()
	a.PutStr(accelschema.AttrEventName, accelschema.EventGPUReset)
	a.PutStr(accelschema.AttrRemediationPlanID, planID)
	a.PutStr(accelschema.AttrRemediationOutcome, outcome)
	lr.Body().SetStr(detail)
	if err := r.next.ConsumeLogs(ctx, ld); err != nil {
		r.rlog.Error("report", "accelerator_gpu_reset: report not passed on", zap.String("plan", planID), zap.Error(err))
	}
}
