package pricing

import (
	"crypto/sha256"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
)

// Load builds a table from the bundled rows (unless opts.WithoutBundled) and
// the given files, in order: a file's row overrides the same instance type
// and region from the bundled table or an earlier file.
func Load(files []string, opts Options) (*Table, error) {
	contents, err := readAll(files)
	if err != nil {
		return nil, err
	}
	return build(files, contents, opts)
}

func readAll(files []string) ([][]byte, error) {
	contents := make([][]byte, len(files))
	for i, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, &Error{File: f, Msg: fmt.Sprintf("cannot read the pricing file: %v", err)}
		}
		contents[i] = b
	}
	return contents, nil
}

func build(files []string, contents [][]byte, opts Options) (*Table, error) {
	var sources [][]parsedRow
	if !opts.WithoutBundled {
		rows, err := bundledRows()
		if err != nil {
			return nil, fmt.Errorf("the bundled price table is broken: %w", err)
		}
		sources = append(sources, rows)
	} else if len(files) == 0 {
		return nil, ErrNoFiles
	}
	for i, f := range files {
		rows, err := Parse(f, contents[i])
		if err != nil {
			return nil, err
		}
		sources = append(sources, rows)
	}
	return Build(opts, sources...)
}

// Watcher holds the current table and rebuilds it when the content of its
// files changes. Content, not modification time, decides: Kubernetes updates
// a mounted ConfigMap by swapping a symlink, which keeps old mtimes.
type Watcher struct {
	files []string
	opts  Options

	mu      sync.Mutex // serialises Poll
	digest  [sha256.Size]byte
	badSum  [sha256.Size]byte
	badErr  error
	current atomic.Pointer[Table]
}

// NewWatcher loads the table once; a broken file is an error here, so a
// collector with a malformed table refuses to start.
func NewWatcher(files []string, opts Options) (*Watcher, error) {
	w := &Watcher{files: append([]string(nil), files...), opts: opts}
	contents, err := readAll(files)
	if err != nil {
		return nil, err
	}
	t, err := build(files, contents, opts)
	if err != nil {
		return nil, err
	}
	w.digest = digest(files, contents)
	w.current.Store(t)
	return w, nil
}

// Table returns the current table; safe to call from any goroutine.
func (w *Watcher) Table() *Table { return w.current.Load() }

// Poll re-reads the files. It returns true when the table changed. When the
// new content is broken it returns the error (file and line) and keeps
// serving the last good table; the same broken content is not parsed twice.
func (w *Watcher) Poll() (bool, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.files) == 0 {
		return false, nil
	}
	contents, err := readAll(w.files)
	if err != nil {
		return false, err
	}
	sum := digest(w.files, contents)
	if sum == w.digest {
		return false, nil
	}
	if w.badErr != nil && sum == w.badSum {
		return false, w.badErr
	}
	t, err := build(w.files, contents, w.opts)
	if err != nil {
		w.badSum, w.badErr = sum, err
		return false, err
	}
	w.digest, w.badErr = sum, nil
	w.current.Store(t)
	return true, nil
}

func digest(files []string, contents [][]byte) [sha256.Size]byte {
	h := sha256.New()
	for i := range files {
		fmt.Fprintf(h, "%s\x00%d\x00", files[i], len(contents[i]))
		h.Write(contents[i])
	}
	var out [sha256.Size]byte
	copy(out[:], h.Sum(nil))
	return out
}
