package output

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestArenaCopiesStayIntactUntilRelease(t *testing.T) {
	a := &Arena{}
	var msgs, copies [][]byte
	// Enough to fill several chunks, and a few larger than a chunk's
	// quarter, which get their own allocation.
	for i := 0; i < 2000; i++ {
		size := 100 + i%1500
		if i%500 == 7 {
			size = arenaChunk
		}
		m := bytes.Repeat([]byte{byte('a' + i%26)}, size)
		msgs = append(msgs, m)
		c := a.Copy(m)
		copies = append(copies, c)
		// The source is the encoder's buffer, overwritten after each event.
		m2 := append([]byte(nil), m...)
		clear(m)
		msgs[i] = m2
	}
	for i := range copies {
		require.Equal(t, msgs[i], copies[i], "copy %d", i)
		assert.Equal(t, len(copies[i]), cap(copies[i]), "an append to a copy must not overwrite the next one")
	}
	chunks := len(a.chunks)
	require.Greater(t, chunks, 1)
	a.reset()

	// A released arena is reused from its first chunk and does not grow
	// for the same load.
	for i := 0; i < 2000; i++ {
		a.Copy(make([]byte, 100+i%1500))
	}
	assert.Equal(t, chunks, len(a.chunks))
}
