package fleet

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/catalog"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/detrand"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/scenario"
	"github.com/otelcol-accel/otelcol-accel/internal/mig"
)

// Epoch is when every simulated pod and node was created: a fixed instant,
// so object timestamps do not depend on when the simulator started.
var Epoch = time.Date(2026, time.January, 5, 8, 0, 0, 0, time.UTC)

// pciBuses8 are the PCI buses of the GPUs of an 8-GPU SXM server (p5).
var pciBuses8 = []int{0x53, 0x64, 0x75, 0x86, 0x97, 0xa8, 0xb9, 0xca}

// Build makes the fleet of a validated scenario with the given seed.
func Build(s *scenario.Scenario, seed uint64) (*Fleet, error) {
	f := &Fleet{Cluster: s.Cluster, Region: s.Region, Seed: seed, byName: map[string]*Node{}}
	for _, sn := range s.Nodes {
		for _, name := range sn.ExpandedNames() {
			n, err := f.buildNode(sn, name)
			if err != nil {
				return nil, err
			}
			f.Nodes = append(f.Nodes, n)
			f.byName[name] = n
		}
	}
	claims := map[string]*Claim{}
	for _, sc := range s.Claims {
		c, err := f.buildClaim(sc)
		if err != nil {
			return nil, err
		}
		claims[c.Namespace+"/"+c.Name] = c
		f.Claims = append(f.Claims, c)
	}
	for _, sp := range s.Pods {
		if _, err := f.addPod(sp, claims); err != nil {
			return nil, err
		}
	}
	for _, sn := range s.Nodes {
		if sn.AutoPods == nil {
			continue
		}
		for _, name := range sn.ExpandedNames() {
			if err := f.autoPods(f.byName[name], sn.AutoPods, claims); err != nil {
				return nil, err
			}
		}
	}
	return f, nil
}

