package metricspage

import (
	"net/http/httptest"
	"testing"
)

func TestServeReusesBufferWithoutLeakingContent(t *testing.T) {
	var p Buffers
	bodies := []string{"a long first page\n", "short\n"}
	for _, body := range bodies {
		rec := httptest.NewRecorder()
		p.Serve(rec, "text/plain; version=0.0.4", func(b []byte) []byte { return append(b, body...) })
		if got := rec.Body.String(); got != body {
			t.Fatalf("body = %q, want %q", got, body)
		}
		if ct := rec.Header().Get("Content-Type"); ct != "text/plain; version=0.0.4" {
			t.Fatalf("Content-Type = %q", ct)
		}
	}
}
