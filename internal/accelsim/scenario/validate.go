package scenario

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/catalog"
)

var (
	dnsLabelRE     = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	dnsSubdomainRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	migRefRE       = regexp.MustCompile(`^(\d+):(\d+)$`)
	replicaRefRE   = regexp.MustCompile(`^(\d+)::(\d+)$`)
	labelNameRE    = regexp.MustCompile(`^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`)
)

// Limits that keep a scenario within what one process serves.
const (
	maxDevicesPerNode = 4096
	maxRepeat         = 20000
	maxNeuronTagLen   = 255
)

type validator struct {
	s     *Scenario
	errs  Errors
	nodes map[string]*nodeInfo // by expanded name
	// held records which pod, container or claim holds a device, so a
	// device given twice is named with both holders.
	held   map[string]string
	claims map[string]*Claim // namespace/name
	usedBy map[*Claim]int
}

// nodeInfo is what device references are checked against.
type nodeInfo struct {
	node  *Node
	path  string
	kind  catalog.Kind
	itype *catalog.InstanceType
	model *catalog.GPUModel
	count int
	mig   map[int][]string // GPU index → layout
}

func (v *validator) errorf(path, format string, args ...any) {
	if len(v.errs) >= maxErrors {
		return
	}
	v.errs = append(v.errs, &Error{File: v.s.File, Line: v.s.pos.line(path), Path: path, Msg: fmt.Sprintf(format, args...)})
}

func (v *validator) has(path string) bool { _, ok := v.s.pos[path]; return ok }

func (v *validator) run() {
	s := v.s
	v.nodes = map[string]*nodeInfo{}
	v.held = map[string]string{}
	v.claims = map[string]*Claim{}
	v.usedBy = map[*Claim]int{}
	if s.Cluster == "" {
		s.Cluster = defaultCluster
	}
	if s.Region == "" {
		s.Region = defaultRegion
	}
	if !v.has("seed") {
		s.Seed = defaultSeed
	}
	if len(s.Nodes) == 0 {
		v.errorf("nodes", "a scenario needs at least one node")
	}
	for i, n := range s.Nodes {
		v.node(n, fmt.Sprintf("nodes[%d]", i))
	}
	for i, c := range s.Claims {
		v.claim(c, fmt.Sprintf("resource_claims[%d]", i))
	}
	seenPods := map[string]string{}
	for i, p := range s.Pods {
		path := fmt.Sprintf("pods[%d]", i)
		v.pod(p, path)
		key := p.Namespace + "/" + p.Name
		if prev, dup := seenPods[key]; dup && p.Name != "" {
			v.errorf(path+".name", "pod %s is already defined at %s", key, prev)
		}
		seenPods[key] = path
	}
	for i, c := range s.Claims {
		if v.usedBy[c] == 0 && c.Name != "" {
			v.errorf(fmt.Sprintf("resource_claims[%d]", i), "resource claim %s/%s is not used by any pod (an allocated claim always has a consumer)", c.Namespace, c.Name)
		}
	}
	for i, n := range s.Nodes {
		if n.AutoPods != nil {
			v.autoPods(n, fmt.Sprintf("nodes[%d].auto_pods", i))
		}
	}
}

// ExpandedNames returns the names of the hosts a node entry stands for.
func (n *Node) ExpandedNames() []string {
	if n.Repeat <= 1 {
		return []string{n.Name}
	}
	out := make([]string, n.Repeat)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%d", n.Name, i)
	}
	return out
}

