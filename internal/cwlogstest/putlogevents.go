package cwlogstest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/otelcol-accel/otelcol-accel/internal/emfvalidate"
)

// Limits of PutLogEvents.
const (
	maxBatchEvents   = 10_000
	maxBatchBytes    = 1_048_576
	perEventOverhead = 26
	maxSpan          = 24 * time.Hour
)

// Event is a log event of a PutLogEvents call.
type Event struct {
	Group, Stream string
	Timestamp     int64
	Message       string
	// EMF is set when the call carried x-amzn-logs-format: json/emf.
	EMF bool
}

type putLogEventsInput struct {
	LogGroupName  string `json:"logGroupName"`
	LogStreamName string `json:"logStreamName"`
	// Pointers, so that a missing member is told from a zero one.
	LogEvents []struct {
		Timestamp *int64  `json:"timestamp"`
		Message   *string `json:"message"`
	} `json:"logEvents"`
}

// events are the complete events of the call; checkBatch reports the rest.
func (in putLogEventsInput) events(r *http.Request) []Event {
	emf := isEMF(r)
	out := make([]Event, 0, len(in.LogEvents))
	for _, e := range in.LogEvents {
		if e.Timestamp == nil || e.Message == nil {
			continue
		}
		out = append(out, Event{Group: in.LogGroupName, Stream: in.LogStreamName, Timestamp: *e.Timestamp, Message: *e.Message, EMF: emf})
	}
	return out
}

func isEMF(r *http.Request) bool { return r.Header.Get("x-amzn-logs-format") == "json/emf" }

func (s *Server) putLogEvents(w http.ResponseWriter, r *http.Request, body []byte) {
	var in putLogEventsInput
	if !s.decode(w, "PutLogEvents", body, &in) {
		return
	}
	g, ok := s.groups[in.LogGroupName]
	if !ok {
		writeError(w, errNoGroup)
		return
	}
	if !g.streams[in.LogStreamName] {
		writeError(w, errNoStream)
		return
	}
	s.checkBatch(in, isEMF(r))
	evs := in.events(r)
	s.acceptedEvents += int64(len(evs))
	for _, e := range evs {
		s.acceptedBytes += int64(len(e.Message))
	}
	if !s.countOnly {
		s.events = append(s.events, evs...)
	}
	writeJSON(w, map[string]any{"nextSequenceToken": "49039859565436000000000000000000000000000000000000000000"})
}

// checkBatch applies PutLogEvents' limits: 1 to 10,000 events, each with a
// timestamp and a UTF-8 message, at most 1 MiB counting 26 bytes per event,
// in chronological order, spanning less than 24 hours. Unless CountOnly, it
// checks each message too.
func (s *Server) checkBatch(in putLogEventsInput, emf bool) {
	where := fmt.Sprintf("PutLogEvents %s/%s", in.LogGroupName, in.LogStreamName)
	if n := len(in.LogEvents); n == 0 || n > maxBatchEvents {
		s.violate("%s: %d events (want 1 to %d)", where, n, maxBatchEvents)
	}
	size, seen := 0, false
	var first, prev int64
	for i, e := range in.LogEvents {
		if e.Timestamp == nil || e.Message == nil {
			s.violate("%s: event %d lacks timestamp or message", where, i)
			continue
		}
		msg, ts := *e.Message, *e.Timestamp
		size += len(msg) + perEventOverhead
		if !seen {
			first, seen = ts, true
		} else if ts < prev {
			s.violate("%s: event %d at %d is before the event at %d: not chronological", where, i, ts, prev)
		}
		prev = ts
		if !utf8.ValidString(msg) {
			s.violate("%s: event %d is not valid UTF-8", where, i)
		}
		if !s.countOnly {
			s.checkMessage(where, i, msg, emf)
		}
	}
	if size > maxBatchBytes {
		s.violate("%s: batch is %d bytes counting %d per event, more than %d", where, size, perEventOverhead, maxBatchBytes)
	}
	if span := time.Duration(prev-first) * time.Millisecond; span >= maxSpan {
		s.violate("%s: batch spans %v, not less than 24h", where, span)
	}
}

// checkMessage holds an EMF event to the specification and any other event
// to being a JSON object, which is what the exporter promises to send.
func (s *Server) checkMessage(where string, i int, msg string, emf bool) {
	if emf {
		if _, err := emfvalidate.Event([]byte(msg), emfvalidate.MaxEventBytes); err != nil {
			s.violate("%s: event %d is not valid EMF: %v\n%s", where, i, err, abbreviate(msg))
		}
		return
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(msg), &obj); err != nil {
		s.violate("%s: event %d is not a JSON object: %v", where, i, err)
	}
}

func abbreviate(s string) string {
	if len(s) > 2000 {
		return s[:2000] + "…"
	}
	return s
}
