package kernellog

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"
)

// Source kinds of Config.Source.
const (
	SourceNone    = "none"
	SourceKmsg    = "kmsg"
	SourceJournal = "journal"
	SourceFile    = "file"
)

// Config is a receiver's `health.kernel_log`: the same keys in every
// receiver that reads the kernel log.
type Config struct {
	// Source is none (the default), kmsg, journal or file.
	Source string `mapstructure:"source"`
	// Path is, for kmsg, the device (/dev/kmsg); for file, the log to read
	// from its start and follow (required); for journal, the journal
	// directory passed to journalctl --directory (empty: the system's).
	Path string `mapstructure:"path"`
	// Command is journalctl (journal only).
	Command string `mapstructure:"command"`
	// Storage is the storage extension (file_storage) that keeps the
	// position across restarts; without one it is kept in memory only, and
	// a restarted collector reads the log again from its start.
	Storage *component.ID `mapstructure:"storage"`
	// DedupWindow is how far apart the kernel log's and another source's
	// reports of one XID on one GPU may be and still be one event.
	DedupWindow time.Duration `mapstructure:"dedup_window"`
	// MaxBacklog bounds the messages waiting for the pipeline.
	MaxBacklog int `mapstructure:"max_backlog"`
	// SysfsPath is where sysfs is mounted (/sys unless set): the PCI tree
	// that says which accelerators sit behind a port that reports a PCIe
	// error.
	SysfsPath string `mapstructure:"sysfs_path"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// DefaultConfig is off: reading the kernel log needs the host's /dev/kmsg
// (or journal, or log file) in the collector's container, which the
// distribution's agent configuration and DaemonSet set up.
func DefaultConfig() Config {
	return Config{Source: SourceNone, DedupWindow: 5 * time.Second, MaxBacklog: 4096}
}

// Enabled reports whether a source is configured.
func (c *Config) Enabled() bool { return c.Source != "" && c.Source != SourceNone }

// Validate checks the shape; whether the path can be read is for Start.
// prefix is where the keys are ("health.kernel_log").
func (c *Config) Validate(prefix string) error {
	var errs []error
	switch c.Source {
	case "", SourceNone:
		if c.Path != "" || c.Command != "" {
			errs = append(errs, fmt.Errorf("%s.path and .command are read only with a source; set %s.source: kmsg, journal or file", prefix, prefix))
		}
	case SourceKmsg:
		if c.Command != "" {
			errs = append(errs, fmt.Errorf("%s.command is only used with source: journal", prefix))
		}
	case SourceFile:
		if c.Path == "" {
			errs = append(errs, fmt.Errorf("%s.path is required with source: file: the kernel log to read from its start and follow (e.g. /var/log/kern.log, or a saved dmesg output)", prefix))
		}
		if c.Command != "" {
			errs = append(errs, fmt.Errorf("%s.command is only used with source: journal", prefix))
		}
	case SourceJournal:
	default:
		errs = append(errs, fmt.Errorf("%s.source %q: use kmsg (/dev/kmsg), journal (journalctl -k), file (a log file such as /var/log/kern.log) or none", prefix, c.Source))
	}
	if c.SysfsPath != "" && !filepath.IsAbs(c.SysfsPath) {
		errs = append(errs, fmt.Errorf("%s.sysfs_path %q must be absolute", prefix, c.SysfsPath))
	}
	if c.Path != "" && !filepath.IsAbs(c.Path) {
		errs = append(errs, fmt.Errorf("%s.path %q must be absolute (the collector's working directory is not the host's)", prefix, c.Path))
	}
	if c.DedupWindow < 0 {
		errs = append(errs, fmt.Errorf("%s.dedup_window must not be negative", prefix))
	}
	if c.MaxBacklog < 0 {
		errs = append(errs, fmt.Errorf("%s.max_backlog must not be negative", prefix))
	}
	return errors.Join(errs...)
}

// NewSource builds the configured source.
func (c *Config) NewSource(clock Clock) Source {
	switch c.Source {
	case SourceKmsg:
		return &Kmsg{Path: c.Path, Clock: clock}
	case SourceJournal:
		j := &Journal{Command: c.Command}
		if c.Path != "" {
			j.Args = []string{"--directory=" + c.Path}
		}
		return j
	case SourceFile:
		return &File{Path: c.Path, Clock: clock}
	}
	return nil
}

// Topology is the PCI tree under the configured sysfs.
func (c *Config) Topology() *PCITopology { return &PCITopology{SysPath: c.SysfsPath} }

// OpenCheckpoint opens the position's store: the configured storage
// extension's client for this component, or memory. close releases it.
func (c *Config) OpenCheckpoint(ctx context.Context, host component.Host, id component.ID) (cp Checkpoint, closeFn func(context.Context) error, err error) {
	if c.Storage == nil {
		return MemoryCheckpoint(), func(context.Context) error { return nil }, nil
	}
	ext, ok := host.GetExtensions()[*c.Storage]
	if !ok {
		return nil, nil, fmt.Errorf("health.kernel_log.storage: extension %q is not configured; add it under extensions: and service::extensions", c.Storage)
	}
	se, ok := ext.(storage.Extension)
	if !ok {
		return nil, nil, fmt.Errorf("health.kernel_log.storage: extension %q is not a storage extension (use file_storage)", c.Storage)
	}
	client, err := se.GetClient(ctx, component.KindReceiver, id, "kernel_log")
	if err != nil {
		return nil, nil, fmt.Errorf("health.kernel_log.storage: %w", err)
	}
	return StorageCheckpoint(client, "position"), client.Close, nil
}
