// Package metricspage serves the simulator's rendered /metrics pages. Scrapes of a
// large node come every few seconds from several collectors, so the render
// buffers are pooled instead of allocated per request.
package metricspage

import (
	"net/http"
	"sync"
)

// Buffers is a pool of render buffers; the zero value is ready to use.
type Buffers struct {
	pool sync.Pool
}

// Serve renders a page into a pooled buffer and writes it with contentType.
func (p *Buffers) Serve(w http.ResponseWriter, contentType string, render func([]byte) []byte) {
	bp, _ := p.pool.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	b := render((*bp)[:0])
	w.Header().Set("Content-Type", contentType)
	_, _ = w.Write(b)
	*bp = b
	p.pool.Put(bp)
}
