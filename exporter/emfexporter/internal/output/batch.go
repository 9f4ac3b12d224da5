package output

import (
	"slices"
	"time"
)

// PutLogEvents limits (CloudWatch Logs API reference).
const (
	MaxBatchEvents   = 10_000
	MaxBatchBytes    = 1_048_576
	PerEventOverhead = 26
	// MaxBatchSpan: the events of one batch must span less than 24 hours.
	MaxBatchSpan = 24 * time.Hour
	// MaxEventBytes is the largest message that fits a batch on its own.
	MaxEventBytes = MaxBatchBytes - PerEventOverhead
)

// streamKey identifies a log stream.
type streamKey struct{ group, stream string }

// byStream splits events by log group and stream, keeping first-seen order
// of the streams and of the events within each. The streams' lists are
// carved from one slice (a list grown per stream was the largest
// allocation of a gateway's Send).
func byStream(events []Event) ([]streamKey, [][]Event) {
	var order []streamKey
	index := map[streamKey]int{}
	var counts []int
	for _, e := range events {
		k := streamKey{e.Group, e.Stream}
		i, ok := index[k]
		if !ok {
			i = len(order)
			index[k] = i
			order = append(order, k)
			counts = append(counts, 0)
		}
		counts[i]++
	}
	all := make([]Event, len(events))
	out := make([][]Event, len(order))
	start := 0
	for i, n := range counts {
		out[i] = all[start : start : start+n]
		start += n
	}
	for _, e := range events {
		i := index[streamKey{e.Group, e.Stream}]
		out[i] = append(out[i], e)
	}
	return order, out
}

// Batches sorts the events of one stream by time (PutLogEvents rejects a
// batch out of chronological order) and cuts them into batches of at most
// 10,000 events and 1 MiB counting 26 bytes per event, each spanning less
// than 24 hours. Events are expected to be at most MaxEventBytes.
func Batches(events []Event) [][]Event {
	slices.SortStableFunc(events, func(a, b Event) int {
		switch {
		case a.Timestamp < b.Timestamp:
			return -1
		case a.Timestamp > b.Timestamp:
			return 1
		}
		return 0
	})
	var out [][]Event
	start, size := 0, 0
	span := MaxBatchSpan.Milliseconds()
	for i, e := range events {
		n := len(e.Message) + PerEventOverhead
		if i > start && (i-start == MaxBatchEvents || size+n > MaxBatchBytes || e.Timestamp-events[start].Timestamp >= span) {
			out = append(out, events[start:i])
			start, size = i, 0
		}
		size += n
	}
	if start < len(events) {
		out = append(out, events[start:])
	}
	return out
}
