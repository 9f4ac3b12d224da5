package acceleratork8sreceiver

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDefaultConfigIsValid(t *testing.T) {
	require.NoError(t, createDefaultConfig().(*Config).Validate())
}

func TestValidateNamesWhatIsWrong(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.AuthType = "token"
	cfg.CollectionInterval = 0
	cfg.Resources = []string{"nvidia.com/*/x", "*"}
	cfg.Buckets = []float64{1, 5, 2}
	err := cfg.Validate()
	require.Error(t, err)
	for _, want := range []string{`auth_type "token"`, "collection_interval must be positive", `"nvidia.com/*/x"`, `"*"`, "buckets must be positive and increasing"} {
		assert.Contains(t, err.Error(), want)
	}
	cfg = createDefaultConfig().(*Config)
	cfg.Resources = nil
	assert.ErrorContains(t, cfg.Validate(), "resources is empty")
	cfg = createDefaultConfig().(*Config)
	cfg.CollectionInterval = time.Second
	assert.NoError(t, cfg.Validate())
}
