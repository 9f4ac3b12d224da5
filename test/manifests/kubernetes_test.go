package manifests

import (
	"path"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

type rendered struct {
	root         string
	daemonSets   []*appsv1.DaemonSet
	deployments  []*appsv1.Deployment
	statefulSets []*appsv1.StatefulSet
	services     []*corev1.Service
	configMaps   map[string]*corev1.ConfigMap
	accounts     []*corev1.ServiceAccount
	clusterRoles []*rbacv1.ClusterRole
	roles        []*rbacv1.Role
	pvcs         map[string]*corev1.PersistentVolumeClaim
	// Each binding as "ClusterRole/<name>" or "Role/<namespace>/<name>" →
	// its subjects ("<namespace>/<service account>").
	bindings map[string][]string
}

func sortObjects(root string, objs []runtime.Object) rendered {
	r := rendered{root: root, configMaps: map[string]*corev1.ConfigMap{}, pvcs: map[string]*corev1.PersistentVolumeClaim{},
		bindings: map[string][]string{}}
	for _, o := range objs {
		switch v := o.(type) {
		case *appsv1.DaemonSet:
			r.daemonSets = append(r.daemonSets, v)
		case *appsv1.Deployment:
			r.deployments = append(r.deployments, v)
		case *appsv1.StatefulSet:
			r.statefulSets = append(r.statefulSets, v)
		case *corev1.Service:
			r.services = append(r.services, v)
		case *corev1.ConfigMap:
			r.configMaps[v.Name] = v
		case *corev1.ServiceAccount:
			r.accounts = append(r.accounts, v)
		case *rbacv1.ClusterRole:
			r.clusterRoles = append(r.clusterRoles, v)
		case *rbacv1.Role:
			r.roles = append(r.roles, v)
		case *corev1.PersistentVolumeClaim:
			r.pvcs[v.Name] = v
		case *rbacv1.ClusterRoleBinding:
			r.bindings["ClusterRole/"+v.RoleRef.Name] = append(r.bindings["ClusterRole/"+v.RoleRef.Name], subjects(v.Subjects)...)
		case *rbacv1.RoleBinding:
			key := "Role/" + v.Namespace + "/" + v.RoleRef.Name
			r.bindings[key] = append(r.bindings[key], subjects(v.Subjects)...)
		}
	}
	return r
}

func renderAll(t *testing.T) []rendered {
	t.Helper()
	var out []rendered
	for _, root := range kustomizations {
		objs, err := render(root)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, sortObjects(root, objs))
	}
	return out
}

// The agent needs exactly these reads; anything more is a privilege a node
// agent on every GPU node should not hold.
var allowedRules = map[string][]string{
	"/pods":                          {"get", "list", "watch"},
	"/nodes":                         {"get", "list", "watch"},
	"resource.k8s.io/resourceclaims": {"get", "list", "watch"},
	"resource.k8s.io/resourceslices": {"get", "list", "watch"},
}

func TestRBACIsLeastPrivilege(t *testing.T) {
	for _, r := range renderAll(t) {
		checkRBAC(t, r)
	}
}

func subjects(ss []rbacv1.Subject) []string {
	out := make([]string, 0, len(ss))
	for _, s := range ss {
		out = append(out, s.Namespace+"/"+s.Name)
	}
	return out
}

// agentAccounts are the service accounts the agent DaemonSets run as.
func agentAccounts(r rendered) map[string]bool {
	out := map[string]bool{}
	for _, d := range r.daemonSets {
		out[d.Namespace+"/"+d.Spec.Template.Spec.ServiceAccountName] = true
	}
	return out
}

