// Package podresourcestest runs a real kubelet PodResources v1 gRPC server on
// a unix socket, serving whatever pods and allocatable devices a test (or the
// fleet simulator) gives it. It speaks the kubelet's protocol, generated
// server and all; only the answers are made up.
package podresourcestest

import (
	"context"
	"errors"
	"net"
	"os"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	v1 "k8s.io/kubelet/pkg/apis/podresources/v1"
)

// Server is a fake kubelet's PodResources endpoint.
type Server struct {
	v1.UnimplementedPodResourcesListerServer

	mu          sync.Mutex
	pods        []*v1.PodResources
	allocatable []*v1.ContainerDevices
	// Like kubelets before 1.27 (no Get) or with GetAllocatable's gate off.
	getUnsupported         bool
	allocatableUnsupported bool

	listCalls atomic.Int64
	getCalls  atomic.Int64

	grpcServer *grpc.Server
	socket     string
	done       chan struct{}
}

// New returns a server with nothing on the node.
func New() *Server { return &Server{} }

// Pod builds a PodResources entry: Pod("ns", "name", Container(...), ...).
func Pod(namespace, name string, containers ...*v1.ContainerResources) *v1.PodResources {
	return &v1.PodResources{Namespace: namespace, Name: name, Containers: containers}
}

// Container builds a container with device-plugin devices.
func Container(name string, devices ...*v1.ContainerDevices) *v1.ContainerResources {
	return &v1.ContainerResources{Name: name, Devices: devices}
}

// Devices builds one resource's device list.
func Devices(resource string, ids ...string) *v1.ContainerDevices {
	return &v1.ContainerDevices{ResourceName: resource, DeviceIds: ids}
}

// DRAClaim builds a DynamicResource: one claim and its allocated devices.
func DRAClaim(namespace, name string, devices ...*v1.ClaimResource) *v1.DynamicResource {
	return &v1.DynamicResource{ClaimNamespace: namespace, ClaimName: name, ClaimResources: devices}
}

// DRADevice builds one allocated DRA device; shareID may be empty.
func DRADevice(driver, pool, device, shareID string) *v1.ClaimResource {
	cr := &v1.ClaimResource{DriverName: driver, PoolName: pool, DeviceName: device,
		CdiDevices: []*v1.CDIDevice{{Name: "k8s." + driver + "/device=" + device}}}
	if shareID != "" {
		cr.ShareId = &shareID
	}
	return cr
}

// SetPods replaces what List returns.
func (s *Server) SetPods(pods ...*v1.PodResources) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pods = pods
}

// SetAllocatable replaces what GetAllocatableResources returns.
func (s *Server) SetAllocatable(devices ...*v1.ContainerDevices) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.allocatable = devices
}

// SetUnsupported makes Get and/or GetAllocatableResources fail the way old
// kubelets do.
func (s *Server) SetUnsupported(get, allocatable bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.getUnsupported, s.allocatableUnsupported = get, allocatable
}

// ListCalls counts List requests served.
func (s *Server) ListCalls() int64 { return s.listCalls.Load() }

// GetCalls counts Get requests served.
func (s *Server) GetCalls() int64 { return s.getCalls.Load() }

// List implements PodResourcesListerServer.
func (s *Server) List(context.Context, *v1.ListPodResourcesRequest) (*v1.ListPodResourcesResponse, error) {
	s.listCalls.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	return &v1.ListPodResourcesResponse{PodResources: s.pods}, nil
}

// GetAllocatableResources implements PodResourcesListerServer.
func (s *Server) GetAllocatableResources(context.Context, *v1.AllocatableResourcesRequest) (*v1.AllocatableResourcesResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.allocatableUnsupported {
		// What a kubelet with KubeletPodResourcesGetAllocatable off answers.
		return nil, errors.New("PodResources API GetAllocatableResources disabled")
	}
	return &v1.AllocatableResourcesResponse{Devices: s.allocatable}, nil
}

// Get implements PodResourcesListerServer.
func (s *Server) Get(_ context.Context, req *v1.GetPodResourcesRequest) (*v1.GetPodResourcesResponse, error) {
	s.getCalls.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.getUnsupported {
		return nil, status.Error(codes.Unimplemented, "method Get not implemented")
	}
	for _, p := range s.pods {
		if p.GetNamespace() == req.GetPodNamespace() && p.GetName() == req.GetPodName() {
			return &v1.GetPodResourcesResponse{PodResources: p}, nil
		}
	}
	return nil, status.Errorf(codes.NotFound, "pod %s/%s not found", req.GetPodNamespace(), req.GetPodName())
}

// Start listens on socket (removing a stale file first, as the kubelet does)
// and serves until Stop.
func (s *Server) Start(socket string) error {
	if err := os.Remove(socket); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	lis, err := net.Listen("unix", socket)
	if err != nil {
		return err
	}
	s.socket = socket
	s.grpcServer = grpc.NewServer()
	v1.RegisterPodResourcesListerServer(s.grpcServer, s)
	s.done = make(chan struct{})
	go func() {
		defer close(s.done)
		_ = s.grpcServer.Serve(lis)
	}()
	return nil
}

// Stop ends serving and removes the socket, like a kubelet going away.
func (s *Server) Stop() {
	if s.grpcServer == nil {
		return
	}
	s.grpcServer.Stop()
	<-s.done
	s.grpcServer = nil
	_ = os.Remove(s.socket)
}
