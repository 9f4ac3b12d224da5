package emf

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-accel/otelcol-accel/internal/emfvalidate"
)

// FuzzEncode feeds arbitrary OTLP metrics (as the collector receives them
// from outside) to the encoder: whatever comes in, every event must be valid
// EMF within the size limit, and every point must be either encoded or
// reported.
func FuzzEncode(f *testing.F) {
	for _, md := range []pmetric.Metrics{fleetMetrics(), wideHistogram(230)} {
		b, err := (&pmetric.ProtoMarshaler{}).MarshalMetrics(md)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint16(0))
		f.Add(b, uint16(600))
	}
	f.Fuzz(func(t *testing.T, data []byte, size uint16) {
		md, err := (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(data)
		if err != nil {
			return
		}
		opts := projectOptions()
		opts.MaxEventBytes = 4096 + int(size)*16
		enc := NewEncoder(opts)
		var total Stats
		for i := 0; i < md.ResourceMetrics().Len(); i++ {
			total.Add(enc.EncodeResource(md.ResourceMetrics().At(i), testTime, func(_ int64, msg []byte) {
				if _, err := emfvalidate.Event(msg, opts.MaxEventBytes); err != nil {
					t.Fatalf("invalid EMF event: %v\n%s", err, msg)
				}
			}, nil))
		}
		if total.Points != md.DataPointCount() {
			t.Fatalf("read %d of %d points", total.Points, md.DataPointCount())
		}
	})
}