func (v *validator) node(n *Node, path string) {
	switch {
	case n.Name == "":
		v.errorf(path+".name", "a node needs a name")
	case !dnsSubdomainRE.MatchString(n.Name) || len(n.Name) > 200:
		v.errorf(path+".name", "%q is not a valid node name (lowercase letters, digits, '-' and '.')", n.Name)
	}
	if n.Repeat < 0 || n.Repeat > maxRepeat {
		v.errorf(path+".repeat", "repeat must be 0..%d, got %d", maxRepeat, n.Repeat)
	}
	info := &nodeInfo{node: n, path: path, mig: map[int][]string{}}
	if n.Name != "" {
		for _, name := range n.ExpandedNames() {
			if prev, dup := v.nodes[name]; dup {
				v.errorf(path+".name", "node %q is already defined at %s", name, prev.path)
				continue
			}
			v.nodes[name] = info
		}
	}
	itype, ok := catalog.InstanceTypeByName(n.InstanceType)
	switch {
	case n.InstanceType == "":
		v.errorf(path+".instance_type", "a node needs an instance_type (one of %s)", catalog.OneOf(catalog.InstanceTypeNames()))
		return
	case !ok:
		v.errorf(path+".instance_type", "unknown instance type %q (want one of %s)", n.InstanceType, catalog.OneOf(catalog.InstanceTypeNames()))
		return
	}
	info.itype = itype
	info.kind = itype.Kind
	if n.Zone == "" {
		n.Zone = v.s.Region + "a"
	} else if !strings.HasPrefix(n.Zone, v.s.Region) {
		v.errorf(path+".zone", "zone %q is not in region %s", n.Zone, v.s.Region)
	}
	for k := range n.Labels {
		if !validLabelKey(k) {
			v.errorf(path+".labels."+k, "%q is not a valid Kubernetes label key", k)
		}
	}
	if itype.Kind == catalog.KindNVIDIA {
		v.nvidiaNode(n, info, path)
	} else {
		v.neuronNode(n, info, path)
	}
	v.failures(n, info, path)
}

func (v *validator) nvidiaNode(n *Node, info *nodeInfo, path string) {
	if n.Neuron != nil {
		v.errorf(path+".neuron", "%s is an NVIDIA instance type; `neuron` applies to Neuron nodes", n.InstanceType)
	}
	if n.DriverVersion == "" {
		n.DriverVersion = defaultDriverVersion
	}
	if n.GPUs == nil {
		n.GPUs = &GPUs{}
	}
	g := n.GPUs
	gp := path + ".gpus"
	if g.Model == "" {
		g.Model = info.itype.GPUModel
	}
	model, ok := catalog.GPUModelByKey(g.Model)
	if !ok {
		v.errorf(gp+".model", "unknown model %q (want one of %s)", g.Model, catalog.OneOf(catalog.GPUModelKeys()))
		return
	}
	if g.Model != info.itype.GPUModel {
		v.errorf(gp+".model", "%s has %s GPUs, not %s", n.InstanceType, info.itype.GPUModel, g.Model)
	}
	info.model = model
	if g.Count == 0 {
		g.Count = info.itype.Devices
	}
	if g.Count < 1 || g.Count > maxDevicesPerNode {
		v.errorf(gp+".count", "count must be 1..%d, got %d", maxDevicesPerNode, g.Count)
		return
	}
	info.count = g.Count
	if g.Sharing == "" {
		g.Sharing = SharingNone
	}
	switch g.Sharing {
	case SharingNone:
		if g.Replicas != 0 {
			v.errorf(gp+".replicas", "replicas needs sharing: time-slicing or mps")
		}
		if g.RenameByDefault {
			v.errorf(gp+".rename_by_default", "rename_by_default needs sharing: time-slicing or mps")
		}
	case SharingTimeSlicing, SharingMPS:
		if g.Replicas < 2 || g.Replicas > 64 {
			v.errorf(gp+".replicas", "%s needs replicas 2..64, got %d", g.Sharing, g.Replicas)
		}
		if g.MIG != nil {
			v.errorf(gp+".sharing", "%s of MIG devices is not simulated: share whole GPUs or use MIG", g.Sharing)
		}
		if n.DRA {
			v.errorf(gp+".sharing", "with dra: true GPUs are shared per claim (resource_claims[].sharing), not by the device plugin")
		}
	default:
		v.errorf(gp+".sharing", "unknown sharing %q (want one of none, time-slicing, mps)", g.Sharing)
	}
	if g.MIG != nil {
		v.mig(g.MIG, model, info, gp+".mig")
	}
	if d := n.DCGMExporter; d != nil {
		switch d.HostnameLabel {
		case "":
		case "Hostname", "hostname", "none":
		default:
			v.errorf(path+".dcgm_exporter.hostname_label", "unknown hostname_label %q (want Hostname, hostname or none)", d.HostnameLabel)
		}
	} else {
		n.DCGMExporter = &DCGMExporter{}
	}
	if n.DCGMExporter.HostnameLabel == "" {
		n.DCGMExporter.HostnameLabel = defaultHostnameLabel
	}
}

