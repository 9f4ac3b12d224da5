// Package discovery finds the inference servers running on this node from
// the Kubernetes API: pods selected by a label selector or by an annotation,
// with the metrics port, path and server kind taken from annotations.
package discovery // import "github.com/otelcol-accel/otelcol-accel/receiver/inferencereceiver/internal/discovery"

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Annotation names, below the configured prefix (default
// otelcol-accel.io): <prefix>/inference-server etc.
const (
	AnnotationServer = "inference-server"
	AnnotationPort   = "metrics-port"
	AnnotationPath   = "metrics-path"
	AnnotationScheme = "metrics-scheme"
	AnnotationModel  = "model"
)

// The prometheus.io/* convention, used where our own annotations are absent.
const (
	promPort   = "prometheus.io/port"
	promPath   = "prometheus.io/path"
	promScheme = "prometheus.io/scheme"
)

// Rules decide which pods are inference servers and how to scrape them.
type Rules struct {
	// NodeName is this node; pods elsewhere are ignored.
	NodeName string
	// Selector selects pods by label; nil or empty selects none by label.
	Selector labels.Selector
	// AnnotationPrefix is the prefix of our annotations.
	AnnotationPrefix string
	// PrometheusFallback lets prometheus.io/port|path|scheme stand in for
	// our port, path and scheme annotations.
	PrometheusFallback bool
	// ValidServer reports whether a server annotation value is usable
	// (a known kind or "auto").
	ValidServer func(string) bool
	// DefaultServer is the kind of pods selected by label without a
	// server annotation.
	DefaultServer string
	// DefaultPort returns the usual metrics port of a server kind (0 if
	// none), used when a container declares it and nothing else says.
	DefaultPort func(kind string) int32
	// DefaultPath returns the metrics path of a server kind.
	DefaultPath func(kind string) string
}

// Pod identifies the pod a target runs in.
type Pod struct {
	Name, Namespace, UID, NodeName string
}

// Target is one inference server found in a pod.
type Target struct {
	// ID stays the same for as long as the pod serves on that port.
	ID       string
	Endpoint string
	Server   string
	Model    string
	Pod      Pod
}

// PodError says why a selected pod could not become a target.
type PodError struct {
	Namespace, Name string
	Reason          string
}

func (e PodError) Error() string {
	return fmt.Sprintf("pod %s/%s: %s", e.Namespace, e.Name, e.Reason)
}

func (r *Rules) annotation(name string) string { return r.AnnotationPrefix + "/" + name }

// Selected reports whether a pod is an inference server by these rules.
func (r *Rules) Selected(pod *corev1.Pod) bool {
	if _, ok := pod.Annotations[r.annotation(AnnotationServer)]; ok {
		return true
	}
	return r.Selector != nil && !r.Selector.Empty() && r.Selector.Matches(labels.Set(pod.Labels))
}

// Target resolves a selected pod into a target. ok is false when the pod is
// not (yet) scrapable — not running, no IP, terminating — which is not an
// error; err says why a pod that should be scrapable is not.
func (r *Rules) Target(pod *corev1.Pod) (t Target, ok bool, err error) {
	if r.NodeName != "" && pod.Spec.NodeName != r.NodeName {
		return t, false, nil
	}
	if pod.Status.Phase != corev1.PodRunning || pod.Status.PodIP == "" || pod.DeletionTimestamp != nil {
		return t, false, nil
	}
	perr := func(format string, args ...any) error {
		return PodError{Namespace: pod.Namespace, Name: pod.Name, Reason: fmt.Sprintf(format, args...)}
	}

	server := r.DefaultServer
	if v, has := pod.Annotations[r.annotation(AnnotationServer)]; has {
		server = strings.ToLower(strings.TrimSpace(v))
		if server == "" {
			server = r.DefaultServer
		}
	}
	if r.ValidServer != nil && !r.ValidServer(server) {
		return t, false, perr("annotation %s=%q is not a known server kind", r.annotation(AnnotationServer), server)
	}

	port, err := r.port(pod, server)
	if err != nil {
		return t, false, perr("%v", err)
	}
	path := r.lookup(pod, AnnotationPath, promPath)
	if path == "" && r.DefaultPath != nil {
		path = r.DefaultPath(server)
	}
	if path == "" {
		path = "/metrics"
	}
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	scheme := strings.ToLower(r.lookup(pod, AnnotationScheme, promScheme))
	switch scheme {
	case "":
		scheme = "http"
	case "http", "https":
	default:
		return t, false, perr("metrics scheme %q is neither http nor https", scheme)
	}

	portText := strconv.Itoa(int(port))
	return Target{
		ID:       "pod/" + string(pod.UID) + ":" + portText,
		Endpoint: scheme + "://" + net.JoinHostPort(pod.Status.PodIP, portText) + path,
		Server:   server,
		Model:    strings.TrimSpace(pod.Annotations[r.annotation(AnnotationModel)]),
		Pod: Pod{
			Name:      pod.Name,
			Namespace: pod.Namespace,
			UID:       string(pod.UID),
			NodeName:  pod.Spec.NodeName,
		},
	}, true, nil
}

func (r *Rules) lookup(pod *corev1.Pod, own, prom string) string {
	if v := strings.TrimSpace(pod.Annotations[r.annotation(own)]); v != "" {
		return v
	}
	if r.PrometheusFallback {
		return strings.TrimSpace(pod.Annotations[prom])
	}
	return ""
}

// port: the port annotation (ours, then prometheus.io), a container port
// named "metrics", the server kind's usual port if a container declares it,
// else the first declared container port.
func (r *Rules) port(pod *corev1.Pod, server string) (int32, error) {
	if v := r.lookup(pod, AnnotationPort, promPort); v != "" {
		if p, err := strconv.ParseUint(v, 10, 16); err == nil && p > 0 {
			return int32(p), nil
		}
		// A named port is as good as a number.
		for _, c := range pod.Spec.Containers {
			for _, cp := range c.Ports {
				if cp.Name == v {
					return cp.ContainerPort, nil
				}
			}
		}
		return 0, fmt.Errorf("metrics port %q is neither a port number nor a named container port", v)
	}
	var declared []int32
	for _, c := range pod.Spec.Containers {
		for _, cp := range c.Ports {
			if cp.Protocol != "" && cp.Protocol != corev1.ProtocolTCP {
				continue
			}
			if cp.Name == "metrics" {
				return cp.ContainerPort, nil
			}
			declared = append(declared, cp.ContainerPort)
		}
	}
	if r.DefaultPort != nil {
		if p := r.DefaultPort(server); p != 0 && slices.Contains(declared, p) {
			return p, nil
		}
	}
	if len(declared) > 0 {
		return declared[0], nil
	}
	return 0, fmt.Errorf("no metrics port: annotate it with %s or declare a container port", r.annotation(AnnotationPort))
}