// checkRBAC: what the agents' account is granted is exactly allowedRules,
// through ClusterRoles only. Roles bound to another account (the
// remediator's, which the gateway runs as with remediation on) are the
// remediation overlay's, which its own test pins to the code and the drift
// test compares with the chart's.
func checkRBAC(t *testing.T, r rendered) {
	t.Helper()
	agents := agentAccounts(r)
	forAgents := func(binding string) bool {
		for _, s := range r.bindings[binding] {
			if agents[s] {
				return true
			}
		}
		return false
	}
	for _, role := range r.roles {
		if forAgents("Role/" + role.Namespace + "/" + role.Name) {
			t.Errorf("%s: Role %s is bound to the agents' account; they need no namespaced rights", r.root, role.Name)
		}
	}
	granted := map[string]bool{}
	for _, cr := range r.clusterRoles {
		if !forAgents("ClusterRole/" + cr.Name) {
			if len(r.bindings["ClusterRole/"+cr.Name]) == 0 {
				t.Errorf("%s: ClusterRole %s is bound to no account", r.root, cr.Name)
			}
			continue
		}
		for _, rule := range cr.Rules {
			if len(rule.NonResourceURLs) > 0 || len(rule.ResourceNames) > 0 {
				t.Errorf("%s: %s grants non-resource URLs or named resources", r.root, cr.Name)
			}
			for _, g := range rule.APIGroups {
				for _, res := range rule.Resources {
					key := g + "/" + res
					verbs, ok := allowedRules[key]
					if !ok {
						t.Errorf("%s: %s grants access to %s, which the collector does not read", r.root, cr.Name, key)
						continue
					}
					for _, v := range rule.Verbs {
						if !slices.Contains(verbs, v) {
							t.Errorf("%s: %s grants %q on %s; only get, list, watch are needed", r.root, cr.Name, v, key)
						}
						granted[key+":"+v] = true
					}
				}
			}
		}
	}
	for key, verbs := range allowedRules {
		for _, v := range verbs {
			if !granted[key+":"+v] {
				t.Errorf("%s: RBAC does not grant %s on %s, which the attributes processor needs", r.root, v, key)
			}
		}
	}
}

func TestWorkloadsRunTheirConfigsWithTheMountsAndPortsTheyNeed(t *testing.T) {
	for _, r := range renderAll(t) {
		checkWorkloads(t, r, 2)
	}
}

// checkWorkloads: the agent DaemonSets and the gateway run their configs
// with the mounts, ports and probes those configs need.
func checkWorkloads(t *testing.T, r rendered, agents int) {
	t.Helper()
	if len(r.daemonSets) != agents || len(r.deployments)+len(r.statefulSets) != 1 {
		t.Fatalf("%s: want %d agent DaemonSets and one gateway, got %d DaemonSets, %d Deployments, %d StatefulSets",
			r.root, agents, len(r.daemonSets), len(r.deployments), len(r.statefulSets))
	}
	specs := podSpecs(r.daemonSets, r.deployments)
	for _, s := range r.statefulSets {
		specs["StatefulSet/"+s.Name] = s.Spec.Template.Spec
	}
	for name, spec := range specs {
		c, ok := findContainer(spec, "otelcol-accel")
		if !ok {
			t.Errorf("%s %s: no otelcol-accel container", r.root, name)
			continue
		}
		checkCollectorContainer(t, r, name, spec, c)
	}
}

func checkCollectorContainer(t *testing.T, r rendered, name string, spec corev1.PodSpec, c corev1.Container) {
	where := r.root + " " + name
	if c.Image == "" || strings.HasSuffix(c.Image, ":latest") || !strings.Contains(c.Image, ":") {
		t.Errorf("%s: image %q must be pinned to a version", where, c.Image)
	}
	// Nodes run the agent build (builder-config-agent.yaml), gateways the
	// full one: the agent's image has no gateway-only components, whose
	// executable pages would count against the DaemonSet's memory limit.
	wantRepo := "ghcr.io/otelcol-accel/otelcol-accel:"
	if strings.HasPrefix(name, "DaemonSet/") {
		wantRepo = "ghcr.io/otelcol-accel/otelcol-accel-agent:"
	}
	if !strings.HasPrefix(c.Image, wantRepo) {
		t.Errorf("%s: image %q, want %s…", where, c.Image, wantRepo)
	}
	for _, res := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if _, ok := c.Resources.Requests[res]; !ok {
			t.Errorf("%s: no %s request", where, res)
		}
		if _, ok := c.Resources.Limits[res]; !ok {
			t.Errorf("%s: no %s limit", where, res)
		}
	}
	env := containerEnv(c)

	// Every --config file is a key of the ConfigMap mounted at its directory.
	files := configArgs(c)
	if len(files) == 0 {
		t.Errorf("%s: no --config", where)
	}
	var configs []map[string]any
	for _, f := range files {
		m, ok := mountFor(c, path.Dir(f))
		if !ok {
			t.Errorf("%s: %s is not on a mounted volume", where, f)
			continue
		}
		v, _ := volume(spec, m.Name)
		if v.ConfigMap == nil {
			t.Errorf("%s: %s is not mounted from a ConfigMap", where, f)
			continue
		}
		cm, ok := r.configMaps[v.ConfigMap.Name]
		if !ok {
			t.Errorf("%s: ConfigMap %s is not in the kustomization", where, v.ConfigMap.Name)
			continue
		}
		if _, ok := cm.Data[path.Base(f)]; !ok {
			t.Errorf("%s: ConfigMap %s has no key %s", where, cm.Name, path.Base(f))
			continue
		}
		// What the pod runs: the ConfigMap's copy (the chart also
		// generates a file, the console's service.extensions).
		cfg, err := parseConfig(path.Base(f), cm.Data[path.Base(f)])
		if err != nil {
			t.Error(err)
			continue
		}
		configs = append(configs, cfg)
	}

	// Health probes hit the healthcheckv2 endpoint the config opens.
	healthPort := portOf(resolveIn(configs, env, "extensions", "healthcheckv2", "http", "endpoint"))
	checkNamedPort(t, where, c, "health", healthPort)
	for _, p := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe} {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/status" || p.HTTPGet.Port.String() != "health" {
			t.Errorf("%s: liveness and readiness must GET /status on the health port", where)
		}
	}
	if prom := resolveIn(configs, env, "exporters", "prometheus", "endpoint"); prom != "" {
		checkNamedPort(t, where, c, "prometheus", portOf(prom))
	}

	// Directories the config writes to or reads from are mounted.
	if dir, ok := env["OTELCOL_ACCEL_STORAGE_DIR"]; ok {
		if _, ok := mountFor(c, dir); !ok {
			t.Errorf("%s: storage dir %s is not mounted", where, dir)
		}
	}

	if strings.HasPrefix(name, "DaemonSet/") {
		checkAgent(t, where, spec, c, env, configs)
	} else {
		checkGateway(t, r, where, spec, c, env, configs)
	}
}