func (v *validator) mig(m *MIG, model *catalog.GPUModel, info *nodeInfo, path string) {
	if !model.MIGCapable() {
		v.errorf(path, "%s does not support MIG", model.Key)
		return
	}
	if m.Strategy == "" {
		m.Strategy = defaultMIGStrategy
	}
	if m.Strategy != MIGSingle && m.Strategy != MIGMixed {
		v.errorf(path+".strategy", "unknown MIG strategy %q (want single or mixed)", m.Strategy)
	}
	if len(m.Devices) == 0 {
		v.errorf(path+".devices", "list the GPUs in MIG mode and their layout")
	}
	for i, d := range m.Devices {
		dp := fmt.Sprintf("%s.devices[%d]", path, i)
		if len(d.GPUs) == 0 {
			v.errorf(dp+".gpus", "list the GPU indexes this layout applies to")
		}
		if len(d.Layout) == 0 {
			v.errorf(dp+".layout", "a MIG layout needs at least one profile")
			continue
		}
		if _, err := model.PlaceMIG(d.Layout); err != nil {
			v.errorf(dp+".layout", "%v", err)
		}
		for j, g := range d.GPUs {
			gp := fmt.Sprintf("%s.gpus[%d]", dp, j)
			if g < 0 || g >= info.count {
				v.errorf(gp, "GPU %d does not exist (the node has %d: 0..%d)", g, info.count, info.count-1)
				continue
			}
			if _, dup := info.mig[g]; dup {
				v.errorf(gp, "GPU %d already has a MIG layout", g)
				continue
			}
			info.mig[g] = d.Layout
		}
	}
	if m.Strategy == MIGSingle && len(m.Devices) > 0 {
		first := m.Devices[0].Layout
		for _, d := range m.Devices {
			for _, p := range d.Layout {
				if len(first) > 0 && p != first[0] {
					v.errorf(path+".strategy", "strategy single needs every MIG device of the node to have one profile; found %s and %s (use mixed)", first[0], p)
					return
				}
			}
		}
		if len(info.mig) != info.count {
			v.errorf(path+".strategy", "strategy single needs every GPU of the node in MIG mode (%d of %d are)", len(info.mig), info.count)
		}
	}
}

func (v *validator) neuronNode(n *Node, info *nodeInfo, path string) {
	if n.GPUs != nil {
		v.errorf(path+".gpus", "%s is a Neuron instance type; `gpus` applies to NVIDIA nodes", n.InstanceType)
	}
	if n.DRA {
		v.errorf(path+".dra", "dra: true is simulated for NVIDIA GPUs only")
	}
	if n.DCGMExporter != nil {
		v.errorf(path+".dcgm_exporter", "dcgm_exporter applies to NVIDIA nodes")
	}
	if n.DriverVersion != "" {
		v.errorf(path+".driver_version", "driver_version applies to NVIDIA nodes")
	}
	if n.Neuron == nil {
		n.Neuron = &Neuron{}
	}
	nn := n.Neuron
	if nn.Devices == 0 {
		nn.Devices = info.itype.Devices
	}
	if nn.Devices < 1 || nn.Devices > maxDevicesPerNode {
		v.errorf(path+".neuron.devices", "devices must be 1..%d, got %d", maxDevicesPerNode, nn.Devices)
	}
	info.count = nn.Devices
	if nn.Schema == "" {
		nn.Schema = defaultNeuronSchema
	}
	if !contains(NeuronSchemas, nn.Schema) {
		v.errorf(path+".neuron.schema", "unknown schema %q (want one of %s)", nn.Schema, strings.Join(NeuronSchemas, ", "))
	}
}