func (f *Fleet) buildNode(sn *scenario.Node, name string) (*Node, error) {
	it, ok := catalog.InstanceTypeByName(sn.InstanceType)
	if !ok {
		return nil, fmt.Errorf("node %s: unknown instance type %q", name, sn.InstanceType)
	}
	seed := f.Seed
	h := detrand.Hash(seed, "node", name)
	n := &Node{
		Name:         name,
		Kind:         it.Kind,
		InstanceType: it.Name,
		Region:       f.Region,
		Zone:         sn.Zone,
		ZoneID:       zoneID(f.Region, sn.Zone),
		InstanceID:   "i-0" + detrand.Hex(16, seed, "instance", name),
		InternalIP:   fmt.Sprintf("10.%d.%d.%d", 16+h%16, (h>>8)%256, 1+(h>>16)%254),
		AMIID:        "ami-0" + detrand.Hex(16, seed, "ami", f.Region),
		SubnetID:     "subnet-0" + detrand.Hex(16, seed, "subnet", sn.Zone),
		VCPUs:        it.VCPUs,
		MemoryGiB:    it.MemoryGiB,
		Labels:       sn.Labels,
	}
	if it.Kind == catalog.KindNeuron {
		n.Shape = it.Neuron
		n.NeuronSchema = sn.Neuron.Schema
		n.RuntimeVCPUError = sn.Neuron.RuntimeVCPUError
		for i := 0; i < sn.Neuron.Devices; i++ {
			n.NeuronDevices = append(n.NeuronDevices, &NeuronDevice{Node: n, Index: i})
		}
		for _, sf := range sn.Failures {
			d := n.NeuronDevices[*sf.Device]
			d.Failures = append(d.Failures, Failure{At: sf.At, ECC: sf.ECC, Count: sf.Count})
		}
		for _, d := range n.NeuronDevices {
			sortFailures(d.Failures)
		}
		return n, nil
	}
	model, ok := catalog.GPUModelByKey(sn.GPUs.Model)
	if !ok {
		return nil, fmt.Errorf("node %s: unknown GPU model %q", name, sn.GPUs.Model)
	}
	n.Model = model
	n.DriverVersion = sn.DriverVersion
	n.CUDAVersion = cudaVersion(sn.DriverVersion)
	n.Sharing = sn.GPUs.Sharing
	n.Replicas = sn.GPUs.Replicas
	n.RenameByDefault = sn.GPUs.RenameByDefault
	n.DRA = sn.DRA
	n.DCGM = *sn.DCGMExporter
	count := sn.GPUs.Count
	for i := 0; i < count; i++ {
		g := &GPU{Node: n, Index: i, Minor: i, NUMA: i * 2 / count}
		g.UUID = "GPU-" + detrand.UUID(seed, "gpu", name, i)
		switch count {
		case 8:
			g.PCIBusID = fmt.Sprintf("00000000:%02X:00.0", pciBuses8[i])
		default:
			g.PCIBusID = fmt.Sprintf("%08X:%02X:00.0", i/200, 0x10+i%200)
		}
		n.GPUs = append(n.GPUs, g)
	}
	if m := sn.GPUs.MIG; m != nil {
		n.MIGStrategy = m.Strategy
		for _, md := range m.Devices {
			placements, err := model.PlaceMIG(md.Layout)
			if err != nil {
				return nil, fmt.Errorf("node %s: %w", name, err)
			}
			for _, gi := range md.GPUs {
				g := n.GPUs[gi]
				g.MIG = []*MIGInstance{}
				var layout []mig.Profile
				for slot, p := range placements {
					mp, err := mig.ParseProfile(p.Profile.Name)
					if err != nil {
						return nil, fmt.Errorf("node %s: %w", name, err)
					}
					g.MIG = append(g.MIG, &MIGInstance{
						GPU: g, Slot: slot, Profile: p.Profile, Start: p.Start, GIID: p.GIID,
						UUID: "MIG-" + detrand.UUID(seed, "mig", g.UUID, p.GIID),
					})
					layout = append(layout, mp)
				}
				// The shares the collector should find: fitted to the GPU.
				for i, share := range mig.Shares(layout, float64(model.MemoryMiB)/1024) {
					g.MIG[i].Share = share
				}
			}
		}
	}
	for _, sf := range sn.Failures {
		g := n.GPUs[*sf.GPU]
		g.Failures = append(g.Failures, Failure{At: sf.At, XID: sf.XID, RowRemap: sf.RowRemap, Throttle: sf.Throttle})
	}
	for _, g := range n.GPUs {
		sortFailures(g.Failures)
	}
	return n, nil
}

func sortFailures(fs []Failure) {
	sort.SliceStable(fs, func(i, j int) bool { return fs[i].At < fs[j].At })
}

func (f *Fleet) buildClaim(sc *scenario.Claim) (*Claim, error) {
	n, ok := f.byName[sc.Node]
	if !ok {
		return nil, fmt.Errorf("resource claim %s/%s: unknown node %q", sc.Namespace, sc.Name, sc.Node)
	}
	c := &Claim{Name: sc.Name, Namespace: sc.Namespace, Node: n, Sharing: sc.Sharing,
		UID: detrand.UUID(f.Seed, "claim", sc.Namespace, sc.Name)}
	for _, gi := range sc.GPUs {
		c.GPUs = append(c.GPUs, n.GPUs[gi])
	}
	for _, ref := range sc.MIG {
		m, err := migByRef(n, ref)
		if err != nil {
			return nil, err
		}
		c.MIG = append(c.MIG, m)
	}
	return c, nil
}

