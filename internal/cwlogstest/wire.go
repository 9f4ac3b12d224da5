package cwlogstest

import (
	"encoding/json"
	"net/http"
)

// decode reads a request body into v; a body that does not fit is the
// client's bug, so it is a violation as well as CloudWatch's 400.
func (s *Server) decode(w http.ResponseWriter, op string, body []byte, v any) bool {
	if err := json.Unmarshal(body, v); err != nil {
		s.violate("%s: body is not the expected JSON: %v", op, err)
		writeError(w, Fault{Status: 400, Type: "SerializationException", Message: err.Error()})
		return false
	}
	return true
}

func writeError(w http.ResponseWriter, f Fault) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.Header().Set("X-Amzn-Requestid", "00000000-0000-0000-0000-000000000000")
	w.WriteHeader(f.Status)
	b, _ := json.Marshal(map[string]string{"__type": f.Type, "message": f.Message})
	_, _ = w.Write(b)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.Header().Set("X-Amzn-Requestid", "00000000-0000-0000-0000-000000000000")
	b, _ := json.Marshal(v)
	_, _ = w.Write(b)
}