func (v *validator) failures(n *Node, info *nodeInfo, path string) {
	for i, f := range n.Failures {
		fp := fmt.Sprintf("%s.failures[%d]", path, i)
		if f.At < 0 {
			v.errorf(fp+".at", "at must not be negative")
		}
		if info.kind == catalog.KindNVIDIA {
			switch {
			case f.GPU == nil:
				v.errorf(fp+".gpu", "a GPU failure names the gpu index")
			case *f.GPU < 0 || *f.GPU >= info.count:
				v.errorf(fp+".gpu", "GPU %d does not exist (the node has %d: 0..%d)", *f.GPU, info.count, info.count-1)
			}
			if f.Device != nil {
				v.errorf(fp+".device", "device applies to Neuron nodes; use gpu")
			}
			if f.ECC != "" {
				v.errorf(fp+".ecc", "ecc applies to Neuron nodes; NVIDIA memory errors are xid: 48 or row_remap")
			}
			if f.Count != 0 {
				v.errorf(fp+".count", "count applies to Neuron ECC failures")
			}
			kinds := 0
			for _, set := range []bool{f.XID != 0, f.RowRemap != "", f.Throttle != ""} {
				if set {
					kinds++
				}
			}
			switch {
			case kinds == 0:
				v.errorf(fp, "a GPU failure needs xid (e.g. 79, 48), row_remap (pending or failed) or throttle (thermal or power)")
			case kinds > 1:
				v.errorf(fp, "give one of xid, row_remap and throttle")
			case f.Throttle != "" && f.Throttle != ThrottleThermal && f.Throttle != ThrottlePower:
				v.errorf(fp+".throttle", "unknown throttle %q (want thermal or power)", f.Throttle)
			case f.XID < 0 || f.XID > 999:
				v.errorf(fp+".xid", "xid must be 1..999, got %d", f.XID)
			case f.RowRemap != "" && f.RowRemap != RowRemapPending && f.RowRemap != RowRemapFailed:
				v.errorf(fp+".row_remap", "unknown row_remap %q (want pending or failed)", f.RowRemap)
			}
			continue
		}
		switch {
		case f.Device == nil:
			v.errorf(fp+".device", "a Neuron failure names the device index")
		case *f.Device < 0 || *f.Device >= info.count:
			v.errorf(fp+".device", "Neuron device %d does not exist (the node has %d: 0..%d)", *f.Device, info.count, info.count-1)
		}
		if f.GPU != nil {
			v.errorf(fp+".gpu", "gpu applies to NVIDIA nodes; use device")
		}
		if f.XID != 0 || f.RowRemap != "" || f.Throttle != "" {
			v.errorf(fp, "xid, row_remap and throttle apply to NVIDIA nodes; Neuron failures are ecc events")
		}
		switch f.ECC {
		case ECCMemCorrected, ECCMemUncorrected, ECCSRAMCorrected, ECCSRAMUncorrected:
		case "":
			v.errorf(fp+".ecc", "a Neuron failure needs ecc (mem_uncorrected, sram_uncorrected, mem_corrected or sram_corrected)")
		default:
			v.errorf(fp+".ecc", "unknown ecc %q (want mem_uncorrected, sram_uncorrected, mem_corrected or sram_corrected)", f.ECC)
		}
		if f.Count == 0 {
			f.Count = 1
		}
		if f.Count < 0 {
			v.errorf(fp+".count", "count must be positive")
		}
	}
}

