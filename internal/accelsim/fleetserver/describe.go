package fleetserver

import (
	"fmt"
	"strconv"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/catalog"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/endpoints"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/fleet"
)

// describeNode lists a node's devices, their holders and scheduled
// failures, and its pods, for endpoints.json.
func describeNode(n *fleet.Node) endpoints.Node {
	en := endpoints.Node{
		Name: n.Name, Kind: string(n.Kind), InstanceType: n.InstanceType, InstanceID: n.InstanceID,
		Region: n.Region, Zone: n.Zone, Inference: []endpoints.InferenceTarget{}, Devices: []endpoints.Device{}, Pods: []endpoints.Pod{},
	}
	holders := func(hs []fleet.Holder, deviceID func(fleet.Holder) string) []endpoints.Holder {
		var out []endpoints.Holder
		for _, h := range hs {
			eh := endpoints.Holder{Pod: h.Pod.Name, Namespace: h.Pod.Namespace, Container: h.Container.Name, DeviceID: deviceID(h)}
			if h.Claim != nil {
				eh.Claim = h.Claim.Namespace + "/" + h.Claim.Name
			}
			out = append(out, eh)
		}
		return out
	}
	failures := func(fs []fleet.Failure) []endpoints.Failure {
		var out []endpoints.Failure
		for _, f := range fs {
			out = append(out, endpoints.Failure{At: f.At.String(), XID: f.XID, RowRemap: f.RowRemap, ECC: f.ECC, Count: f.Count})
		}
		return out
	}
	if n.Kind == catalog.KindNVIDIA {
		for _, g := range n.GPUs {
			d := endpoints.Device{Index: g.Index, ID: g.UUID, Model: n.Model.Name, PCIBusID: g.PCIBusID, Failures: failures(g.Failures)}
			if n.DRA && !g.MIGEnabled() {
				d.DRADevice = g.DRAName()
			}
			d.Holders = holders(g.Holders, func(h fleet.Holder) string {
				switch {
				case h.Claim != nil:
					return g.DRAName()
				case h.Replica >= 0:
					return fleet.ReplicaRef{GPU: g, Replica: h.Replica}.ID()
				}
				return g.UUID
			})
			for _, mi := range g.MIG {
				md := endpoints.MIGDevice{GIID: mi.GIID, Profile: mi.Profile.Name, UUID: mi.UUID, Share: mi.Share}
				if n.DRA {
					md.DRADevice = mi.DRAName()
				}
				md.Holders = holders(mi.Holders, func(h fleet.Holder) string {
					if h.Claim != nil {
						return mi.DRAName()
					}
					return mi.UUID
				})
				d.MIG = append(d.MIG, md)
			}
			en.Devices = append(en.Devices, d)
		}
	} else {
		per := n.Shape.CoresPerDevice
		for _, nd := range n.NeuronDevices {
			d := endpoints.Device{Index: nd.Index, ID: fmt.Sprintf("neuron_device_%d", nd.Index), Model: n.Shape.DeviceType, Failures: failures(nd.Failures)}
			for _, p := range n.Pods {
				for _, c := range p.Containers {
					for _, whole := range c.NeuronDevs {
						if whole == nd.Index {
							d.Holders = append(d.Holders, endpoints.Holder{Pod: p.Name, Namespace: p.Namespace, Container: c.Name, DeviceID: strconv.Itoa(whole)})
						}
					}
					if containsInt(c.NeuronDevs, nd.Index) {
						continue
					}
					for _, core := range c.NeuronCores {
						if core/per == nd.Index {
							d.Holders = append(d.Holders, endpoints.Holder{Pod: p.Name, Namespace: p.Namespace, Container: c.Name, DeviceID: strconv.Itoa(core)})
						}
					}
				}
			}
			en.Devices = append(en.Devices, d)
		}
	}
	for _, p := range n.Pods {
		en.Pods = append(en.Pods, endpoints.Pod{
			Name: p.Name, Namespace: p.Namespace, UID: p.UID, Team: p.Team,
			Workload: p.Labels[fleet.LabelWorkload], WorkloadType: p.Labels[fleet.LabelWorkloadType], Profile: p.Workload.Profile,
		})
	}
	return en
}

func containsInt(list []int, v int) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
