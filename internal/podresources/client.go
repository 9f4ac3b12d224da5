package podresources

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"
	v1 "k8s.io/kubelet/pkg/apis/podresources/v1"
)

// DefaultSocket is where the kubelet serves PodResources on Linux.
const DefaultSocket = "/var/lib/kubelet/pod-resources/kubelet.sock"

// maxMessageSize matches the kubelet's own limit for PodResources answers; a
// node with hundreds of pods and devices stays far below it.
const maxMessageSize = 16 << 20

// Option changes how a Client connects.
type Option func(*options)

type options struct {
	callTimeout time.Duration
	backoff     backoff.Config
}

// WithCallTimeout bounds each call (default 10 s).
func WithCallTimeout(d time.Duration) Option {
	return func(o *options) { o.callTimeout = d }
}

// WithMaxBackoff caps the delay between reconnection attempts (default 30 s).
func WithMaxBackoff(d time.Duration) Option {
	return func(o *options) {
		o.backoff.MaxDelay = d
		if o.backoff.BaseDelay > d {
			o.backoff.BaseDelay = d
		}
	}
}

// Client talks to one kubelet over one long-lived connection.
type Client struct {
	socket      string
	conn        *grpc.ClientConn
	api         v1.PodResourcesListerClient
	callTimeout time.Duration
}

// New prepares a client for the socket at path. It does not connect: the
// connection is made on the first call and re-made, with backoff, whenever it
// breaks, so New succeeds even before the kubelet is up.
func New(path string, opts ...Option) (*Client, error) {
	if path == "" {
		return nil, errors.New("podresources: empty socket path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("podresources: socket path %q: %w", path, err)
	}
	o := options{
		callTimeout: 10 * time.Second,
		backoff: backoff.Config{
			BaseDelay:  500 * time.Millisecond,
			Multiplier: 1.6,
			Jitter:     0.2,
			MaxDelay:   30 * time.Second,
		},
	}
	for _, opt := range opts {
		opt(&o)
	}
	conn, err := grpc.NewClient("unix://"+abs,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithConnectParams(grpc.ConnectParams{Backoff: o.backoff, MinConnectTimeout: 5 * time.Second}),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMessageSize)),
	)
	if err != nil {
		return nil, fmt.Errorf("podresources: %w", err)
	}
	return &Client{socket: abs, conn: conn, api: v1.NewPodResourcesListerClient(conn), callTimeout: o.callTimeout}, nil
}

// Socket returns the absolute socket path.
func (c *Client) Socket() string { return c.socket }

// List returns every pod on the node with its containers' devices and DRA
// claim results.
func (c *Client) List(ctx context.Context) ([]Pod, error) {
	ctx, cancel := context.WithTimeout(ctx, c.callTimeout)
	defer cancel()
	resp, err := c.api.List(ctx, &v1.ListPodResourcesRequest{})
	if err != nil {
		return nil, classify("List", c.socket, err)
	}
	pods := make([]Pod, 0, len(resp.GetPodResources()))
	for _, p := range resp.GetPodResources() {
		pods = append(pods, podFromProto(p))
	}
	return pods, nil
}

// Get returns one pod's devices. Kubelets before 1.27, or without the
// KubeletPodResourcesGet gate, answer with an *Error of KindUnsupported.
func (c *Client) Get(ctx context.Context, namespace, name string) (Pod, error) {
	ctx, cancel := context.WithTimeout(ctx, c.callTimeout)
	defer cancel()
	resp, err := c.api.Get(ctx, &v1.GetPodResourcesRequest{PodName: name, PodNamespace: namespace})
	if err != nil {
		return Pod{}, classify("Get", c.socket, err)
	}
	return podFromProto(resp.GetPodResources()), nil
}

// Allocatable returns every device the node can hand out, per resource: with
// time-slicing or MPS, every replica id (GPU-…::0 … ::N-1).
func (c *Client) Allocatable(ctx context.Context) ([]Devices, error) {
	ctx, cancel := context.WithTimeout(ctx, c.callTimeout)
	defer cancel()
	resp, err := c.api.GetAllocatableResources(ctx, &v1.AllocatableResourcesRequest{})
	if err != nil {
		return nil, classify("GetAllocatableResources", c.socket, err)
	}
	out := make([]Devices, 0, len(resp.GetDevices()))
	for _, d := range resp.GetDevices() {
		out = append(out, devicesFromProto(d))
	}
	return out, nil
}

// Close releases the connection.
func (c *Client) Close() error {
	return c.conn.Close()
}
