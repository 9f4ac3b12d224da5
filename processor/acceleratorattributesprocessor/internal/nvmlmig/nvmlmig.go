// Package nvmlmig asks NVML which GPU and GPU instance a MIG device is.
//
// PodResources names MIG devices by their MIG UUID; dcgm-exporter names
// them by parent GPU UUID and GPU-instance id (the receivers turn that into
// hw.id <parent UUID>/gi<N>). Only the driver knows how the two relate. NVML
// is optional: without the library (no driver, or a build without cgo at run
// time) the processor learns the relation from NVML-source resources that
// carry both ids, when there are any.
package nvmlmig

import (
	"errors"
	"fmt"
	"sync"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// Position is where a MIG device lives.
type Position struct {
	Parent string // GPU UUID
	GI     int    // GPU-instance id
}

// Resolver finds MIG positions.
type Resolver interface {
	MIGPosition(migUUID string) (Position, bool)
}

// NVML resolves through the NVML library and remembers answers (a MIG
// device keeps its position until it is destroyed, and then its UUID goes).
type NVML struct {
	lib nvml.Interface

	mu    sync.Mutex
	cache map[string]result
}

type result struct {
	pos Position
	ok  bool
}

// Open initialises NVML. It fails, with the reason, when the library cannot
// be loaded.
func Open() (*NVML, error) {
	return OpenWith(nvml.New())
}

// OpenWith uses lib (tests pass go-nvml's mock servers).
func OpenWith(lib nvml.Interface) (n *NVML, err error) {
	defer func() {
		// go-nvml panics rather than returning when dlopen finds no library
		// in some configurations; that must not take the collector down.
		if r := recover(); r != nil {
			n, err = nil, fmt.Errorf("NVML not available: %v", r)
		}
	}()
	if ret := lib.Init(); ret != nvml.SUCCESS {
		return nil, fmt.Errorf("NVML not available: %s", lib.ErrorString(ret))
	}
	return &NVML{lib: lib, cache: map[string]result{}}, nil
}

// MIGPosition returns the parent GPU UUID and GPU-instance id of a MIG UUID.
func (n *NVML) MIGPosition(migUUID string) (Position, bool) {
	n.mu.Lock()
	r, ok := n.cache[migUUID]
	n.mu.Unlock()
	if ok {
		return r.pos, r.ok
	}
	pos, err := n.lookup(migUUID)
	r = result{pos: pos, ok: err == nil}
	n.mu.Lock()
	if len(n.cache) > 4096 { // a node has at most 8 GPUs × 7 instances; this only guards bad input
		clear(n.cache)
	}
	n.cache[migUUID] = r
	n.mu.Unlock()
	return r.pos, r.ok
}

func (n *NVML) lookup(migUUID string) (Position, error) {
	dev, ret := n.lib.DeviceGetHandleByUUID(migUUID)
	if ret != nvml.SUCCESS {
		return Position{}, errors.New(n.lib.ErrorString(ret))
	}
	isMIG, ret := dev.IsMigDeviceHandle()
	if ret != nvml.SUCCESS {
		return Position{}, errors.New(n.lib.ErrorString(ret))
	}
	if !isMIG {
		return Position{}, fmt.Errorf("%s is not a MIG device", migUUID)
	}
	parent, ret := dev.GetDeviceHandleFromMigDeviceHandle()
	if ret != nvml.SUCCESS {
		return Position{}, errors.New(n.lib.ErrorString(ret))
	}
	uuid, ret := parent.GetUUID()
	if ret != nvml.SUCCESS {
		return Position{}, errors.New(n.lib.ErrorString(ret))
	}
	gi, ret := dev.GetGpuInstanceId()
	if ret != nvml.SUCCESS {
		return Position{}, errors.New(n.lib.ErrorString(ret))
	}
	return Position{Parent: uuid, GI: gi}, nil
}

// Close shuts NVML down (reference-counted by the library).
func (n *NVML) Close() error {
	if ret := n.lib.Shutdown(); ret != nvml.SUCCESS {
		return errors.New(n.lib.ErrorString(ret))
	}
	return nil
}
