package manifests

import (
	"fmt"
	"net"
	"path"
	"slices"
	"strings"
)

// mergeConfigs layers collector configs the way the collector merges several
// --config files: maps merge key by key; anything else, lists included, is
// replaced by the later file.
func mergeConfigs(configs []map[string]any) map[string]any {
	out := map[string]any{}
	for _, c := range configs {
		mergeInto(out, c)
	}
	return out
}

func mergeInto(dst, src map[string]any) {
	for k, v := range src {
		sm, ok := v.(map[string]any)
		dm, ok2 := dst[k].(map[string]any)
		if ok && ok2 {
			mergeInto(dm, sm)
			continue
		}
		if ok {
			// Copy, so that a later merge does not change the source tree.
			cp := map[string]any{}
			mergeInto(cp, sm)
			v = cp
		}
		dst[k] = v
	}
}

// stack is a merged collector config with the container's environment.
type stack struct {
	cfg map[string]any
	env map[string]string
}

func (s stack) str(keys ...string) string {
	v, ok := lookupExact(s.cfg, keys...)
	if !ok {
		return ""
	}
	str, _ := v.(string)
	return resolve(str, s.env)
}

func (s stack) list(keys ...string) []string {
	v, _ := lookupExact(s.cfg, keys...)
	items, _ := v.([]any)
	out := make([]string, 0, len(items))
	for _, it := range items {
		if str, ok := it.(string); ok {
			out = append(out, str)
		}
	}
	return out
}

// pipelineExporters maps each exporter id to the pipelines it is in.
func (s stack) pipelineExporters() map[string][]string {
	out := map[string][]string{}
	pipelines, _ := lookupExact(s.cfg, "service", "pipelines")
	m, _ := pipelines.(map[string]any)
	for name := range m {
		for _, e := range s.list("service", "pipelines", name, "exporters") {
			out[e] = append(out[e], name)
		}
	}
	for _, p := range out {
		slices.Sort(p)
	}
	return out
}

// lookupExact walks a config tree along exact keys (component ids with
// their names, as the collector reads them).
func lookupExact(tree any, keys ...string) (any, bool) {
	cur := tree
	for _, k := range keys {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

func componentType(id string) string {
	t, _, _ := strings.Cut(id, "/")
	return t
}

func under(p, dir string) bool {
	p, dir = path.Clean(p), path.Clean(dir)
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// Exporters that hold nothing to lose: pull endpoints, printers, the
// insights console (a model, not data in transit) and the remediator
// (plans, kept in its storage).
var queuelessExporters = map[string]bool{"prometheus": true, "debug": true, "accelerator_insights": true, "accelerator_remediation": true}

// queueProblems: every exporter of a gateway's pipelines that sends data on
// keeps what it has accepted on the volume mounted at dir (a sending queue
// in a storage extension the service starts, or the remote-write exporter's
// write-ahead log), and so does every file_storage extension; an exporter
// without storage has exporterhelper's in-memory queue, which a restart
// empties.
func queueProblems(s stack, dir string) []string {
	var problems []string
	started := s.list("service", "extensions")
	for _, id := range started {
		if componentType(id) == "file_storage" {
			if d := s.str("extensions", id, "directory"); !under(d, dir) {
				problems = append(problems, fmt.Sprintf("extension %s keeps its files in %q, not on the volume at %s", id, d, dir))
			}
		}
	}
	for id, pipelines := range s.pipelineExporters() {
		typ := componentType(id)
		// State kept in a storage extension (the console's decisions, the
		// remediator's plans) must be in one the service starts.
		if st := s.str("exporters", id, "storage"); st != "" && !slices.Contains(started, st) {
			problems = append(problems, fmt.Sprintf("exporter %s (%v) keeps its state in %s, which service.extensions does not start", id, pipelines, st))
		}
		if queuelessExporters[typ] {
			continue
		}
		if typ == "prometheus_remote_write" {
			if d := s.str("exporters", id, "wal", "directory"); !under(d, dir) {
				problems = append(problems, fmt.Sprintf("exporter %s (%v) writes its write-ahead log to %q, not on the volume at %s", id, pipelines, d, dir))
			}
			continue
		}
		storage := s.str("exporters", id, "sending_queue", "storage")
		switch {
		case storage == "":
			problems = append(problems, fmt.Sprintf("exporter %s (%v) queues in memory (no sending_queue.storage): a restart loses what it holds", id, pipelines))
		case !slices.Contains(started, storage):
			problems = append(problems, fmt.Sprintf("exporter %s (%v) queues in %s, which service.extensions does not start", id, pipelines, storage))
		case componentType(storage) != "file_storage":
			problems = append(problems, fmt.Sprintf("exporter %s (%v) queues in %s, not a file_storage", id, pipelines, storage))
		}
	}
	slices.Sort(problems)
	return problems
}

// isLoopback: a listen address only this pod's own network namespace reaches.
func isLoopback(endpoint string) bool {
	host, _, err := net.SplitHostPort(endpoint)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
