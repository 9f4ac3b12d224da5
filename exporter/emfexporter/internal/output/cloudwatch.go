package output

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer/consumererror"
)

// CloudWatchLogs sends events with PutLogEvents.
type CloudWatchLogs struct {
	newClient     func(ctx context.Context) (LogsAPI, error)
	retentionDays int32
	report        Reporter

	api LogsAPI
}

// Reporter hears about problems and recoveries, to log them (rate-limited)
// and report component status.
type Reporter interface {
	// Rejected: CloudWatch accepted a batch but rejected some events in it
	// (too old, too new, expired).
	Rejected(group, stream string, tooNew, tooOld, expired int)
	// Failed: a call failed; permanent failures drop the batch.
	Failed(group, stream string, err error, permanent bool)
	// Delivered: a batch went through.
	Delivered()
}

// NewCloudWatchLogs returns a sink that builds its client with newClient at
// Start. retentionDays (0: never expire) is applied to log groups it creates.
func NewCloudWatchLogs(newClient func(ctx context.Context) (LogsAPI, error), retentionDays int32, report Reporter) *CloudWatchLogs {
	return &CloudWatchLogs{newClient: newClient, retentionDays: retentionDays, report: report}
}

// Start builds the client; a missing region fails the collector's start.
func (c *CloudWatchLogs) Start(ctx context.Context, _ component.Host) error {
	api, err := c.newClient(ctx)
	if err != nil {
		return err
	}
	c.api = api
	return nil
}

// Shutdown has nothing to release: the SDK client holds only idle
// connections.
func (c *CloudWatchLogs) Shutdown(context.Context) error { return nil }

// Send delivers events stream by stream, batch by batch. A retryable failure
// stops its stream (later batches would arrive out of order otherwise) but
// not the others; the origins of every batch not delivered are returned for
// the retry. Batches CloudWatch refuses for good (malformed request) are
// reported and dropped.
func (c *CloudWatchLogs) Send(ctx context.Context, events []Event, emf bool) error {
	order, streams := byStream(events)
	var failed map[int]bool
	var errs []error
	for si, k := range order {
		batches := Batches(streams[si])
		for i, b := range batches {
			err := c.put(ctx, k, b, emf)
			if err == nil {
				c.report.Delivered()
				continue
			}
			if consumererror.IsPermanent(err) {
				c.report.Failed(k.group, k.stream, err, true)
				continue
			}
			c.report.Failed(k.group, k.stream, err, false)
			errs = append(errs, fmt.Errorf("log group %q stream %q: %w", k.group, k.stream, err))
			for _, rest := range batches[i:] {
				failed = failedOf(rest, failed)
			}
			break
		}
	}
	if failed != nil {
		return &FailedError{Origins: failed, Err: errors.Join(errs...)}
	}
	return nil
}

var emfHeader = cloudwatchlogs.WithAPIOptions(smithyhttp.AddHeaderValue("x-amzn-logs-format", "json/emf"))

func (c *CloudWatchLogs) put(ctx context.Context, k streamKey, batch []Event, emf bool) error {
	// The events travel in the body putBody writes; the input carries the
	// names only (the SDK's validation wants LogEvents present).
	in := &cloudwatchlogs.PutLogEventsInput{
		LogGroupName:  aws.String(k.group),
		LogStreamName: aws.String(k.stream),
		LogEvents:     []types.InputLogEvent{},
	}
	buf := bodyPool.Get().(*[]byte)
	if n := bodySize(k, batch); cap(*buf) < n {
		*buf = make([]byte, 0, n)
	}
	*buf = putBody((*buf)[:0], k, batch)
	opts := []func(*cloudwatchlogs.Options){withBody(*buf)}
	if emf {
		opts = append(opts, emfHeader)
	}
	out, err := c.api.PutLogEvents(ctx, in, opts...)
	if err == nil {
		// The server answered after reading the whole body, so the
		// transport is done with it. After a failure it may not be (a
		// response can come before the body is sent), so that buffer is
		// left to the garbage collector.
		bodyPool.Put(buf)
	}
	if errorCode(err) == "ResourceNotFoundException" {
		if err := c.ensure(ctx, k); err != nil {
			return err
		}
		out, err = c.api.PutLogEvents(ctx, in, opts...)
	}
	if errorCode(err) == "DataAlreadyAcceptedException" {
		return nil // a retry of a batch that did arrive
	}
	if err != nil {
		return classify(err)
	}
	if r := out.RejectedLogEventsInfo; r != nil {
		tooNew, tooOld, expired := 0, 0, 0
		if r.TooNewLogEventStartIndex != nil {
			tooNew = len(batch) - int(*r.TooNewLogEventStartIndex)
		}
		if r.TooOldLogEventEndIndex != nil {
			tooOld = int(*r.TooOldLogEventEndIndex)
		}
		if r.ExpiredLogEventEndIndex != nil {
			expired = int(*r.ExpiredLogEventEndIndex)
		}
		c.report.Rejected(k.group, k.stream, tooNew, tooOld, expired)
	}
	return nil
}

// ensure creates the stream, and the group first when the stream cannot be
// created because the group is missing. Either already existing is fine
// (another collector may have raced us to it).
func (c *CloudWatchLogs) ensure(ctx context.Context, k streamKey) error {
	_, err := c.api.CreateLogStream(ctx, &cloudwatchlogs.CreateLogStreamInput{LogGroupName: aws.String(k.group), LogStreamName: aws.String(k.stream)})
	if errorCode(err) == "ResourceNotFoundException" {
		_, err = c.api.CreateLogGroup(ctx, &cloudwatchlogs.CreateLogGroupInput{LogGroupName: aws.String(k.group)})
		if err != nil && errorCode(err) != "ResourceAlreadyExistsException" {
			return fmt.Errorf("creating log group: %w", classify(err))
		}
		if c.retentionDays > 0 {
			if _, err := c.api.PutRetentionPolicy(ctx, &cloudwatchlogs.PutRetentionPolicyInput{LogGroupName: aws.String(k.group), RetentionInDays: aws.Int32(c.retentionDays)}); err != nil {
				// The group exists and takes events; a retention policy that
				// failed to apply is worth a report, not a lost batch.
				c.report.Failed(k.group, "", fmt.Errorf("setting retention of %d days: %w", c.retentionDays, err), true)
			}
		}
		_, err = c.api.CreateLogStream(ctx, &cloudwatchlogs.CreateLogStreamInput{LogGroupName: aws.String(k.group), LogStreamName: aws.String(k.stream)})
	}
	if err != nil && errorCode(err) != "ResourceAlreadyExistsException" {
		return fmt.Errorf("creating log stream: %w", classify(err))
	}
	return nil
}

func errorCode(err error) string {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode()
	}
	return ""
}

// classify marks the errors retrying cannot fix as permanent. Throttling,
// 5xx, network errors and credential or permission problems (which an
// operator can fix while the queue holds the data) stay retryable.
func classify(err error) error {
	switch errorCode(err) {
	case "InvalidParameterException", "ValidationException", "SerializationException":
		return consumererror.NewPermanent(err)
	}
	var re *smithyhttp.ResponseError
	if errors.As(err, &re) && re.HTTPStatusCode() == http.StatusRequestEntityTooLarge {
		return consumererror.NewPermanent(err)
	}
	return err
}
