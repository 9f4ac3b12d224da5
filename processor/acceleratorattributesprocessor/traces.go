package acceleratorattributesprocessor

import (
	"context"
	"net"
	"slices"

	"go.opentelemetry.io/collector/client"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/index"
)

// processTraces gives the spans of a pod that holds accelerators the
// identity of those devices (accelerator.hw.ids, accelerator.hw.parents,
// the partition), the pod's attributes and the node's, so that a slow
// request's trace leads to the device that served it. The pod is found as
// contrib's k8sattributes finds it: k8s.pod.uid, else namespace and name,
// else k8s.pod.ip, else the address of the connection the spans came on.
// Spans of pods that hold no accelerator are left exactly as they came:
// this processor says which device, not which pod.
func (p *attributesProcessor) processTraces(ctx context.Context, td ptrace.Traces) (ptrace.Traces, error) {
	ix := p.idx.Load()
	rss := td.ResourceSpans()
	var conn *index.Pod
	connLooked := false
	for i := 0; i < rss.Len(); i++ {
		attrs := rss.At(i).Resource().Attributes()
		pod, named := podOfSpans(ix, attrs)
		if pod == nil && !named {
			// Only a resource that names no pod at all is taken to be the
			// connection's: one that names a pod this node does not know
			// came through an agent or gateway that forwards for others.
			if !connLooked {
				conn, connLooked = connectionPod(ctx, ix), true
			}
			pod = conn
		}
		if pod == nil {
			continue
		}
		holdings := ix.Holdings(pod.Namespace, pod.Name)
		if len(holdings) == 0 {
			continue
		}
		insertAll(attrs, pod.Attrs)
		insertAll(attrs, ix.NodeAttrs)
		putHoldings(attrs, holdings)
	}
	return td, nil
}

// podOfSpans finds the pod a resource names; named says whether it names
// one at all (found or not).
func podOfSpans(ix *index.Index, attrs pcommon.Map) (pod *index.Pod, named bool) {
	if uid := strAttr(attrs, accelschema.AttrK8sPodUID); uid != "" {
		pod, _ = ix.PodByUID(uid)
		return pod, true
	}
	if ns, name := strAttr(attrs, accelschema.AttrK8sNamespaceName), strAttr(attrs, accelschema.AttrK8sPodName); ns != "" && name != "" {
		pod, _ = ix.PodByName(ns, name)
		return pod, true
	}
	if ip := strAttr(attrs, accelschema.AttrK8sPodIP); ip != "" {
		pod, _ = ix.PodByIP(ip)
		return pod, true
	}
	return nil, false
}

// connectionPod is the pod whose address the spans came from (the OTLP
// receiver keeps it in the client info).
func connectionPod(ctx context.Context, ix *index.Index) *index.Pod {
	ip := addrIP(client.FromContext(ctx).Addr)
	if ip == "" {
		return nil
	}
	pod, _ := ix.PodByIP(ip)
	return pod
}

func addrIP(a net.Addr) string {
	switch a := a.(type) {
	case nil:
		return ""
	case *net.TCPAddr:
		return a.IP.String()
	case *net.UDPAddr:
		return a.IP.String()
	case *net.IPAddr:
		return a.IP.String()
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}

// putHoldings writes the devices: the lists always, the partition type when
// every holding has the same one (none for whole devices), and the
// partition id when there is one holding.
func putHoldings(attrs pcommon.Map, hs []index.Holding) {
	ids := attrs.PutEmptySlice(accelschema.AttrAcceleratorHWIDs)
	ids.EnsureCapacity(len(hs))
	parents := attrs.PutEmptySlice(accelschema.AttrAcceleratorHWParent)
	seen := make(map[string]bool, len(hs))
	var sorted []string
	for _, h := range hs {
		ids.AppendEmpty().SetStr(h.HWID)
		if h.Parent != "" && !seen[h.Parent] {
			seen[h.Parent] = true
			sorted = append(sorted, h.Parent)
		}
	}
	slices.Sort(sorted)
	for _, s := range sorted {
		parents.AppendEmpty().SetStr(s)
	}
	if partType, uniform := uniformPartition(hs); uniform {
		attrs.PutStr(accelschema.AttrPartitionType, partType)
	} else {
		attrs.Remove(accelschema.AttrPartitionType)
	}
	if len(hs) == 1 && hs[0].PartitionID != "" {
		attrs.PutStr(accelschema.AttrPartitionID, hs[0].PartitionID)
	} else {
		attrs.Remove(accelschema.AttrPartitionID)
	}
}

func uniformPartition(hs []index.Holding) (string, bool) {
	t := hs[0].PartitionType
	for _, h := range hs[1:] {
		if h.PartitionType != t {
			return "", false
		}
	}
	if t == "" {
		t = accelschema.PartitionNone
	}
	return t, true
}
