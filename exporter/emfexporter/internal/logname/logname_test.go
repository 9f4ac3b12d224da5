package logname

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

func TestRender(t *testing.T) {
	attrs := pcommon.NewMap()
	attrs.PutStr("k8s.cluster.name", "prod east")
	attrs.PutStr("aws.ecs.task.arn", "arn:aws:ecs:us-east-1:1:task/x")
	attrs.PutStr("empty", "")

	g, err := Parse("/accel/{k8s.cluster.name}/{k8s.node.name}", Group)
	require.NoError(t, err)
	assert.Equal(t, "/accel/prod_east/unknown", g.Render(attrs, "unknown"), "space is not allowed in a group; missing → fallback")

	s, err := Parse("{aws.ecs.task.arn}-{empty}", Stream)
	require.NoError(t, err)
	assert.Equal(t, "arn_aws_ecs_us-east-1_1_task/x-unknown", s.Render(attrs, "unknown"))

	static, err := Parse("/otelcol-accel/metrics", Group)
	require.NoError(t, err)
	assert.True(t, static.Static())
	assert.Equal(t, "/otelcol-accel/metrics", static.Render(attrs, "x"))

	attrs.PutStr("long", strings.Repeat("é", 400))
	l, err := Parse("{long}", Stream)
	require.NoError(t, err)
	assert.LessOrEqual(t, len(l.Render(attrs, "x")), 512)
}

func TestParseErrors(t *testing.T) {
	for in, want := range map[string]string{
		"":             "empty",
		"/a/{x":        "without '}'",
		"/a/x}":        "without '{'",
		"/a/{}":        "empty or nested",
		"/a b/{x}":     "not allowed",
		"/a/{x}/{y{z}": "nested",
	} {
		_, err := Parse(in, Group)
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), want, in)
	}
	_, err := Parse("node:{host.name}", Stream)
	assert.ErrorContains(t, err, "not allowed")
	assert.Error(t, ValidateFallback("un known"))
	assert.NoError(t, ValidateFallback("unknown"))
}