func (f *Fleet) addPod(sp *scenario.Pod, claims map[string]*Claim) (*Pod, error) {
	n, ok := f.byName[sp.Node]
	if !ok {
		return nil, fmt.Errorf("pod %s/%s: unknown node %q", sp.Namespace, sp.Name, sp.Node)
	}
	seed := f.Seed
	h := detrand.Hash(seed, "pod", sp.Namespace, sp.Name)
	p := &Pod{
		Name: sp.Name, Namespace: sp.Namespace, Node: n, Team: sp.Team,
		UID:         detrand.UUID(seed, "pod", sp.Namespace, sp.Name),
		Labels:      map[string]string{},
		Annotations: map[string]string{},
		PID:         1000 + int(h%60000),
		IP:          fmt.Sprintf("192.168.%d.%d", (h>>20)%256, 2+(h>>28)%250),
		Created:     Epoch.Add(time.Duration(h%3600) * time.Second),
		NeuronTag:   sp.NeuronProcessTag,
	}
	if sp.Workload != nil {
		p.Workload = *sp.Workload
	}
	p.Owners = ownerChain(seed, sp)
	if p.Team != "" {
		p.Labels[LabelTeam] = p.Team
	}
	p.Labels[LabelWorkload] = workloadName(sp)
	if t := WorkloadType(p.Workload.Profile); t != "" {
		p.Labels[LabelWorkloadType] = t
	}
	for _, o := range p.Owners {
		for k, v := range o.PodLabels {
			p.Labels[k] = v
		}
	}
	// The scenario's own labels win over the defaults above.
	for k, v := range sp.Labels {
		p.Labels[k] = v
	}
	for k, v := range sp.Annotations {
		p.Annotations[k] = v
	}
	for _, sc := range sp.Containers {
		c := &Container{Name: sc.Name, Pod: p}
		if err := f.assign(n, p, c, sc, claims); err != nil {
			return nil, err
		}
		p.Containers = append(p.Containers, c)
	}
	if si := sp.Inference; si != nil {
		p.Inference = &Inference{Server: si.Server, Model: si.Model, Container: si.Container, Pod: p}
	}
	f.Pods = append(f.Pods, p)
	n.Pods = append(n.Pods, p)
	return p, nil
}

// assign gives a container its devices and records it as their holder.
func (f *Fleet) assign(n *Node, p *Pod, c *Container, sc *scenario.Container, claims map[string]*Claim) error {
	group := func(resource, id string, numa int) {
		for i := range c.Devices {
			if c.Devices[i].Resource == resource {
				c.Devices[i].IDs = append(c.Devices[i].IDs, id)
				if !containsInt(c.Devices[i].NUMA, numa) {
					c.Devices[i].NUMA = append(c.Devices[i].NUMA, numa)
				}
				return
			}
		}
		c.Devices = append(c.Devices, DeviceGroup{Resource: resource, IDs: []string{id}, NUMA: []int{numa}})
	}
	for _, gi := range sc.GPUs {
		g := n.GPUs[gi]
		c.GPUs = append(c.GPUs, g)
		g.Holders = append(g.Holders, Holder{Pod: p, Container: c, Replica: -1})
		group(ResourceGPU, g.UUID, g.NUMA)
	}
	for _, ref := range sc.MIG {
		m, err := migByRef(n, ref)
		if err != nil {
			return err
		}
		c.MIG = append(c.MIG, m)
		m.Holders = append(m.Holders, Holder{Pod: p, Container: c, Replica: -1})
		group(n.MIGResourceName(m.Profile.Name), m.UUID, m.GPU.NUMA)
	}
	for _, ref := range sc.Replicas {
		gs, rs, _ := strings.Cut(ref, "::")
		gi, _ := strconv.Atoi(gs)
		r, _ := strconv.Atoi(rs)
		rr := ReplicaRef{GPU: n.GPUs[gi], Replica: r}
		c.Replicas = append(c.Replicas, rr)
		rr.GPU.Holders = append(rr.GPU.Holders, Holder{Pod: p, Container: c, Replica: r})
		group(n.SharedResourceName(), rr.ID(), rr.GPU.NUMA)
	}
	if n.Shape != nil {
		per := n.Shape.CoresPerDevice
		for _, core := range sc.NeuronCores {
			c.NeuronCores = append(c.NeuronCores, core)
			group(ResourceNeuronCore, strconv.Itoa(core), (core/per)*2/len(n.NeuronDevices))
		}
		for _, d := range sc.NeuronDevices {
			c.NeuronDevs = append(c.NeuronDevs, d)
			for k := 0; k < per; k++ {
				c.NeuronCores = append(c.NeuronCores, d*per+k)
			}
			group(ResourceNeuronDevice, strconv.Itoa(d), d*2/len(n.NeuronDevices))
		}
	}
	for _, name := range sc.Claims {
		cl, ok := claims[p.Namespace+"/"+name]
		if !ok {
			return fmt.Errorf("pod %s/%s: unknown resource claim %q", p.Namespace, p.Name, name)
		}
		c.Claims = append(c.Claims, cl)
		if !containsPod(cl.Consumers, p) {
			cl.Consumers = append(cl.Consumers, p)
		}
		for _, g := range cl.GPUs {
			g.Holders = append(g.Holders, Holder{Pod: p, Container: c, Replica: -1, Claim: cl})
			c.GPUs = append(c.GPUs, g)
		}
		for _, m := range cl.MIG {
			m.Holders = append(m.Holders, Holder{Pod: p, Container: c, Replica: -1, Claim: cl})
			c.MIG = append(c.MIG, m)
		}
	}
	return nil
}