func (v *validator) claim(c *Claim, path string) {
	if !dnsSubdomainRE.MatchString(c.Name) {
		v.errorf(path+".name", "%q is not a valid resource claim name", c.Name)
	}
	if c.Namespace == "" {
		c.Namespace = "default"
	} else if !dnsLabelRE.MatchString(c.Namespace) {
		v.errorf(path+".namespace", "%q is not a valid namespace", c.Namespace)
	}
	key := c.Namespace + "/" + c.Name
	if _, dup := v.claims[key]; dup {
		v.errorf(path+".name", "resource claim %s is defined twice", key)
	}
	v.claims[key] = c
	info, ok := v.nodes[c.Node]
	switch {
	case c.Node == "":
		v.errorf(path+".node", "a resource claim is allocated on a node; name it")
		return
	case !ok:
		v.errorf(path+".node", "unknown node %q", c.Node)
		return
	case info.kind != catalog.KindNVIDIA || !info.node.DRA:
		v.errorf(path+".node", "node %s does not publish GPUs through DRA (set dra: true on it)", c.Node)
		return
	}
	switch c.Sharing {
	case "", SharingTimeSlicing, SharingMPS:
	default:
		v.errorf(path+".sharing", "unknown sharing %q (want time-slicing or mps, or leave it out)", c.Sharing)
	}
	if len(c.GPUs)+len(c.MIG) == 0 {
		v.errorf(path, "a resource claim needs at least one device (gpus or mig)")
	}
	holder := "resource claim " + key
	for i, g := range c.GPUs {
		v.wholeGPU(info, c.Node, g, fmt.Sprintf("%s.gpus[%d]", path, i), holder, true)
	}
	for i, ref := range c.MIG {
		v.migRef(info, c.Node, ref, fmt.Sprintf("%s.mig[%d]", path, i), holder)
	}
}

func (v *validator) pod(p *Pod, path string) {
	if !dnsSubdomainRE.MatchString(p.Name) || len(p.Name) > 253 {
		v.errorf(path+".name", "%q is not a valid pod name", p.Name)
	}
	if p.Namespace == "" {
		p.Namespace = "default"
	} else if !dnsLabelRE.MatchString(p.Namespace) {
		v.errorf(path+".namespace", "%q is not a valid namespace", p.Namespace)
	}
	for k := range p.Labels {
		if !validLabelKey(k) {
			v.errorf(path+".labels."+k, "%q is not a valid Kubernetes label key", k)
		}
	}
	if o := p.Owner; o != nil {
		if !contains(OwnerKinds, o.Kind) {
			v.errorf(path+".owner.kind", "unknown owner kind %q (want one of %s)", o.Kind, strings.Join(OwnerKinds, ", "))
		}
		if !dnsSubdomainRE.MatchString(o.Name) {
			v.errorf(path+".owner.name", "%q is not a valid %s name", o.Name, o.Kind)
		}
	}
	info, ok := v.nodes[p.Node]
	switch {
	case p.Node == "":
		v.errorf(path+".node", "a pod runs on a node; name it")
	case !ok:
		v.errorf(path+".node", "unknown node %q", p.Node)
	}
	if len(p.Containers) == 0 {
		v.errorf(path+".containers", "a pod needs at least one container")
	}
	devices := 0
	names := map[string]bool{}
	for i, c := range p.Containers {
		cp := fmt.Sprintf("%s.containers[%d]", path, i)
		if !dnsLabelRE.MatchString(c.Name) {
			v.errorf(cp+".name", "%q is not a valid container name", c.Name)
		}
		if names[c.Name] {
			v.errorf(cp+".name", "container %q is defined twice", c.Name)
		}
		names[c.Name] = true
		devices += len(c.GPUs) + len(c.MIG) + len(c.Replicas) + len(c.NeuronCores) + len(c.NeuronDevices) + len(c.Claims)
		if info != nil {
			v.container(p, c, info, cp)
		}
	}
	v.workload(p.Workload, path+".workload", devices > 0)
	if inf := p.Inference; inf != nil {
		ip := path + ".inference"
		if inf.Server != ServerVLLM && inf.Server != ServerSGLang {
			v.errorf(ip+".server", "unknown inference server %q (want vllm or sglang)", inf.Server)
		}
		if inf.Model == "" {
			inf.Model = defaultInferenceModelName
		}
		if inf.Container == "" && len(p.Containers) > 0 {
			inf.Container = p.Containers[0].Name
		} else if !names[inf.Container] {
			v.errorf(ip+".container", "pod has no container %q", inf.Container)
		}
		if p.Workload != nil && !IsInference(p.Workload.Profile) && p.Workload.Profile != ProfileIdle {
			v.errorf(ip, "an inference server needs an inference workload profile (inference-steady, inference-bursty, inference-overprovisioned) or idle, not %s", p.Workload.Profile)
		}
		if devices == 0 {
			v.errorf(ip, "an inference server runs on accelerators; give the pod devices")
		}
	}
	if p.NeuronProcessTag != "" {
		if len(p.NeuronProcessTag) > maxNeuronTagLen {
			v.errorf(path+".neuron_process_tag", "NEURON_PROCESS_TAG is at most %d characters", maxNeuronTagLen)
		}
		if info != nil && info.kind != catalog.KindNeuron {
			v.errorf(path+".neuron_process_tag", "neuron_process_tag applies to pods on Neuron nodes")
		}
	}
}

