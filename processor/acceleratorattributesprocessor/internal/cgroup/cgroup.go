// Package cgroup finds which pod and container a process belongs to by
// reading /proc/<pid>/cgroup, so that per-process GPU data on a shared GPU
// can be given to the pod that produced it.
//
// It understands the path forms of cgroup v1 and v2, with the cgroupfs and
// systemd drivers, under containerd, CRI-O and Docker, and ECS:
//
//	0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid_with_underscores>.slice/cri-containerd-<id>.scope
//	11:memory:/kubepods/besteffort/pod<uid>/<id>
//	0::/kubepods/pod<uid>/<id>                     (Guaranteed QoS, cgroupfs)
//	0::/../../kubepods-pod<uid>.slice/crio-<id>.scope  (seen from inside a cgroup namespace)
//	9:cpuset:/ecs/<task id>/<id>                   (ECS on cgroup v1)
//	0::/system.slice/docker-<id>.scope             (Docker with systemd)
//
// The collector must see the host's processes: run it with hostPID, or mount
// the host's /proc and set proc_root to it.
package cgroup

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Owner is who a process belongs to. Either field may be empty.
type Owner struct {
	PodUID      string
	ContainerID string
}

// maxFileSize bounds what is read from one cgroup file; real ones have at
// most a few dozen short lines.
const maxFileSize = 64 << 10

// Parse reads the contents of a /proc/<pid>/cgroup file. It prefers the
// cgroup v2 line (0::) and otherwise takes the first v1 line that names a
// pod or a container.
func Parse(r io.Reader) (Owner, error) {
	sc := bufio.NewScanner(io.LimitReader(r, maxFileSize))
	sc.Buffer(make([]byte, 0, 4096), maxFileSize)
	var best Owner
	lineNo := 0
	for sc.Scan() {
		lineNo++
		line := sc.Bytes()
		if len(line) == 0 {
			continue
		}
		// hierarchy-ID:controller-list:cgroup-path
		first := bytes.IndexByte(line, ':')
		if first < 0 {
			return Owner{}, fmt.Errorf("line %d: %q is not hierarchy:controllers:path", lineNo, truncate(line))
		}
		second := bytes.IndexByte(line[first+1:], ':')
		if second < 0 {
			return Owner{}, fmt.Errorf("line %d: %q is not hierarchy:controllers:path", lineNo, truncate(line))
		}
		path := string(line[first+1+second+1:])
		o := ParsePath(path)
		isV2 := string(line[:first]) == "0" && second == 0
		if isV2 && (o.PodUID != "" || o.ContainerID != "") {
			return o, nil
		}
		if best.PodUID == "" && o.PodUID != "" || best == (Owner{}) && o.ContainerID != "" {
			best = o
		}
	}
	if err := sc.Err(); err != nil {
		return Owner{}, err
	}
	return best, nil
}

func truncate(b []byte) string {
	if len(b) > 80 {
		return string(b[:80]) + "…"
	}
	return string(b)
}

// ParsePath finds the pod UID and container id in one cgroup path.
func ParsePath(path string) Owner {
	var o Owner
	segs := strings.Split(path, "/")
	for _, seg := range segs {
		if uid, ok := podUIDIn(seg); ok {
			o.PodUID = uid
		}
	}
	if len(segs) > 0 {
		o.ContainerID = containerIDIn(segs[len(segs)-1])
	}
	return o
}

// podUIDIn finds "pod<uid>" in a segment such as "pod0d1e…" (cgroupfs) or
// "kubepods-burstable-pod0d1e_…​.slice" (systemd, dashes turned into underscores).
func podUIDIn(seg string) (string, bool) {
	seg = strings.TrimSuffix(seg, ".slice")
	i := strings.LastIndex(seg, "pod")
	if i < 0 {
		return "", false
	}
	if i > 0 && seg[i-1] != '-' {
		return "", false
	}
	uid := seg[i+3:]
	if len(uid) != 36 {
		return "", false
	}
	b := []byte(uid)
	for j, c := range b {
		switch j {
		case 8, 13, 18, 23:
			if c != '-' && c != '_' {
				return "", false
			}
			b[j] = '-'
		default:
			if !isHex(c) {
				return "", false
			}
		}
	}
	return string(b), true
}

// containerIDIn reads the 64-hex container id from the last path segment:
// "<id>", "cri-containerd-<id>.scope", "docker-<id>.scope", "crio-<id>.scope".
func containerIDIn(seg string) string {
	seg = strings.TrimSuffix(seg, ".scope")
	if i := strings.LastIndexByte(seg, '-'); i >= 0 {
		seg = seg[i+1:]
	}
	if len(seg) != 64 {
		return ""
	}
	for i := 0; i < len(seg); i++ {
		if !isHex(seg[i]) {
			return ""
		}
	}
	return seg
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f'
}

// Resolver maps pids to owners, reading <procRoot>/<pid>/cgroup once per pid
// and remembering the answer for ttl (pids are reused, slowly).
type Resolver struct {
	procRoot string
	ttl      time.Duration
	now      func() time.Time

	mu    sync.Mutex
	cache map[int64]cached
}

type cached struct {
	owner  Owner
	err    error
	readAt time.Time
}

// NewResolver reads from procRoot ("/proc", or "/host/proc" for a mounted host /proc).
func NewResolver(procRoot string, ttl time.Duration) *Resolver {
	return &Resolver{procRoot: procRoot, ttl: ttl, now: time.Now, cache: map[int64]cached{}}
}

// SetClock replaces the clock (tests).
func (r *Resolver) SetClock(now func() time.Time) { r.now = now }

// ErrNoProcess is returned for a pid that has no cgroup file (the process
// ended, or the collector does not see the host's pid namespace).
var ErrNoProcess = errors.New("no such process")

// Lookup returns the owner of pid.
func (r *Resolver) Lookup(pid int64) (Owner, error) {
	now := r.now()
	r.mu.Lock()
	c, ok := r.cache[pid]
	r.mu.Unlock()
	if ok && now.Sub(c.readAt) < r.ttl {
		return c.owner, c.err
	}
	owner, err := r.read(pid)
	r.mu.Lock()
	r.cache[pid] = cached{owner: owner, err: err, readAt: now}
	r.mu.Unlock()
	return owner, err
}

func (r *Resolver) read(pid int64) (Owner, error) {
	if pid <= 0 {
		return Owner{}, fmt.Errorf("pid %d: %w", pid, ErrNoProcess)
	}
	path := filepath.Join(r.procRoot, strconv.FormatInt(pid, 10), "cgroup")
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Owner{}, fmt.Errorf("%s: %w", path, ErrNoProcess)
	}
	if err != nil {
		return Owner{}, err
	}
	defer f.Close()
	o, err := Parse(f)
	if err != nil {
		return Owner{}, fmt.Errorf("%s: %w", path, err)
	}
	return o, nil
}

// Prune forgets answers older than the ttl, so the cache holds only pids
// seen recently.
func (r *Resolver) Prune() {
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	for pid, c := range r.cache {
		if now.Sub(c.readAt) >= r.ttl {
			delete(r.cache, pid)
		}
	}
}

// Len is the number of cached pids.
func (r *Resolver) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.cache)
}
