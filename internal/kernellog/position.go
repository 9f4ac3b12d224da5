package kernellog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/collector/extension/xextension/storage"
)

// Position is where a source has read to: what a restart resumes after.
type Position struct {
	// Source is the kind that wrote it (kmsg, journal, file); a position of
	// another kind is not used.
	Source string `json:"source"`
	// kmsg: the boot (its sequence numbers start over at every boot) and the
	// last sequence number read.
	BootID string `json:"boot_id,omitempty"`
	Seq    uint64 `json:"seq,omitempty"`
	// journal: the cursor of the last entry read.
	Cursor string `json:"cursor,omitempty"`
	// file: which file (inode) and the offset after the last whole line.
	Path   string `json:"path,omitempty"`
	Inode  uint64 `json:"inode,omitempty"`
	Offset int64  `json:"offset,omitempty"`
}

// Line is one kernel message as a source read it.
type Line struct {
	// Time is when the kernel wrote it; zero when the source gives no time.
	Time time.Time
	// Text is the message, without the source's time stamp and prefix.
	Text string
	// Pos is the position after this line.
	Pos Position
	// Where names the line for errors: "/dev/kmsg seq 1234",
	// "/var/log/kern.log:120".
	Where string
}

// Checkpoint keeps a source's position across restarts.
type Checkpoint interface {
	// Load returns the saved position; ok is false when none was saved.
	Load(ctx context.Context) (p Position, ok bool, err error)
	Save(ctx context.Context, p Position) error
}

// StorageCheckpoint keeps the position under key in a storage extension's
// client (file_storage in the agent's configuration).
func StorageCheckpoint(c storage.Client, key string) Checkpoint {
	return &storageCheckpoint{client: c, key: key}
}

type storageCheckpoint struct {
	client storage.Client
	key    string
}

func (s *storageCheckpoint) Load(ctx context.Context) (Position, bool, error) {
	b, err := s.client.Get(ctx, s.key)
	if err != nil || b == nil {
		return Position{}, false, err
	}
	var p Position
	if err := json.Unmarshal(b, &p); err != nil {
		return Position{}, false, fmt.Errorf("kernel log position %q is not readable (%w); reading from the start", s.key, err)
	}
	return p, true, nil
}

func (s *storageCheckpoint) Save(ctx context.Context, p Position) error {
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	return s.client.Set(ctx, s.key, b)
}

// MemoryCheckpoint keeps the position for as long as the process runs: a
// receiver restarted inside one collector (a config reload) resumes, a
// restarted collector reads again from the start.
func MemoryCheckpoint() Checkpoint { return &memoryCheckpoint{} }

type memoryCheckpoint struct {
	mu  sync.Mutex
	p   Position
	set bool
}

func (m *memoryCheckpoint) Load(context.Context) (Position, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.p, m.set, nil
}

func (m *memoryCheckpoint) Save(_ context.Context, p Position) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.p, m.set = p, true
	return nil
}

// errNoCheckpoint is returned by Run when it has none.
var errNoCheckpoint = errors.New("kernellog: Settings.Checkpoint is nil")