func (v *validator) workload(w *Workload, path string, hasDevices bool) {
	if w == nil {
		if hasDevices {
			v.errorf(path, "a pod that holds devices needs a workload (profile: one of %s)", strings.Join(Profiles, ", "))
		}
		return
	}
	if !contains(Profiles, w.Profile) {
		v.errorf(path+".profile", "unknown profile %q (want one of %s)", w.Profile, strings.Join(Profiles, ", "))
		return
	}
	only := func(field, profile string, set bool) {
		applies := w.Profile == profile || profile == "training" && IsTraining(w.Profile)
		if set && !applies {
			v.errorf(path+"."+field, "%s applies to the %s profile, not %s", field, profile, w.Profile)
		}
	}
	only("intensity", "training", w.Intensity != 0)
	only("degrade_after", ProfileTrainingDegrading, w.DegradeAfter != 0)
	only("degrade_to", ProfileTrainingDegrading, w.DegradeTo != 0)
	only("burst_period", ProfileInferenceBursty, w.BurstPeriod != 0)
	only("burst_duration", ProfileInferenceBursty, w.BurstDuration != 0)
	if w.LongPromptsAfter != 0 && !IsInference(w.Profile) {
		v.errorf(path+".long_prompts_after", "long_prompts_after applies to inference profiles, not %s", w.Profile)
	}
	only("start_after", "training", w.StartAfter != 0)
	if w.LongPromptsAfter < 0 || w.StartAfter < 0 {
		v.errorf(path, "long_prompts_after and start_after must not be negative")
	}
	if w.Intensity < 0 || w.Intensity > 1 {
		v.errorf(path+".intensity", "intensity must be in (0, 1], got %g", w.Intensity)
	}
	if w.MemoryFraction < 0 || w.MemoryFraction > 1 {
		v.errorf(path+".memory_fraction", "memory_fraction must be in (0, 1], got %g", w.MemoryFraction)
	}
	if w.DegradeTo < 0 || w.DegradeTo >= 1 {
		v.errorf(path+".degrade_to", "degrade_to is a fraction of the baseline in (0, 1), got %g", w.DegradeTo)
	}
	if w.DegradeAfter < 0 {
		v.errorf(path+".degrade_after", "degrade_after must not be negative")
	}
	if w.Profile == ProfileTrainingDegrading {
		if w.DegradeAfter == 0 {
			w.DegradeAfter = defaultDegradeAfter
		}
		if w.DegradeTo == 0 {
			w.DegradeTo = defaultDegradeTo
		}
	}
	if w.Profile == ProfileInferenceBursty {
		if w.BurstPeriod == 0 {
			w.BurstPeriod = defaultBurstPeriod
		}
		if w.BurstDuration == 0 {
			w.BurstDuration = defaultBurstDuration
		}
		if w.BurstPeriod < 0 || w.BurstDuration <= 0 || w.BurstDuration >= w.BurstPeriod {
			v.errorf(path+".burst_duration", "burst_duration must be positive and shorter than burst_period")
		}
	}
}

