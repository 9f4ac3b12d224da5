package nvmlsource

import (
	"fmt"
	"strconv"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/mig"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/model"
)

// noInstance is what NVML puts in GPU- and compute-instance ids that do not
// apply (a process or event outside MIG).
const noInstance = 0xFFFFFFFF

// gpu is one physical GPU and what is kept about it between scrapes.
type gpu struct {
	handle   nvml.Device
	id       model.Identity
	selected bool
	gpm      bool // GPM profiling supported
	gpmPair  gpmPair

	// lastProcessSample is the newest per-process utilization timestamp
	// seen, so each scrape reads only newer samples.
	lastProcessSample uint64

	// migs are the MIG instances seen at the last scrape, by MIG UUID.
	migs map[string]*migDevice
}

// migDevice is one MIG instance (a GPU instance with one compute instance).
type migDevice struct {
	handle  nvml.Device
	id      model.Identity
	gpmPair gpmPair
	seen    bool
}

func (g *gpu) free() {
	g.gpmPair.free()
	for _, m := range g.migs {
		m.gpmPair.free()
	}
}

// enumerate (re)builds the GPU table. Called with s.mu held.
func (s *Source) enumerate() error {
	driver, ret := s.lib.SystemGetDriverVersion()
	if ret == nvml.SUCCESS {
		s.driver = driver
	}
	n, ret := s.lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return fmt.Errorf("NVML DeviceGetCount: %v", ret)
	}
	old := map[string]*gpu{}
	for _, g := range s.gpus {
		old[g.id.HWID] = g
	}
	gpus := make([]*gpu, 0, n)
	byHandle := make(map[nvml.Device]*gpu, n)
	for i := 0; i < n; i++ {
		h, ret := s.lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			s.warnf("handle", "NVML has no handle for GPU %d (%v); it is left out until it answers", i, ret)
			continue
		}
		id, err := s.identity(h, i)
		if err != nil {
			s.warnf("identity", "GPU %d is left out: %v", i, err)
			continue
		}
		g, ok := old[id.HWID]
		if ok {
			delete(old, id.HWID)
			g.handle, g.id = h, id
		} else {
			g = &gpu{handle: h, id: id, migs: map[string]*migDevice{}}
			if sup, ret := h.GpmQueryDeviceSupport(); ret == nvml.SUCCESS && sup.IsSupportedDevice != 0 {
				g.gpm = true
			}
			s.registerEvents(g)
		}
		g.selected = s.set.Filter.Match(i, id.HWID)
		gpus = append(gpus, g)
		byHandle[h] = g
	}
	for _, g := range old {
		g.free()
	}
	s.gpus, s.byHandle = gpus, byHandle
	return nil
}

func (s *Source) identity(h nvml.Device, index int) (model.Identity, error) {
	uuid, ret := h.GetUUID()
	if ret != nvml.SUCCESS {
		return model.Identity{}, fmt.Errorf("NVML GetUUID: %v", ret)
	}
	id := model.Identity{
		HWID: uuid, Index: index, DriverVersion: s.driver, HostName: s.set.HostName,
		PartitionType: accelschema.PartitionNone, Share: 1,
		GPUInstanceID: -1, ComputeInstanceID: -1,
	}
	if name, ret := h.GetName(); ret == nvml.SUCCESS {
		id.Model = name
	}
	if pci, ret := h.GetPciInfo(); ret == nvml.SUCCESS {
		id.PCIBusID = cString(pci.BusId[:])
	}
	return id, nil
}

// refreshMIG lists the GPU's MIG instances. Instances are created and
// destroyed at run time, so this runs on every scrape; what is kept per
// instance (its GPM sample) follows it by MIG UUID.
func (s *Source) refreshMIG(g *gpu, memTotal float64) []*migDevice {
	for _, m := range g.migs {
		m.seen = false
	}
	maxCount, ret := g.handle.GetMaxMigDeviceCount()
	if ret != nvml.SUCCESS {
		s.callFailed(g, "GetMaxMigDeviceCount", ret)
		return nil
	}
	var out []*migDevice
	for i := 0; i < maxCount; i++ {
		h, ret := g.handle.GetMigDeviceHandleByIndex(i)
		if ret == nvml.ERROR_NOT_FOUND || ret == nvml.ERROR_INVALID_ARGUMENT {
			continue // empty slot
		}
		if ret != nvml.SUCCESS {
			s.callFailed(g, "GetMigDeviceHandleByIndex", ret)
			continue
		}
		uuid, ret := h.GetUUID()
		if ret != nvml.SUCCESS {
			s.callFailed(g, "MIG GetUUID", ret)
			continue
		}
		m, ok := g.migs[uuid]
		if !ok {
			id, err := s.migIdentity(g, h, uuid)
			if err != nil {
				s.warnf("mig-identity", "MIG instance %s on %s is left out: %v", uuid, g.id.HWID, err)
				continue
			}
			m = &migDevice{handle: h, id: id}
			g.migs[uuid] = m
		}
		m.handle, m.seen = h, true
		if !g.selected && !s.set.Filter.Match(-1, uuid) {
			continue
		}
		out = append(out, m)
	}
	for uuid, m := range g.migs {
		if !m.seen {
			m.gpmPair.free()
			delete(g.migs, uuid)
		}
	}
	// Split each GPU instance's share among its compute instances, and fit
	// the layout (mig.Fit) so that the shares of one GPU never add up to
	// more than it: 3g.40gb + 4g.40gb would otherwise be 0.5 + 0.571.
	perGI := map[int]int{}
	for _, m := range out {
		perGI[m.id.GPUInstanceID]++
	}
	shares := make([]float64, len(out))
	for i, m := range out {
		shares[i] = model.MIGShare(m.id.Profile, memTotal, g.id.Model) / float64(perGI[m.id.GPUInstanceID])
	}
	mig.Fit(shares)
	for i, m := range out {
		m.id.Share = shares[i]
	}
	return out
}

func (s *Source) migIdentity(g *gpu, h nvml.Device, uuid string) (model.Identity, error) {
	gi, ret := h.GetGpuInstanceId()
	if ret != nvml.SUCCESS {
		return model.Identity{}, fmt.Errorf("NVML GetGpuInstanceId: %v", ret)
	}
	ci, ret := h.GetComputeInstanceId()
	if ret != nvml.SUCCESS {
		ci = -1
	}
	id := g.id
	id.HWID = uuid
	id.Parent = g.id.HWID
	id.PartitionType = accelschema.PartitionMIG
	id.PartitionID = strconv.Itoa(gi)
	id.GPUInstanceID = gi
	id.ComputeInstanceID = ci
	id.Share = 0
	if name, ret := h.GetName(); ret == nvml.SUCCESS {
		if p, err := mig.ParseProfile(name); err == nil {
			id.Profile = p.Name
		}
	}
	return id, nil
}

// cString reads a NUL-terminated C char array.
func cString(b []int8) string {
	out := make([]byte, 0, len(b))
	for _, c := range b {
		if c == 0 {
			break
		}
		out = append(out, byte(c))
	}
	return string(out)
}
