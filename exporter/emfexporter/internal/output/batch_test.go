package output

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func ev(ts int64, size int, origin int) Event {
	return Event{Timestamp: ts, Message: bytes.Repeat([]byte("x"), size), Origin: origin}
}

func checkBatches(t *testing.T, in []Event, batches [][]Event) {
	t.Helper()
	total := 0
	for _, b := range batches {
		assert.NotEmpty(t, b)
		assert.LessOrEqual(t, len(b), MaxBatchEvents)
		size := 0
		for i, e := range b {
			size += len(e.Message) + PerEventOverhead
			if i > 0 {
				assert.LessOrEqual(t, b[i-1].Timestamp, e.Timestamp, "chronological")
			}
		}
		assert.LessOrEqual(t, size, MaxBatchBytes)
		assert.Less(t, b[len(b)-1].Timestamp-b[0].Timestamp, MaxBatchSpan.Milliseconds())
		total += len(b)
	}
	assert.Equal(t, len(in), total, "every event is in exactly one batch")
}

func TestBatchesKeepEveryLimit(t *testing.T) {
	var many []Event
	for i := 0; i < 25_000; i++ {
		many = append(many, ev(int64(25_000-i), 10, i)) // reverse order
	}
	b := Batches(many)
	checkBatches(t, many, b)
	assert.Len(t, b, 3)

	var big []Event
	for i := 0; i < 10; i++ {
		big = append(big, ev(int64(i), 300_000, i))
	}
	b = Batches(big)
	checkBatches(t, big, b)
	assert.Len(t, b, 4, "three 300 kB events fit 1 MiB, a fourth does not")

	full := []Event{ev(1, MaxEventBytes, 0), ev(2, 1, 1)}
	b = Batches(full)
	checkBatches(t, full, b)
	assert.Len(t, b, 2)

	day := time.Hour.Milliseconds() * 24
	spread := []Event{ev(0, 1, 0), ev(day-1, 1, 1), ev(day, 1, 2), ev(3*day, 1, 3)}
	b = Batches(spread)
	checkBatches(t, spread, b)
	assert.Len(t, b, 3)
}

func TestByStreamKeepsOrder(t *testing.T) {
	evs := []Event{{Group: "g", Stream: "b", Origin: 0}, {Group: "g", Stream: "a", Origin: 1}, {Group: "g", Stream: "b", Origin: 2}}
	order, m := byStream(evs)
	assert.Equal(t, []streamKey{{"g", "b"}, {"g", "a"}}, order)
	require.Len(t, m, 2)
	assert.Equal(t, []int{0, 2}, []int{m[0][0].Origin, m[0][1].Origin})
	assert.Equal(t, []int{1}, []int{m[1][0].Origin})
	assert.Len(t, m[1], 1)
}
