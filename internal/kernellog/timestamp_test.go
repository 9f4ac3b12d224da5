package kernellog

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestSplitPrefixFormats(t *testing.T) {
	boot := time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)
	c := Clock{Boot: boot, Now: func() time.Time { return time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC) }}
	const msg = "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus."
	tests := []struct {
		name, line string
		want       time.Time
	}{
		{"dmesg", "[ 1843.227921] " + msg, boot.Add(1843227921 * time.Microsecond)},
		{"dmesg -r", "<4>[ 1843.227921] " + msg, boot.Add(1843227921 * time.Microsecond)},
		{"dmesg -T", "[Tue Dec  1 23:42:25 2026] " + msg, time.Date(2026, 12, 1, 23, 42, 25, 0, time.UTC)},
		{"syslog", "Dec  1 23:42:25 gpu-node-1 kernel: [ 1843.227921] " + msg, time.Date(2026, 12, 1, 23, 42, 25, 0, time.UTC)},
		{"syslog without dmesg stamp", "Dec  1 23:42:25 gpu-node-1 kernel: " + msg, time.Date(2026, 12, 1, 23, 42, 25, 0, time.UTC)},
		{"syslog of last year", "Dec 31 23:59:59 gpu-node-1 kernel: " + msg, time.Date(2025, 12, 31, 23, 59, 59, 0, time.UTC)},
		{"rsyslog RFC 3339", "2026-12-01T23:42:25.123456+00:00 gpu-node-1 kernel: " + msg, time.Date(2026, 12, 1, 23, 42, 25, 123456000, time.UTC)},
		{"journalctl short-iso", "2026-12-01T23:42:25+0000 gpu-node-1 kernel: " + msg, time.Date(2026, 12, 1, 23, 42, 25, 0, time.UTC)},
		{"no stamp", msg, time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, rest := SplitPrefix(tt.line, c)
			assert.True(t, tt.want.Equal(got), "time %v, want %v", got, tt.want)
			assert.Equal(t, msg, rest)
		})
	}
}

func TestDmesgStampWithoutBootTime(t *testing.T) {
	got, rest := SplitPrefix("[ 12.5] NVRM: x", Clock{})
	assert.True(t, got.IsZero(), "no boot time: no time rather than a wrong one")
	assert.Equal(t, "NVRM: x", rest)
}
