package kernellog

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestConfigValidate(t *testing.T) {
	ok := []Config{
		DefaultConfig(),
		{Source: SourceKmsg},
		{Source: SourceKmsg, Path: "/host/dev/kmsg"},
		{Source: SourceJournal, Path: "/var/log/journal", Command: "/usr/bin/journalctl"},
		{Source: SourceFile, Path: "/var/log/kern.log"},
	}
	for _, c := range ok {
		assert.NoError(t, c.Validate("health.kernel_log"), "%+v", c)
	}
	for want, c := range map[string]Config{
		`health.kernel_log.source "dmesg": use kmsg`:                      {Source: "dmesg"},
		"health.kernel_log.path is required with source: file":            {Source: SourceFile},
		`health.kernel_log.path "kern.log" must be absolute`:              {Source: SourceFile, Path: "kern.log"},
		"health.kernel_log.command is only used with source: journal":     {Source: SourceKmsg, Command: "journalctl"},
		"health.kernel_log.path and .command are read only with a source": {Source: SourceNone, Path: "/dev/kmsg"},
		"health.kernel_log.dedup_window must not be negative":             {Source: SourceKmsg, DedupWindow: -1},
	} {
		err := c.Validate("health.kernel_log")
		if assert.Error(t, err, want) {
			assert.Contains(t, err.Error(), want)
		}
	}
}

func TestNewSource(t *testing.T) {
	assert.Equal(t, "kmsg", (&Config{Source: SourceKmsg}).NewSource(Clock{}).Kind())
	assert.Equal(t, "file", (&Config{Source: SourceFile, Path: "/x"}).NewSource(Clock{}).Kind())
	j := (&Config{Source: SourceJournal, Path: "/var/log/journal"}).NewSource(Clock{}).(*Journal)
	assert.Equal(t, []string{"--directory=/var/log/journal"}, j.Args)
	assert.Nil(t, (&Config{Source: SourceNone}).NewSource(Clock{}))
}