func checkAgent(t *testing.T, where string, spec corev1.PodSpec, c corev1.Container, env map[string]string, configs []map[string]any) {
	if !spec.HostPID {
		t.Errorf("%s: hostPID is needed to map process ids on shared GPUs to pods", where)
	}
	nodeName := false
	for _, e := range c.Env {
		if e.Name == "K8S_NODE_NAME" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "spec.nodeName" {
			nodeName = true
		}
	}
	if !nodeName {
		t.Errorf("%s: K8S_NODE_NAME must come from the downward API (spec.nodeName)", where)
	}
	socket := resolveIn(configs, env, "processors", "accelerator_attributes", "pod_resources_socket")
	if socket == "" {
		t.Errorf("%s: the agent config sets no pod_resources_socket", where)
	} else if m, ok := mountFor(c, path.Dir(socket)); !ok {
		t.Errorf("%s: kubelet socket %s is not mounted", where, socket)
	} else if v, _ := volume(spec, m.Name); v.HostPath == nil || v.HostPath.Path != "/var/lib/kubelet/pod-resources" {
		t.Errorf("%s: %s must be the host's /var/lib/kubelet/pod-resources", where, m.MountPath)
	}
	if lib := env["OTELCOL_ACCEL_NVML_LIBRARY"]; lib != "" {
		if m, ok := mountFor(c, path.Dir(lib)); !ok {
			t.Errorf("%s: NVML library %s is not mounted", where, lib)
		} else if v, _ := volume(spec, m.Name); v.HostPath == nil {
			t.Errorf("%s: the driver library must come from the host", where)
		}
	}
	if pipe := env["CUDA_MPS_PIPE_DIRECTORY"]; pipe != "" {
		if _, ok := mountFor(c, pipe); !ok {
			t.Errorf("%s: MPS pipe directory %s is not mounted", where, pipe)
		}
	}
	if stream := env["OTELCOL_ACCEL_NEURON_STREAM"]; stream != "" {
		mine, ok := mountFor(c, path.Dir(stream))
		nm, hasMonitor := findContainer(spec, "neuron-monitor")
		theirs, ok2 := mountFor(nm, path.Dir(stream))
		if !ok || !hasMonitor || !ok2 || mine.Name != theirs.Name {
			t.Errorf("%s: neuron-monitor and the collector must share the volume holding %s", where, stream)
		}
	}
}

