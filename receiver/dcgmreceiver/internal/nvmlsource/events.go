package nvmlsource

import (
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/model"
)

// watchedEvents are the NVML events that become health events. Double-bit
// ECC is left to the polled volatile counter (and XID 48), so that one
// error is not announced twice.
const watchedEvents = nvml.EventTypeXidCriticalError | nvml.EventTypeGpuUnavailableError | nvml.EventTypeGpuRecoveryAction

// openEvents creates the event set GPUs are registered on as they are
// enumerated. Without it (unsupported, no permission) health still comes
// from polling; only XIDs are missed, and that is said once. Called with
// s.mu held.
func (s *Source) openEvents() {
	set, ret := s.lib.EventSetCreate()
	if ret != nvml.SUCCESS {
		s.warnf("eventset", "NVML event set unavailable (%v): XIDs will not be reported; other health conditions are still polled", ret)
		return
	}
	s.events = set
}

// closeEvents frees the event set, if any. Called with s.mu held.
func (s *Source) closeEvents() {
	if s.events != nil {
		_ = s.events.Free()
		s.events = nil
	}
}

// registerEvents adds a GPU to the event set. Called with s.mu held.
func (s *Source) registerEvents(g *gpu) {
	if s.events == nil {
		return
	}
	supported, ret := g.handle.GetSupportedEventTypes()
	if ret != nvml.SUCCESS {
		s.warnf("events/"+g.id.HWID, "NVML cannot report events for %s (%v): its XIDs will not be reported", g.id.HWID, ret)
		return
	}
	mask := supported & watchedEvents
	if mask == 0 {
		return
	}
	if ret := g.handle.RegisterEvents(mask, s.events); ret != nvml.SUCCESS {
		s.warnf("events/"+g.id.HWID, "NVML event registration failed for %s (%v): its XIDs will not be reported", g.id.HWID, ret)
	}
}

// watchEvents waits on the event set until Shutdown.
func (s *Source) watchEvents() {
	s.mu.Lock()
	set := s.events
	s.mu.Unlock()
	if set == nil {
		return
	}
	timeout := uint32(s.set.EventWait / time.Millisecond)
	for {
		select {
		case <-s.stop:
			return
		default:
		}
		data, ret := set.Wait(timeout)
		switch ret {
		case nvml.SUCCESS:
			s.handleEvent(data)
		case nvml.ERROR_TIMEOUT:
		default:
			s.warnf("eventwait", "waiting for NVML events failed (%v); retrying", ret)
			select {
			case <-s.stop:
				return
			case <-time.After(time.Second):
			}
		}
	}
}

func (s *Source) handleEvent(data nvml.EventData) {
	now := s.set.Now()
	id, ok := s.eventDevice(data)
	if !ok {
		return
	}
	e := model.Event{Device: id, Time: now}
	switch data.EventType {
	case nvml.EventTypeXidCriticalError:
		e.Kind, e.Code = model.EventXID, int(data.EventData)
	case nvml.EventTypeGpuUnavailableError:
		e.Kind = model.EventDeviceLost
	case nvml.EventTypeGpuRecoveryAction:
		e.Kind, e.Code = model.EventRecoveryAction, int(data.EventData)
	default:
		return
	}
	s.set.OnEvent(e)
}

// eventDevice finds the GPU, or the MIG instance named by the event's
// GPU-instance id, an event belongs to.
func (s *Source) eventDevice(data nvml.EventData) (model.Identity, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.byHandle[data.Device]
	if !ok {
		// Handles from events may not compare equal to enumerated ones with
		// every binding; fall back to the UUID.
		if data.Device == nil {
			return model.Identity{}, false
		}
		uuid, ret := data.Device.GetUUID()
		if ret != nvml.SUCCESS {
			return model.Identity{}, false
		}
		for _, cand := range s.gpus {
			if cand.id.HWID == uuid {
				g, ok = cand, true
				break
			}
		}
		if !ok {
			return model.Identity{}, false
		}
	}
	if data.GpuInstanceId != noInstance {
		for _, m := range g.migs {
			if uint32(m.id.GPUInstanceID) == data.GpuInstanceId &&
				(data.ComputeInstanceId == noInstance || uint32(m.id.ComputeInstanceID) == data.ComputeInstanceId) {
				return m.id, true
			}
		}
	}
	return g.id, true
}
