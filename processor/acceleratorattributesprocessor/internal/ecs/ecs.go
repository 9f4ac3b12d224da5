// Package ecs finds the GPUs that Amazon ECS gave to its tasks' containers,
// by asking the Docker Engine API on its unix socket: the ECS agent labels
// every task container (com.amazonaws.ecs.*) and passes the GPUs it assigned
// in NVIDIA_VISIBLE_DEVICES. Containers that share a GPU through MPS carry
// CUDA_MPS_ACTIVE_THREAD_PERCENTAGE.
package ecs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultSocket is where dockerd listens on ECS container instances.
const DefaultSocket = "/var/run/docker.sock"

// ECS agent labels on task containers.
const (
	LabelTaskARN       = "com.amazonaws.ecs.task-arn"
	LabelCluster       = "com.amazonaws.ecs.cluster"
	LabelContainerName = "com.amazonaws.ecs.container-name"
	LabelTaskFamily    = "com.amazonaws.ecs.task-definition-family"
)

// Container is one running ECS task container and the GPUs it was given.
type Container struct {
	ID         string
	Name       string // the task definition's container name
	TaskARN    string
	Cluster    string
	TaskFamily string
	Labels     map[string]string
	// Devices are the NVIDIA_VISIBLE_DEVICES entries: GPU or MIG UUIDs, or
	// indices. Empty for "all", "none", "void" or unset: such a container
	// cannot be said to hold a particular GPU.
	Devices []string
	// MPSActiveThreads is CUDA_MPS_ACTIVE_THREAD_PERCENTAGE as a fraction, 0 when unset.
	MPSActiveThreads float64
}

// maxResponse bounds one Docker API answer.
const maxResponse = 32 << 20

// Client reads containers from dockerd, inspecting each container once.
type Client struct {
	socket string
	http   *http.Client

	mu        sync.Mutex
	inspected map[string]Container
}

// New returns a client for the socket at path.
func New(path string, timeout time.Duration) *Client {
	dialer := &net.Dialer{}
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, "unix", path)
		},
		MaxIdleConns:    2,
		IdleConnTimeout: time.Minute,
	}
	return &Client{socket: path, http: &http.Client{Transport: tr, Timeout: timeout}, inspected: map[string]Container{}}
}

// Error is a failed Docker API call, with what to do about it.
type Error struct {
	Socket string
	Path   string
	Err    error
	Hint   string
}

func (e *Error) Error() string {
	return fmt.Sprintf("docker API %s on %s: %v", e.Path, e.Socket, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

type listEntry struct {
	ID     string            `json:"Id"`
	Labels map[string]string `json:"Labels"`
	State  string            `json:"State"`
}

type inspectAnswer struct {
	ID     string `json:"Id"`
	Name   string `json:"Name"`
	Config struct {
		Env    []string          `json:"Env"`
		Labels map[string]string `json:"Labels"`
	} `json:"Config"`
}

// Containers lists the running ECS task containers. Containers that are
// gone are forgotten, so memory follows what runs.
func (c *Client) Containers(ctx context.Context) ([]Container, error) {
	filters := url.QueryEscape(`{"label":["` + LabelTaskARN + `"],"status":["running"]}`)
	var list []listEntry
	if err := c.get(ctx, "/containers/json?filters="+filters, &list); err != nil {
		return nil, err
	}
	out := make([]Container, 0, len(list))
	live := make(map[string]bool, len(list))
	var firstErr error
	for _, e := range list {
		if e.ID == "" || e.Labels[LabelTaskARN] == "" {
			continue
		}
		live[e.ID] = true
		c.mu.Lock()
		ct, ok := c.inspected[e.ID]
		c.mu.Unlock()
		if !ok {
			var ans inspectAnswer
			if err := c.get(ctx, "/containers/"+url.PathEscape(e.ID)+"/json", &ans); err != nil {
				// One container that vanished between list and inspect (404)
				// or answers badly must not hide the others.
				if firstErr == nil {
					firstErr = err
				}
				continue
			}
			ct = fromInspect(ans)
			c.mu.Lock()
			c.inspected[e.ID] = ct
			c.mu.Unlock()
		}
		out = append(out, ct)
	}
	c.mu.Lock()
	for id := range c.inspected {
		if !live[id] {
			delete(c.inspected, id)
		}
	}
	c.mu.Unlock()
	if len(out) == 0 && firstErr != nil {
		return nil, firstErr
	}
	return out, nil
}

func fromInspect(a inspectAnswer) Container {
	labels := a.Config.Labels
	ct := Container{
		ID:         a.ID,
		Name:       labels[LabelContainerName],
		TaskARN:    labels[LabelTaskARN],
		Cluster:    labels[LabelCluster],
		TaskFamily: labels[LabelTaskFamily],
		Labels:     labels,
	}
	if ct.Name == "" {
		ct.Name = strings.TrimPrefix(a.Name, "/")
	}
	for _, kv := range a.Config.Env {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "NVIDIA_VISIBLE_DEVICES":
			ct.Devices = ParseVisibleDevices(v)
		case "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE":
			if pct, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && pct > 0 && pct <= 100 {
				ct.MPSActiveThreads = pct / 100
			}
		}
	}
	return ct
}

// ParseVisibleDevices reads NVIDIA_VISIBLE_DEVICES: a comma-separated list of
// UUIDs or indices; "all", "none", "void" and "" name no particular device.
func ParseVisibleDevices(v string) []string {
	v = strings.TrimSpace(v)
	switch strings.ToLower(v) {
	case "", "all", "none", "void":
		return nil
	}
	var out []string
	for _, d := range strings.Split(v, ",") {
		if d = strings.TrimSpace(d); d != "" {
			out = append(out, d)
		}
	}
	return out
}

func (c *Client) get(ctx context.Context, path string, into any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://docker"+path, nil)
	if err != nil {
		return &Error{Socket: c.socket, Path: path, Err: err}
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return c.dialError(path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
	if err != nil {
		return &Error{Socket: c.socket, Path: path, Err: err, Hint: "dockerd closed the answer early; retrying"}
	}
	if resp.StatusCode != http.StatusOK {
		return &Error{Socket: c.socket, Path: path, Err: fmt.Errorf("HTTP %d: %s", resp.StatusCode, snippet(body)),
			Hint: "dockerd refused the request; retrying"}
	}
	if len(body) > maxResponse {
		return &Error{Socket: c.socket, Path: path, Err: fmt.Errorf("answer larger than %d bytes", maxResponse)}
	}
	if err := json.Unmarshal(body, into); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			err = fmt.Errorf("malformed JSON at byte %d: %w", se.Offset, err)
		}
		return &Error{Socket: c.socket, Path: path, Err: err, Hint: "dockerd answered something that is not Docker Engine API JSON; is the socket really dockerd's?"}
	}
	return nil
}

func (c *Client) dialError(path string, err error) error {
	e := &Error{Socket: c.socket, Path: path, Err: err, Hint: "dockerd does not answer; retrying"}
	if _, serr := os.Stat(c.socket); errors.Is(serr, fs.ErrNotExist) {
		e.Hint = fmt.Sprintf("the Docker socket %s does not exist: mount it into the collector (ECS task volume with host sourcePath %s) or set ecs.docker_socket", c.socket, c.socket)
	} else if errors.Is(err, fs.ErrPermission) || strings.Contains(err.Error(), "permission denied") {
		e.Hint = fmt.Sprintf("permission denied on %s: run the collector as root or in the docker group", c.socket)
	}
	return e
}

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
