// Package podresources serves the kubelet PodResources v1 API of one node
// on a unix socket, with the generated gRPC server of
// k8s.io/kubelet/pkg/apis/podresources/v1: List, Get and
// GetAllocatableResources answer what a kubelet with the NVIDIA device
// plugin (whole GPUs, MIG devices, time-slicing/MPS replicas), the Neuron
// device plugin and the NVIDIA DRA driver would answer.
package podresources

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"google.golang.org/grpc"
	v1 "k8s.io/kubelet/pkg/apis/podresources/v1"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/catalog"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/fleet"
)

// MaxSocketPath is the longest unix socket path Linux accepts.
const MaxSocketPath = 107

// Server answers one node's PodResources requests from its fleet state.
type Server struct {
	v1.UnimplementedPodResourcesListerServer
	mu    sync.RWMutex
	list  *v1.ListPodResourcesResponse
	alloc *v1.AllocatableResourcesResponse
	pods  map[string]*v1.PodResources
}

// New builds the responses of node n. Pods leave through Remove (an
// eviction through the simulated API server); nothing else changes.
func New(n *fleet.Node) *Server {
	s := &Server{list: &v1.ListPodResourcesResponse{}, pods: map[string]*v1.PodResources{}}
	for _, p := range n.Pods {
		pr := podResources(p)
		s.list.PodResources = append(s.list.PodResources, pr)
		s.pods[p.Namespace+"/"+p.Name] = pr
	}
	s.alloc = allocatable(n)
	return s
}

// List returns every pod on the node with the devices of its containers.
func (s *Server) List(context.Context, *v1.ListPodResourcesRequest) (*v1.ListPodResourcesResponse, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.list, nil
}

// Remove forgets a pod that left the node (evicted or deleted): as the
// kubelet once the pod's containers are gone, its devices are no longer
// listed as held. It reports whether the pod was there.
func (s *Server) Remove(namespace, name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	pr, ok := s.pods[namespace+"/"+name]
	if !ok {
		return false
	}
	delete(s.pods, namespace+"/"+name)
	// A new response: one already handed out is not changed under a reader.
	list := &v1.ListPodResourcesResponse{}
	for _, p := range s.list.PodResources {
		if p != pr {
			list.PodResources = append(list.PodResources, p)
		}
	}
	s.list = list
	return true
}

// Get returns one pod, or the kubelet's error for an unknown pod.
func (s *Server) Get(_ context.Context, req *v1.GetPodResourcesRequest) (*v1.GetPodResourcesResponse, error) {
	s.mu.RLock()
	pr, ok := s.pods[req.GetPodNamespace()+"/"+req.GetPodName()]
	s.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("pod %s in namespace %s not found", req.GetPodName(), req.GetPodNamespace())
	}
	return &v1.GetPodResourcesResponse{PodResources: pr}, nil
}

// GetAllocatableResources returns every device the device plugins offer.
func (s *Server) GetAllocatableResources(context.Context, *v1.AllocatableResourcesRequest) (*v1.AllocatableResourcesResponse, error) {
	return s.alloc, nil
}

func topology(numa []int) *v1.TopologyInfo {
	t := &v1.TopologyInfo{}
	for _, id := range numa {
		t.Nodes = append(t.Nodes, &v1.NUMANode{ID: int64(id)})
	}
	return t
}

func podResources(p *fleet.Pod) *v1.PodResources {
	pr := &v1.PodResources{Name: p.Name, Namespace: p.Namespace}
	for _, c := range p.Containers {
		cr := &v1.ContainerResources{Name: c.Name}
		for _, d := range c.Devices {
			cr.Devices = append(cr.Devices, &v1.ContainerDevices{
				ResourceName: d.Resource,
				DeviceIds:    append([]string(nil), d.IDs...),
				Topology:     topology(d.NUMA),
			})
		}
		for _, cl := range c.Claims {
			dr := &v1.DynamicResource{ClaimName: cl.Name, ClaimNamespace: cl.Namespace}
			add := func(device string) {
				dr.ClaimResources = append(dr.ClaimResources, &v1.ClaimResource{
					CdiDevices: []*v1.CDIDevice{{Name: "k8s." + fleet.DRADriverGPU + "/claim=" + cl.UID + "-" + device}},
					DriverName: fleet.DRADriverGPU,
					PoolName:   cl.Node.Name,
					DeviceName: device,
				})
			}
			for _, g := range cl.GPUs {
				add(g.DRAName())
			}
			for _, mi := range cl.MIG {
				add(mi.DRAName())
			}
			cr.DynamicResources = append(cr.DynamicResources, dr)
		}
		pr.Containers = append(pr.Containers, cr)
	}
	return pr
}

// allocatable lists the devices the device plugins registered. DRA-managed
// GPUs are not device-plugin devices and do not appear.
func allocatable(n *fleet.Node) *v1.AllocatableResourcesResponse {
	r := &v1.AllocatableResourcesResponse{}
	groups := map[string]*v1.ContainerDevices{}
	var order []string
	add := func(resource, id string, numa int) {
		key := resource + "/" + strconv.Itoa(numa)
		g, ok := groups[key]
		if !ok {
			g = &v1.ContainerDevices{ResourceName: resource, Topology: topology([]int{numa})}
			groups[key] = g
			order = append(order, key)
		}
		g.DeviceIds = append(g.DeviceIds, id)
	}
	if n.Kind == catalog.KindNVIDIA && !n.DRA {
		for _, g := range n.GPUs {
			switch {
			case g.MIGEnabled():
				for _, mi := range g.MIG {
					add(n.MIGResourceName(mi.Profile.Name), mi.UUID, g.NUMA)
				}
			case n.Replicas > 0:
				for r := 0; r < n.Replicas; r++ {
					add(n.SharedResourceName(), fleet.ReplicaRef{GPU: g, Replica: r}.ID(), g.NUMA)
				}
			default:
				add(fleet.ResourceGPU, g.UUID, g.NUMA)
			}
		}
	}
	if n.Kind == catalog.KindNeuron {
		per := n.Shape.CoresPerDevice
		for _, d := range n.NeuronDevices {
			numa := d.Index * 2 / len(n.NeuronDevices)
			add(fleet.ResourceNeuronDevice, strconv.Itoa(d.Index), numa)
			for k := 0; k < per; k++ {
				add(fleet.ResourceNeuronCore, strconv.Itoa(d.Index*per+k), numa)
			}
		}
	}
	for _, k := range order {
		r.Devices = append(r.Devices, groups[k])
	}
	return r
}

// Listen opens the unix socket, replacing a stale one left by a crash.
func Listen(path string) (net.Listener, error) {
	if len(path) > MaxSocketPath {
		return nil, fmt.Errorf("pod-resources socket path %q is %d bytes, longer than the %d a unix socket allows: use a shorter state directory", path, len(path), MaxSocketPath)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("pod-resources socket directory: %w", err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("remove stale pod-resources socket %s: %w", path, err)
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listen on pod-resources socket %s: %w", path, err)
	}
	return l, nil
}

// NewGRPCServer registers the node's PodResourcesLister on a new gRPC server.
func NewGRPCServer(s *Server) *grpc.Server {
	g := grpc.NewServer()
	v1.RegisterPodResourcesListerServer(g, s)
	return g
}
