package kube

import (
	"context"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// Bounds of the node label history: memory grows with nodes, never with
// time.
const (
	labelChangesPerNode = 20
	labelNodes          = 10_000
)

// LabelChange is one node label that changed: From is empty for a label
// added, To for a label removed.
type LabelChange struct {
	Time     time.Time
	Key      string
	From, To string
}

// NodeLabels watches the nodes (an informer: list and watch) and keeps the
// recent label changes of each, for the incident bundle's recent changes
// (a node relabelled by an operator or an upgrade just before a device
// failed is evidence). Only names and labels are kept of each node.
type NodeLabels struct {
	mu      sync.Mutex
	changes map[string][]LabelChange
	now     func() time.Time
	synced  cache.InformerSynced
}

// Synced reports whether the watch has listed the nodes (changes are seen
// from then on).
func (nl *NodeLabels) Synced() bool { return nl.synced() }

// WatchNodeLabels starts the informer; it stops with ctx. now stamps the
// changes (the time the watch saw them: a node says when it was created,
// not when a label changed).
func (c *Cluster) WatchNodeLabels(ctx context.Context, now func() time.Time) *NodeLabels {
	nl := &NodeLabels{changes: map[string][]LabelChange{}, now: now}
	f := informers.NewSharedInformerFactory(c.CS, 0)
	inf := f.Core().V1().Nodes().Informer()
	_ = inf.SetTransform(func(obj any) (any, error) {
		n, ok := obj.(*corev1.Node)
		if !ok {
			return obj, nil
		}
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: n.Labels, ResourceVersion: n.ResourceVersion}}, nil
	})
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(oldObj, newObj any) {
			o, ok1 := oldObj.(*corev1.Node)
			n, ok2 := newObj.(*corev1.Node)
			if ok1 && ok2 {
				nl.observe(n.Name, o.Labels, n.Labels)
			}
		},
		DeleteFunc: func(obj any) {
			if n, ok := obj.(*corev1.Node); ok {
				nl.mu.Lock()
				delete(nl.changes, n.Name)
				nl.mu.Unlock()
			}
		},
	})
	nl.synced = inf.HasSynced
	f.Start(ctx.Done())
	return nl
}

// observe records the difference between a node's old and new labels.
func (nl *NodeLabels) observe(node string, from, to map[string]string) {
	var diff []LabelChange
	at := nl.now()
	for k, v := range to {
		if old, ok := from[k]; !ok || old != v {
			diff = append(diff, LabelChange{Time: at, Key: k, From: old, To: v})
		}
	}
	for k, v := range from {
		if _, ok := to[k]; !ok {
			diff = append(diff, LabelChange{Time: at, Key: k, From: v})
		}
	}
	if len(diff) == 0 {
		return
	}
	sort.Slice(diff, func(i, j int) bool { return diff[i].Key < diff[j].Key })
	nl.mu.Lock()
	defer nl.mu.Unlock()
	if _, ok := nl.changes[node]; !ok && len(nl.changes) >= labelNodes {
		for k := range nl.changes { // drop any one: bounded, not ordered
			delete(nl.changes, k)
			break
		}
	}
	cs := append(nl.changes[node], diff...)
	if len(cs) > labelChangesPerNode {
		cs = cs[len(cs)-labelChangesPerNode:]
	}
	nl.changes[node] = cs
}

// Since returns the node's label changes seen at or after since, oldest
// first.
func (nl *NodeLabels) Since(node string, since time.Time) []LabelChange {
	if nl == nil {
		return nil
	}
	nl.mu.Lock()
	defer nl.mu.Unlock()
	var out []LabelChange
	for _, c := range nl.changes[node] {
		if !c.Time.Before(since) {
			out = append(out, c)
		}
	}
	return out
}