func checkGateway(t *testing.T, r rendered, where string, spec corev1.PodSpec, c corev1.Container, env map[string]string, configs []map[string]any) {
	dir := env["OTELCOL_ACCEL_STORAGE_DIR"]
	m, ok := mountFor(c, dir)
	if !ok {
		t.Fatalf("%s: queue directory %q is not mounted", where, dir)
	}
	if len(r.statefulSets) == 1 {
		// Autoscaled: every replica claims its own queue volume.
		s := r.statefulSets[0]
		found := false
		for _, tpl := range s.Spec.VolumeClaimTemplates {
			if tpl.Name == m.Name && slices.Contains(tpl.Spec.AccessModes, corev1.ReadWriteOnce) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: the queue directory must be a ReadWriteOnce volume claim template of the StatefulSet, not %s", where, m.Name)
		}
	} else {
		d := r.deployments[0]
		if d.Spec.Replicas == nil || *d.Spec.Replicas != 1 || d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
			t.Errorf("%s: one replica with the Recreate strategy (the queue volume is ReadWriteOnce)", where)
		}
		v, _ := volume(spec, m.Name)
		if v.PersistentVolumeClaim == nil {
			t.Errorf("%s: the queue directory must be a PersistentVolumeClaim, not %s", where, m.Name)
		} else if _, ok := r.pvcs[v.PersistentVolumeClaim.ClaimName]; !ok {
			t.Errorf("%s: PVC %s is not in the kustomization", where, v.PersistentVolumeClaim.ClaimName)
		}
	}
	// The queue on disk: file_storage for sending queues, or the remote-write
	// exporter's write-ahead log.
	got := resolveIn(configs, env, "extensions", "file_storage", "directory")
	if got == "" {
		got = resolveIn(configs, env, "exporters", "prometheus_remote_write", "wal", "directory")
	}
	if got == "" || !strings.HasPrefix(got, dir) {
		t.Errorf("%s: the queue directory %q (file_storage or the remote-write WAL) is not under the mounted queue dir %s", where, got, dir)
	}
	s := stack{cfg: mergeConfigs(configs), env: env}
	for _, p := range queueProblems(s, dir) {
		t.Errorf("%s: %s", where, p)
	}
	checkInsights(t, r, where, c, s)
	// Every service port targets a port the gateway container opens.
	for _, svc := range r.services {
		for _, p := range svc.Spec.Ports {
			found := false
			for _, cp := range c.Ports {
				if cp.Name == p.TargetPort.String() || cp.ContainerPort == p.TargetPort.IntVal {
					found = true
				}
			}
			if !found {
				t.Errorf("%s: Service %s port %s targets %s, which the container does not open", where, svc.Name, p.Name, p.TargetPort.String())
			}
		}
	}
}

func resolveIn(configs []map[string]any, env map[string]string, keys ...string) string {
	val := ""
	for _, cfg := range configs { // later configs override earlier ones
		if v, ok := lookup(cfg, keys...); ok {
			if s, ok := v.(string); ok {
				val = resolve(s, env)
			}
		}
	}
	return val
}

func portOf(endpoint string) string {
	if i := strings.LastIndex(endpoint, ":"); i >= 0 {
		return endpoint[i+1:]
	}
	return ""
}

func checkNamedPort(t *testing.T, where string, c corev1.Container, name, want string) {
	for _, p := range c.Ports {
		if p.Name == name {
			if got := p.ContainerPort; want != "" && strings.TrimSpace(want) != strconv.Itoa(int(got)) {
				t.Errorf("%s: container port %s is %d but the config listens on %s", where, name, got, want)
			}
			return
		}
	}
	t.Errorf("%s: no container port named %s", where, name)
}

// The insights console, where a gateway runs it: in a metrics and a logs
// pipeline fed by the OTLP receiver, its acknowledge/dismiss decisions in a
// storage extension the service starts (queueProblems checks that its
// directory is on the volume), and listening where the container's insights
// port, and any Service targeting that port, reach it.
func checkInsights(t *testing.T, r rendered, where string, c corev1.Container, s stack) {
	t.Helper()
	pipelines := s.pipelineExporters()["accelerator_insights"]
	if len(pipelines) == 0 {
		return
	}
	signals := map[string]bool{}
	for _, p := range pipelines {
		signals[componentType(p)] = true
		if !slices.Contains(s.list("service", "pipelines", p, "receivers"), "otlp") {
			t.Errorf("%s: pipeline %s of the insights console does not read the OTLP receiver", where, p)
		}
	}
	if !signals["metrics"] || !signals["logs"] {
		t.Errorf("%s: the insights console is in %v; it needs a metrics and a logs pipeline", where, pipelines)
	}
	storage := s.str("exporters", "accelerator_insights", "storage")
	if storage == "" || !slices.Contains(s.list("service", "extensions"), storage) {
		t.Errorf("%s: the insights console keeps its decisions in %q, which the service does not start: they would not survive a restart", where, storage)
	}
	endpoint := s.str("exporters", "accelerator_insights", "endpoint")
	checkNamedPort(t, where, c, "insights", portOf(endpoint))
	for _, svc := range r.services {
		for _, p := range svc.Spec.Ports {
			if p.TargetPort.String() == "insights" && isLoopback(endpoint) {
				t.Errorf("%s: Service %s targets the insights port, but the console listens on loopback only (%s)", where, svc.Name, endpoint)
			}
		}
	}
}