// autoPods fills the node's free whole devices with generated pods.
func (f *Fleet) autoPods(n *Node, a *scenario.AutoPods, claims map[string]*Claim) error {
	var free []int
	if n.Kind == catalog.KindNVIDIA {
		for _, g := range n.GPUs {
			if !g.MIGEnabled() && len(g.Holders) == 0 {
				free = append(free, g.Index)
			}
		}
	} else {
		held := map[int]bool{}
		for _, p := range n.Pods {
			for _, c := range p.Containers {
				for _, core := range c.NeuronCores {
					held[core/n.Shape.CoresPerDevice] = true
				}
			}
		}
		for _, d := range n.NeuronDevices {
			if !held[d.Index] {
				free = append(free, d.Index)
			}
		}
	}
	for i := 0; i*a.DevicesPerPod < len(free); i++ {
		chunk := free[i*a.DevicesPerPod : min(len(free), (i+1)*a.DevicesPerPod)]
		sc := &scenario.Container{Name: "worker"}
		if n.Kind == catalog.KindNVIDIA {
			sc.GPUs = chunk
		} else {
			sc.NeuronDevices = chunk
		}
		sp := &scenario.Pod{
			Name: fmt.Sprintf("%s-auto-%d", n.Name, i), Namespace: a.Namespace, Node: n.Name, Team: a.Team,
			Owner:    &scenario.Owner{Kind: scenario.OwnerJob, Name: n.Name + "-auto"},
			Workload: a.Workload, Containers: []*scenario.Container{sc},
		}
		if _, err := f.addPod(sp, claims); err != nil {
			return err
		}
	}
	return nil
}

func migByRef(n *Node, ref string) (*MIGInstance, error) {
	gs, ss, _ := strings.Cut(ref, ":")
	gi, err1 := strconv.Atoi(gs)
	slot, err2 := strconv.Atoi(ss)
	if err1 != nil || err2 != nil || gi >= len(n.GPUs) || !n.GPUs[gi].MIGEnabled() || slot >= len(n.GPUs[gi].MIG) {
		return nil, fmt.Errorf("node %s: no MIG device %q", n.Name, ref)
	}
	return n.GPUs[gi].MIG[slot], nil
}

func containsInt(list []int, v int) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

func containsPod(list []*Pod, p *Pod) bool {
	for _, x := range list {
		if x == p {
			return true
		}
	}
	return false
}

// cudaVersion is the CUDA version a driver branch ships with.
func cudaVersion(driver string) string {
	major, _, _ := strings.Cut(driver, ".")
	switch major {
	case "535":
		return "12.2"
	case "545":
		return "12.3"
	case "550":
		return "12.4"
	case "555":
		return "12.5"
	case "560":
		return "12.6"
	case "565":
		return "12.7"
	case "570":
		return "12.8"
	case "575", "580":
		return "12.9"
	}
	return "12.4"
}

// zoneID renders an AZ id such as use1-az1 for us-east-1a.
func zoneID(region, zone string) string {
	parts := strings.Split(region, "-")
	short := parts[0]
	for i := 1; i < len(parts); i++ {
		if i == len(parts)-1 {
			short += parts[i]
		} else if parts[i] != "" {
			short += parts[i][:1]
		}
	}
	idx := 1
	if letter := strings.TrimPrefix(zone, region); letter != "" {
		idx = int(letter[0]-'a') + 1
	}
	return fmt.Sprintf("%s-az%d", short, idx)
}
