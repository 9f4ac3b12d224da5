package podresources

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Kind classifies why a call failed, so that callers can tell a missing
// mount from a kubelet that is restarting.
type Kind int

const (
	// KindOther is any failure not listed below.
	KindOther Kind = iota
	// KindSocketMissing: the socket file does not exist (not mounted, or no kubelet).
	KindSocketMissing
	// KindPermission: the socket exists but this process may not connect to it.
	KindPermission
	// KindUnavailable: the socket exists but nothing answers (kubelet restarting).
	KindUnavailable
	// KindUnsupported: the kubelet does not offer this call (too old, or its
	// feature gate is off).
	KindUnsupported
	// KindTimeout: the call did not finish within the call timeout.
	KindTimeout
)

func (k Kind) String() string {
	switch k {
	case KindSocketMissing:
		return "socket missing"
	case KindPermission:
		return "permission denied"
	case KindUnavailable:
		return "unavailable"
	case KindUnsupported:
		return "unsupported"
	case KindTimeout:
		return "timeout"
	default:
		return "error"
	}
}

// Error is a failed PodResources call.
type Error struct {
	Op     string // List, Get, GetAllocatableResources
	Socket string
	Kind   Kind
	Err    error
}

func (e *Error) Error() string {
	return fmt.Sprintf("kubelet PodResources %s on %s: %s: %v", e.Op, e.Socket, e.Kind, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Hint says what a user should do about the error, in one sentence.
func (e *Error) Hint() string {
	switch e.Kind {
	case KindSocketMissing:
		return fmt.Sprintf("the socket %s does not exist: mount the host directory %s into the collector (hostPath volume, read-only is enough) or set pod_resources_socket to where the kubelet puts it", e.Socket, socketDir(e.Socket))
	case KindPermission:
		return fmt.Sprintf("permission denied on %s: run the collector as root (securityContext runAsUser: 0) or as a user that may open the socket", e.Socket)
	case KindUnavailable:
		return fmt.Sprintf("nothing answers on %s (is the kubelet restarting?): retrying with backoff", e.Socket)
	case KindUnsupported:
		return fmt.Sprintf("the kubelet does not offer %s (Kubernetes older than 1.27, or its KubeletPodResources* feature gate is off); attribution continues without it", e.Op)
	case KindTimeout:
		return fmt.Sprintf("the kubelet did not answer %s in time: retrying", e.Op)
	default:
		return "retrying on the next refresh"
	}
}

// KindOf returns the Kind of err, KindOther when err is not an *Error.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindOther
}

func socketDir(socket string) string {
	if i := strings.LastIndexByte(socket, '/'); i > 0 {
		return socket[:i]
	}
	return socket
}

// classify turns a gRPC error into an *Error. The socket is looked at on the
// file system because gRPC reports a missing socket and a refused connection
// alike, as Unavailable.
func classify(op, socket string, err error) *Error {
	e := &Error{Op: op, Socket: socket, Kind: KindOther, Err: err}
	st, _ := status.FromError(err)
	switch st.Code() {
	case codes.Unimplemented:
		e.Kind = KindUnsupported
		return e
	case codes.DeadlineExceeded:
		e.Kind = KindTimeout
	case codes.Unavailable:
		e.Kind = KindUnavailable
	}
	// Kubelets with the feature gate off answer with a plain error such as
	// "PodResources API GetAllocatableResources disabled".
	if strings.Contains(st.Message(), "disabled") && strings.Contains(st.Message(), "PodResources") {
		e.Kind = KindUnsupported
		return e
	}
	if e.Kind == KindUnavailable || e.Kind == KindTimeout {
		if _, serr := os.Stat(socket); errors.Is(serr, fs.ErrNotExist) {
			e.Kind = KindSocketMissing
		} else if errors.Is(serr, fs.ErrPermission) || strings.Contains(st.Message(), "permission denied") {
			e.Kind = KindPermission
		}
	}
	return e
}
