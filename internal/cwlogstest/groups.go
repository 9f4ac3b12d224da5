package cwlogstest

import (
	"net/http"
	"regexp"
	"strings"
)

// CreateGroup makes a log group exist, as if created beforehand.
func (s *Server) CreateGroup(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.groups[name] = &logGroup{streams: map[string]bool{}}
}

// Retention returns a group's retention in days (0: none set) and whether
// the group exists.
func (s *Server) Retention(group string) (int32, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.groups[group]
	if !ok {
		return 0, false
	}
	return g.retention, true
}

var groupNameRE = regexp.MustCompile(`^[\.\-_/#A-Za-z0-9]{1,512}$`)

var (
	errNoGroup  = Fault{Status: 400, Type: "ResourceNotFoundException", Message: "The specified log group does not exist."}
	errNoStream = Fault{Status: 400, Type: "ResourceNotFoundException", Message: "The specified log stream does not exist."}
)

func (s *Server) createLogGroup(w http.ResponseWriter, body []byte) {
	var in struct{ LogGroupName string }
	if !s.decode(w, "CreateLogGroup", body, &in) {
		return
	}
	if _, ok := s.groups[in.LogGroupName]; ok {
		writeError(w, Fault{Status: 400, Type: "ResourceAlreadyExistsException", Message: "The specified log group already exists"})
		return
	}
	if !groupNameRE.MatchString(in.LogGroupName) {
		writeError(w, Fault{Status: 400, Type: "InvalidParameterException", Message: "1 validation error detected: Value at 'logGroupName' failed to satisfy constraint"})
		return
	}
	s.groups[in.LogGroupName] = &logGroup{streams: map[string]bool{}}
	writeJSON(w, map[string]any{})
}

func (s *Server) createLogStream(w http.ResponseWriter, body []byte) {
	var in struct{ LogGroupName, LogStreamName string }
	if !s.decode(w, "CreateLogStream", body, &in) {
		return
	}
	g, ok := s.groups[in.LogGroupName]
	if !ok {
		writeError(w, errNoGroup)
		return
	}
	if g.streams[in.LogStreamName] {
		writeError(w, Fault{Status: 400, Type: "ResourceAlreadyExistsException", Message: "The specified log stream already exists"})
		return
	}
	if in.LogStreamName == "" || len(in.LogStreamName) > 512 || strings.ContainsAny(in.LogStreamName, ":*") {
		writeError(w, Fault{Status: 400, Type: "InvalidParameterException", Message: "1 validation error detected: Value at 'logStreamName' failed to satisfy constraint"})
		return
	}
	g.streams[in.LogStreamName] = true
	writeJSON(w, map[string]any{})
}

func (s *Server) putRetentionPolicy(w http.ResponseWriter, body []byte) {
	var in struct {
		LogGroupName    string
		RetentionInDays int32
	}
	if !s.decode(w, "PutRetentionPolicy", body, &in) {
		return
	}
	g, ok := s.groups[in.LogGroupName]
	if !ok {
		writeError(w, errNoGroup)
		return
	}
	g.retention = in.RetentionInDays
	writeJSON(w, map[string]any{})
}
