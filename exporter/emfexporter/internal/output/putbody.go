package output

import (
	"bytes"
	"context"
	"strconv"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/otelcol-accel/otelcol-accel/exporter/emfexporter/internal/jsonw"
)

// The events are JSON documents already. The SDK's serializer would copy
// each into a string and escape it again rune by rune into a buffer that
// grows as it goes: a quarter of a gateway's CPU. putBody writes the
// PutLogEvents request of the JSON 1.1 protocol itself, escaping each
// message once with a byte loop into a pooled buffer sized for the batch;
// everything else about the call (endpoint resolution, credentials, SigV4
// signing, user agent, error decoding, the throttling and 5xx
// classification) stays the SDK's.

// bodyPool holds request bodies between calls. A batch is at most 1 MiB of
// messages, so a pooled buffer stays around that size.
var bodyPool = sync.Pool{New: func() any { return new([]byte) }}

// putBody appends the PutLogEvents request body for batch to b: the members
// the SDK writes, in its order (logEvents, logGroupName, logStreamName).
func putBody(b []byte, k streamKey, batch []Event) []byte {
	b = append(b, `{"logEvents":[`...)
	for i, e := range batch {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"message":`...)
		b = jsonw.Bytes(b, e.Message)
		b = append(b, `,"timestamp":`...)
		b = strconv.AppendInt(b, e.Timestamp, 10)
		b = append(b, '}')
	}
	b = append(b, `],"logGroupName":`...)
	b = jsonw.String(b, k.group)
	b = append(b, `,"logStreamName":`...)
	b = jsonw.String(b, k.stream)
	return append(b, '}')
}

// bodySize is room for batch's body: its messages with some escaping, and
// the members around them.
func bodySize(k streamKey, batch []Event) int {
	n := 64 + 2*(len(k.group)+len(k.stream))
	for _, e := range batch {
		n += len(e.Message) + len(e.Message)/4 + 48
	}
	return n
}

// rawPutLogEvents is the client's own protocol (awsJson 1.1) for one
// PutLogEvents call, except that the body is one written beforehand. The
// protocol still sets the method, path, X-Amz-Target and Content-Type, so
// the request is the SDK's in every other respect.
type rawPutLogEvents struct {
	smithyhttp.ClientProtocol
	body []byte
}

func (p rawPutLogEvents) SerializeRequest(ctx context.Context, op *smithy.OperationSchema, in smithy.Serializable, req *smithyhttp.Request) error {
	if err := p.ClientProtocol.SerializeRequest(ctx, op, in, req); err != nil {
		return err
	}
	r, err := req.SetStream(bytes.NewReader(p.body))
	if err != nil {
		return err
	}
	*req = *r
	return nil
}

// withBody makes a PutLogEvents call send body.
func withBody(body []byte) func(*cloudwatchlogs.Options) {
	return func(o *cloudwatchlogs.Options) {
		o.Protocol = rawPutLogEvents{ClientProtocol: o.Protocol, body: body}
	}
}