func (v *validator) container(p *Pod, c *Container, info *nodeInfo, path string) {
	holder := fmt.Sprintf("pod %s/%s container %s", p.Namespace, p.Name, c.Name)
	nvidiaOnly := func(field string, n int) bool {
		if n > 0 && info.kind != catalog.KindNVIDIA {
			v.errorf(path+"."+field, "node %s has Neuron devices, not NVIDIA GPUs", p.Node)
			return false
		}
		return n > 0
	}
	if nvidiaOnly("gpus", len(c.GPUs)) {
		for i, g := range c.GPUs {
			v.wholeGPU(info, p.Node, g, fmt.Sprintf("%s.gpus[%d]", path, i), holder, false)
		}
	}
	if nvidiaOnly("mig", len(c.MIG)) {
		if info.node.DRA {
			v.errorf(path+".mig", "node %s publishes GPUs through DRA; request MIG devices with a resource claim", p.Node)
		} else {
			for i, ref := range c.MIG {
				v.migRef(info, p.Node, ref, fmt.Sprintf("%s.mig[%d]", path, i), holder)
			}
		}
	}
	if nvidiaOnly("replicas", len(c.Replicas)) {
		v.replicas(info, p.Node, c.Replicas, path+".replicas", holder)
	}
	if len(c.NeuronCores)+len(c.NeuronDevices) > 0 && info.kind != catalog.KindNeuron {
		v.errorf(path, "node %s has NVIDIA GPUs; neuron_cores and neuron_devices apply to Neuron nodes", p.Node)
	} else if info.kind == catalog.KindNeuron {
		cores := info.count * info.itype.Neuron.CoresPerDevice
		for i, core := range c.NeuronCores {
			cp := fmt.Sprintf("%s.neuron_cores[%d]", path, i)
			if core < 0 || core >= cores {
				v.errorf(cp, "NeuronCore %d does not exist (the node has %d: 0..%d)", core, cores, cores-1)
				continue
			}
			v.hold(fmt.Sprintf("%s/nc%d", p.Node, core), cp, fmt.Sprintf("NeuronCore %d", core), holder)
			v.hold(fmt.Sprintf("%s/nd%d/part", p.Node, core/info.itype.Neuron.CoresPerDevice), "", "", holder)
		}
		for i, d := range c.NeuronDevices {
			dp := fmt.Sprintf("%s.neuron_devices[%d]", path, i)
			if d < 0 || d >= info.count {
				v.errorf(dp, "Neuron device %d does not exist (the node has %d: 0..%d)", d, info.count, info.count-1)
				continue
			}
			v.hold(fmt.Sprintf("%s/nd%d", p.Node, d), dp, fmt.Sprintf("Neuron device %d", d), holder)
			if prev, ok := v.held[fmt.Sprintf("%s/nd%d/part", p.Node, d)]; ok {
				v.errorf(dp, "Neuron device %d has cores held by %s; a device is held whole or by cores", d, prev)
			}
			for k := 0; k < info.itype.Neuron.CoresPerDevice; k++ {
				v.held[fmt.Sprintf("%s/nc%d", p.Node, d*info.itype.Neuron.CoresPerDevice+k)] = holder
			}
		}
	}
	for i, name := range c.Claims {
		cp := fmt.Sprintf("%s.claims[%d]", path, i)
		cl, ok := v.claims[p.Namespace+"/"+name]
		if !ok {
			v.errorf(cp, "no resource claim %q in namespace %s (define it under resource_claims)", name, p.Namespace)
			continue
		}
		if cl.Node != p.Node {
			v.errorf(cp, "resource claim %s/%s is allocated on node %s, the pod runs on %s", cl.Namespace, cl.Name, cl.Node, p.Node)
		}
		v.usedBy[cl]++
	}
}

// wholeGPU checks a whole-GPU reference by a pod (device plugin) or a claim.
func (v *validator) wholeGPU(info *nodeInfo, node string, g int, path, holder string, viaClaim bool) {
	if g < 0 || g >= info.count {
		v.errorf(path, "GPU %d does not exist (the node has %d: 0..%d)", g, info.count, info.count-1)
		return
	}
	if !viaClaim {
		if info.node.DRA {
			v.errorf(path, "node %s publishes GPUs through DRA; request them with a resource claim", node)
			return
		}
		if s := info.node.GPUs.Sharing; s != SharingNone {
			v.errorf(path, "node %s shares GPUs by %s: request replicas (\"%d::0\"), not whole GPUs", node, s, g)
			return
		}
	}
	if _, ok := info.mig[g]; ok {
		v.errorf(path, "GPU %d is in MIG mode: request its MIG devices (\"%d:0\" …)", g, g)
		return
	}
	v.hold(fmt.Sprintf("%s/gpu%d", node, g), path, fmt.Sprintf("GPU %d", g), holder)
}

