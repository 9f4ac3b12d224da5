// Package output delivers encoded log events: to CloudWatch Logs with
// PutLogEvents, or as JSON lines to stdout or a file for the CloudWatch agent,
// Fluent Bit or a Lambda-style runtime to pick up.
package output

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/collector/component"
)

// Event is one log event: a JSON message with its timestamp, where it goes
// (log group and stream, used by CloudWatch Logs only) and which input
// resource it came from, so that a partial failure can be retried for the
// resources it concerns only.
type Event struct {
	Group     string
	Stream    string
	Timestamp int64 // milliseconds since the epoch
	Message   []byte
	Origin    int
}

// Sink is where events go.
type Sink interface {
	Start(ctx context.Context, host component.Host) error
	// Send delivers events. emf marks events that are EMF documents. On a
	// retryable failure it returns a *FailedError naming the origins whose
	// events were not all delivered; other errors are permanent.
	Send(ctx context.Context, events []Event, emf bool) error
	Shutdown(ctx context.Context) error
}

// FailedError reports events that were not delivered and may be retried.
type FailedError struct {
	Origins map[int]bool
	Err     error
}

func (e *FailedError) Error() string {
	return fmt.Sprintf("%d resource(s) not delivered: %v", len(e.Origins), e.Err)
}

func (e *FailedError) Unwrap() error { return e.Err }

// AsFailed returns the *FailedError in err's chain.
func AsFailed(err error) (*FailedError, bool) {
	var f *FailedError
	ok := errors.As(err, &f)
	return f, ok
}

func failedOf(events []Event, into map[int]bool) map[int]bool {
	if into == nil {
		into = map[int]bool{}
	}
	for _, e := range events {
		into[e.Origin] = true
	}
	return into
}
