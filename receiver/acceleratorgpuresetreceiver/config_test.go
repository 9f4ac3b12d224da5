package acceleratorgpuresetreceiver

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConfigValidate(t *testing.T) {
	ok := func() *Config {
		c := createDefaultConfig().(*Config)
		c.NodeName = "node-1"
		return c
	}
	require.NoError(t, ok().Validate())
	for name, tc := range map[string]struct {
		edit func(*Config)
		want string
	}{
		"no node":    {func(c *Config) { c.NodeName = "" }, "node_name is empty"},
		"no command": {func(c *Config) { c.Command = nil }, "command is empty"},
		"no uuid":    {func(c *Config) { c.Command = []string{"nvidia-smi", "-r"} }, "put {uuid} where the GPU's UUID goes"},
		"bad prefix": {func(c *Config) { c.AnnotationPrefix = "a/b" }, "annotation_prefix"},
		"no poll":    {func(c *Config) { c.PollInterval = 0 }, "poll_interval must be positive"},
		"no socket":  {func(c *Config) { c.PodResourcesSocket = "" }, "pod_resources_socket is empty"},
		"bad auth":   {func(c *Config) { c.AuthType = "password" }, "auth_type"},
	} {
		t.Run(name, func(t *testing.T) {
			c := ok()
			tc.edit(c)
			err := c.Validate()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}