func (v *validator) migRef(info *nodeInfo, node, ref, path, holder string) {
	m := migRefRE.FindStringSubmatch(ref)
	if m == nil {
		v.errorf(path, "%q is not a MIG device reference (want \"<gpu>:<slot>\", e.g. \"0:2\")", ref)
		return
	}
	g, _ := strconv.Atoi(m[1])
	slot, _ := strconv.Atoi(m[2])
	layout, ok := info.mig[g]
	if !ok {
		v.errorf(path, "GPU %d of node %s is not in MIG mode", g, node)
		return
	}
	if slot >= len(layout) {
		v.errorf(path, "GPU %d has %d MIG devices (slots 0..%d), not slot %d", g, len(layout), len(layout)-1, slot)
		return
	}
	v.hold(fmt.Sprintf("%s/gpu%d/mig%d", node, g, slot), path, fmt.Sprintf("MIG device %s (%s)", ref, layout[slot]), holder)
}

func (v *validator) replicas(info *nodeInfo, node string, refs []string, path, holder string) {
	g := info.node.GPUs
	if g.Sharing == SharingNone {
		v.errorf(path, "node %s does not share GPUs (set gpus.sharing and gpus.replicas)", node)
		return
	}
	for i, ref := range refs {
		rp := fmt.Sprintf("%s[%d]", path, i)
		m := replicaRefRE.FindStringSubmatch(ref)
		if m == nil {
			v.errorf(rp, "%q is not a replica reference (want \"<gpu>::<replica>\", e.g. \"1::0\")", ref)
			continue
		}
		gi, _ := strconv.Atoi(m[1])
		r, _ := strconv.Atoi(m[2])
		if gi >= info.count {
			v.errorf(rp, "GPU %d does not exist (the node has %d: 0..%d)", gi, info.count, info.count-1)
			continue
		}
		if r >= g.Replicas {
			v.errorf(rp, "GPU %d has %d replicas (0..%d), not %d", gi, g.Replicas, g.Replicas-1, r)
			continue
		}
		v.hold(fmt.Sprintf("%s/gpu%d::%d", node, gi, r), rp, "replica "+ref, holder)
	}
}

func (v *validator) hold(key, path, what, holder string) {
	if prev, ok := v.held[key]; ok && prev != holder && path != "" {
		v.errorf(path, "%s is already held by %s", what, prev)
		return
	}
	v.held[key] = holder
}

func (v *validator) autoPods(n *Node, path string) {
	a := n.AutoPods
	info := v.nodes[n.ExpandedNames()[0]]
	if info == nil || info.itype == nil {
		return
	}
	if info.kind == catalog.KindNVIDIA && (n.DRA || (n.GPUs != nil && n.GPUs.Sharing != SharingNone)) {
		v.errorf(path, "auto_pods fills whole GPUs of device-plugin nodes without sharing")
	}
	if a.Namespace == "" {
		a.Namespace = defaultAutoPodsNamespace
	} else if !dnsLabelRE.MatchString(a.Namespace) {
		v.errorf(path+".namespace", "%q is not a valid namespace", a.Namespace)
	}
	if a.DevicesPerPod == 0 {
		a.DevicesPerPod = 1
	}
	if a.DevicesPerPod < 1 {
		v.errorf(path+".devices_per_pod", "devices_per_pod must be positive")
	}
	if a.Workload == nil {
		a.Workload = &Workload{Profile: ProfileTrainingSteady}
	}
	v.workload(a.Workload, path+".workload", true)
}

// validLabelKey accepts "[prefix/]name" as Kubernetes does (loosely).
func validLabelKey(k string) bool {
	prefix, name, found := strings.Cut(k, "/")
	if !found {
		name, prefix = prefix, ""
	}
	if prefix != "" && !dnsSubdomainRE.MatchString(prefix) {
		return false
	}
	return len(name) > 0 && len(name) <= 63 && labelNameRE.MatchString(name)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
