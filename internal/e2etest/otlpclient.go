package e2etest

import (
	"context"
	"fmt"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// OTLPClient sends metrics and logs to a collector's OTLP/gRPC receiver, as
// an agent or an instrumented application would.
type OTLPClient struct {
	conn   *grpc.ClientConn
	client pmetricotlp.GRPCClient
	logs   plogotlp.GRPCClient
}

// DialOTLP connects to endpoint (host:port) without TLS.
func DialOTLP(endpoint string) (*OTLPClient, error) {
	conn, err := grpc.NewClient(endpoint,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(256<<20)))
	if err != nil {
		return nil, err
	}
	return &OTLPClient{conn: conn, client: pmetricotlp.NewGRPCClient(conn), logs: plogotlp.NewGRPCClient(conn)}, nil
}

// Send exports md and returns nil only if the receiver accepted all of it.
func (c *OTLPClient) Send(ctx context.Context, md pmetric.Metrics) error {
	resp, err := c.client.Export(ctx, pmetricotlp.NewExportRequestFromMetrics(md))
	if err != nil {
		return err
	}
	if ps := resp.PartialSuccess(); ps.RejectedDataPoints() > 0 {
		return fmt.Errorf("receiver rejected %d data points: %s", ps.RejectedDataPoints(), ps.ErrorMessage())
	}
	return nil
}

// SendLogs exports ld and returns nil only if the receiver accepted all of
// it.
func (c *OTLPClient) SendLogs(ctx context.Context, ld plog.Logs) error {
	resp, err := c.logs.Export(ctx, plogotlp.NewExportRequestFromLogs(ld))
	if err != nil {
		return err
	}
	if ps := resp.PartialSuccess(); ps.RejectedLogRecords() > 0 {
		return fmt.Errorf("receiver rejected %d log records: %s", ps.RejectedLogRecords(), ps.ErrorMessage())
	}
	return nil
}

// Close closes the connection.
func (c *OTLPClient) Close() error { return c.conn.Close() }
