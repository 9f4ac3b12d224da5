package e2etest

import (
	"context"
	"fmt"

	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// OTLPClient sends metrics to a collector's OTLP/gRPC receiver, as an agent
// or an instrumented application would.
type OTLPClient struct {
	conn   *grpc.ClientConn
	client pmetricotlp.GRPCClient
}

// DialOTLP connects to endpoint (host:port) without TLS.
func DialOTLP(endpoint string) (*OTLPClient, error) {
	conn, err := grpc.NewClient(endpoint,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(256<<20)))
	if err != nil {
		return nil, err
	}
	return &OTLPClient{conn: conn, client: pmetricotlp.NewGRPCClient(conn)}, nil
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

// Close closes the connection.
func (c *OTLPClient) Close() error { return c.conn.Close() }
