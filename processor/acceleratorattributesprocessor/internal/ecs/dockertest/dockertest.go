// Package dockertest serves the two Docker Engine API endpoints the ECS
// source reads (GET /containers/json with label filters, GET
// /containers/{id}/json) over HTTP on a unix socket, from JSON documents in
// Docker's own format.
package dockertest

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
)

// Server is a fake dockerd.
type Server struct {
	srv *httptest.Server

	mu       sync.Mutex
	list     []map[string]any
	inspect  map[string]json.RawMessage
	rawList  []byte // served as is when set (malformed-input tests)
	inspects int
}

// Start serves on socket.
func Start(socket string) (*Server, error) {
	lis, err := net.Listen("unix", socket)
	if err != nil {
		return nil, err
	}
	s := &Server{inspect: map[string]json.RawMessage{}}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.srv.Listener.Close()
	s.srv.Listener = lis
	s.srv.Start()
	return s, nil
}

// Close stops serving.
func (s *Server) Close() { s.srv.Close() }

// SetContainers sets what /containers/json lists (Docker's list format) and
// what /containers/{id}/json answers for each id (Docker's inspect format).
func (s *Server) SetContainers(list []map[string]any, inspect map[string]json.RawMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.list, s.inspect, s.rawList = list, inspect, nil
}

// SetRawList makes /containers/json answer body verbatim.
func (s *Server) SetRawList(body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rawList = body
}

// Inspects counts inspect requests served.
func (s *Server) Inspects() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inspects
}

var inspectPath = regexp.MustCompile(`^(?:/v[0-9.]+)?/containers/([^/]+)/json$`)
var listPath = regexp.MustCompile(`^(?:/v[0-9.]+)?/containers/json$`)

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Api-Version", "1.47")
	switch {
	case listPath.MatchString(r.URL.Path):
		if s.rawList != nil {
			_, _ = w.Write(s.rawList)
			return
		}
		_ = json.NewEncoder(w).Encode(filterByLabel(s.list, r.URL.Query().Get("filters")))
	case inspectPath.MatchString(r.URL.Path):
		s.inspects++
		id := inspectPath.FindStringSubmatch(r.URL.Path)[1]
		body, ok := s.inspect[id]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"message":"No such container: ` + id + `"}`))
			return
		}
		_, _ = w.Write(body)
	default:
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"message":"page not found"}`))
	}
}

// filterByLabel applies the "label" filter the way dockerd does: every
// listed key (or key=value) must be present.
func filterByLabel(list []map[string]any, filters string) []map[string]any {
	var f map[string][]string
	if filters == "" || json.Unmarshal([]byte(filters), &f) != nil {
		return list
	}
	out := []map[string]any{}
	for _, c := range list {
		labels, _ := c["Labels"].(map[string]any)
		keep := true
		for _, want := range f["label"] {
			k, v, hasV := strings.Cut(want, "=")
			got, ok := labels[k]
			if !ok || hasV && got != v {
				keep = false
			}
		}
		if keep {
			out = append(out, c)
		}
	}
	return out
}
