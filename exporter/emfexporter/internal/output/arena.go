package output

import "sync"

// arenaChunk is the size of one of an Arena's chunks: a few hundred EMF
// events of real agent output (about 1.5 kB each).
const arenaChunk = 256 << 10

// Arena holds the messages of one request's events. A gateway encodes about
// a kilobyte of EMF a point, and a message allocated per event was most of
// what the exporter left to the garbage collector; the messages of a
// request are needed only until Send returns (the sinks copy them into
// request bodies or files), so they are copied into chunks that the next
// request reuses.
type Arena struct {
	chunks [][]byte
	cur    int
}

var arenaPool = sync.Pool{New: func() any { return new(Arena) }}

// GetArena returns an empty arena from the pool.
func GetArena() *Arena { return arenaPool.Get().(*Arena) }

// Release empties a and returns it to the pool. Nothing copied into it may
// be used afterwards.
func (a *Arena) Release() {
	a.reset()
	arenaPool.Put(a)
}

// reset empties a, keeping its chunks.
func (a *Arena) reset() {
	for i := range a.chunks {
		a.chunks[i] = a.chunks[i][:0]
	}
	a.cur = 0
}

// Copy returns a copy of msg that lives in the arena.
func (a *Arena) Copy(msg []byte) []byte {
	if len(msg) > arenaChunk/4 {
		// A rare large event (a histogram of many values) gets its own
		// allocation rather than wasting most of a chunk.
		return append([]byte(nil), msg...)
	}
	for ; a.cur < len(a.chunks); a.cur++ {
		c := a.chunks[a.cur]
		if cap(c)-len(c) >= len(msg) {
			n := len(c)
			c = append(c, msg...)
			a.chunks[a.cur] = c
			return c[n:len(c):len(c)]
		}
	}
	c := append(make([]byte, 0, arenaChunk), msg...)
	a.chunks = append(a.chunks, c)
	return c[:len(msg):len(msg)]
}
