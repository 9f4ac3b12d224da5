package kubeapi

import (
	"net/http"
	"slices"
	"strings"
)

// target is what a write request's path names.
type target struct {
	rt          *resourceType
	ns, name    string
	subresource string
}

// route parses /api/v1/[namespaces/NS/]PLURAL[/NAME[/SUB]] and
// /apis/GROUP/VERSION/..., the paths client-go writes to.
func (s *Server) route(r *http.Request) (target, bool) {
	segs := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	var group, ver string
	var rest []string
	switch {
	case len(segs) >= 3 && segs[0] == "api":
		group, ver, rest = "", segs[1], segs[2:]
	case len(segs) >= 4 && segs[0] == "apis":
		group, ver, rest = segs[1], segs[2], segs[3:]
	default:
		return target{}, false
	}
	var t target
	if len(rest) >= 3 && rest[0] == "namespaces" {
		t.ns, rest = rest[1], rest[2:]
	}
	switch len(rest) {
	case 3:
		t.subresource = rest[2]
		fallthrough
	case 2:
		t.name = rest[1]
		fallthrough
	case 1:
		t.rt = s.lookup(group, ver, rest[0])
	default:
		return target{}, false
	}
	if t.rt == nil || (t.ns != "") != t.rt.namespaced {
		// A namespace's own path is /api/v1/namespaces/NAME: not nested.
		if t.rt != nil || group != "" || len(segs) < 4 || segs[2] != "namespaces" {
			return target{}, false
		}
		t = target{rt: s.lookup("", "v1", "namespaces"), name: segs[3]}
		if len(segs) == 5 {
			t.subresource = segs[4]
		}
	}
	if t.subresource != "" && !slices.Contains(subresources(t.rt), t.subresource) {
		return target{}, false
	}
	return t, true
}
