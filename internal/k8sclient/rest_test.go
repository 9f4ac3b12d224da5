package k8sclient

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
)

func TestBurstFor(t *testing.T) {
	assert.Equal(t, 40, burstFor(20, 40), "set: kept")
	assert.Equal(t, 10, burstFor(5, 0), "client-go's default")
	assert.Equal(t, 10, burstFor(0.5, 0))
	assert.Equal(t, 26, burstFor(25.5, 0), "a second's requests")
}

// kube_api_qps without kube_api_burst is valid (Check lets it through), so
// the client must start with it; and the limit is the agent's: every API
// group's REST client waits on the same limiter.
func TestOneRateLimiter(t *testing.T) {
	c, err := NewClientForConfig(&rest.Config{Host: "http://127.0.0.1:1", QPS: 50})
	require.NoError(t, err, "kube_api_qps alone")
	core, err := c.rest(corev1.SchemeGroupVersion)
	require.NoError(t, err)
	apps, err := c.rest(appsv1.SchemeGroupVersion)
	require.NoError(t, err)
	require.NotNil(t, core.GetRateLimiter())
	assert.Same(t, core.GetRateLimiter(), apps.GetRateLimiter(), "one limiter for the core and apps groups")
	assert.Equal(t, float32(50), core.GetRateLimiter().QPS())
	assert.Equal(t, 50, c.config.Burst)
}
