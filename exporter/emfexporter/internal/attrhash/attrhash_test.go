package attrhash

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

func TestMapHashIgnoresOrderButNotContent(t *testing.T) {
	a, b, c := pcommon.NewMap(), pcommon.NewMap(), pcommon.NewMap()
	a.PutStr("hw.id", "GPU-1")
	a.PutStr("k8s.pod.name", "p")
	b.PutStr("k8s.pod.name", "p")
	b.PutStr("hw.id", "GPU-1")
	c.PutStr("hw.id", "GPU-2")
	c.PutStr("k8s.pod.name", "p")
	assert.Equal(t, Map(a), Map(b))
	assert.NotEqual(t, Map(a), Map(c))
	assert.Zero(t, Map(pcommon.NewMap()))
	// Key/value boundaries matter: {"ab": "c"} is not {"a": "bc"}.
	d, e := pcommon.NewMap(), pcommon.NewMap()
	d.PutStr("ab", "c")
	e.PutStr("a", "bc")
	assert.NotEqual(t, Map(d), Map(e))
}
