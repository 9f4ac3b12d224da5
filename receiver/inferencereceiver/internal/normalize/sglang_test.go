package normalize

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

// The same family name is a percentage in SGLang's old exposition (model in
// name=) and a ratio in the current one (model in model_name=).
func TestSGLangHitRateUnitFollowsModelLabel(t *testing.T) {
	tests := map[string]struct {
		text      string
		wantModel string
		want      float64
	}{
		"old, percent": {text: `sglang:cache_hit_rate{name="m"} 10.61`, wantModel: "m", want: 0.1061},
		"old, whole":   {text: `sglang:cache_hit_rate{name="m"} 100.0`, wantModel: "m", want: 1},
		"current":      {text: `sglang:cache_hit_rate{model_name="m",tp_rank="0"} 0.1061`, wantModel: "m", want: 0.1061},
		"both labels":  {text: `sglang:cache_hit_rate{model_name="m",name="x"} 0.25`, wantModel: "m", want: 0.25},
		"no label":     {text: `sglang:cache_hit_rate 0.25`, wantModel: "default", want: 0.25},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			r := Normalize(SGLang, parse(t, tt.text+"\n"), "default")
			require.Empty(t, r.Errors)
			p := find(t, r, accelschema.MetricPrefixCacheHitRatio, "")
			require.Len(t, p, 1)
			assert.Equal(t, tt.wantModel, p[0].Model)
			assert.InDelta(t, tt.want, p[0].Value, 1e-15)
		})
	}
}

// Old SGLang's model label is the model, not a source: the old names map
// onto the same outputs as the current ones.
func TestSGLangLegacyNames(t *testing.T) {
	r := Normalize(SGLang, parse(t, `sglang:num_requests_running{name="m"} 12.0
sglang:num_requests_waiting{name="m"} 3.0
sglang:queue_req{name="m"} 4.0
sglang:token_usage{name="m"} 0.42
sglang:prompt_tokens_total{name="m"} 900.0
`), "")
	require.Empty(t, r.Errors)
	assert.Equal(t, 5, r.Matched)
	for _, p := range r.Points {
		assert.Equal(t, "m", p.Model, p.Metric)
		assert.Empty(t, p.Source, p.Metric)
	}
	running := find(t, r, accelschema.MetricRequestsRunning, "")
	require.Len(t, running, 1)
	assert.Equal(t, 12.0, running[0].Value)
	waiting := find(t, r, accelschema.MetricRequestsWaiting, "")
	require.Len(t, waiting, 1)
	assert.Equal(t, 4.0, waiting[0].Value, "queue_req, not num_requests_waiting")
	assert.Equal(t, 0.42, find(t, r, accelschema.MetricKVCacheUtilization, "")[0].Value)
	assert.Equal(t, 900.0, find(t, r, accelschema.MetricTokens, accelschema.TokenInput)[0].Value)

	r = Normalize(SGLang, parse(t, `sglang:num_requests_waiting{name="m"} 3.0`+"\n"), "")
	waiting = find(t, r, accelschema.MetricRequestsWaiting, "")
	require.Len(t, waiting, 1)
	assert.Equal(t, 3.0, waiting[0].Value, "num_requests_waiting without queue_req")
}

// The last prefill batch's token gauges are not token counts and feed
// nothing; old names are not read from samples of the current exposition.
func TestSGLangLegacyOnlyWhereItBelongs(t *testing.T) {
	r := Normalize(SGLang, parse(t, `sglang:new_token{name="m"} 1536.0
sglang:cached_token{name="m"} 512.0
sglang:new_seq{name="m"} 2.0
sglang:queue_req{model_name="m"} 4.0
sglang:num_requests_running{model_name="m"} 12.0
sglang:num_queue_reqs{name="m"} 7.0
`), "")
	assert.Zero(t, r.Matched)
	assert.Empty(t, r.Points)
}
