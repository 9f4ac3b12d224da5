package accelschema

// Resource attributes the accelerator_attributes processor adds to the
// spans of a pod that holds accelerators, so that a slow request's trace
// leads to the devices that served it. A pod may hold several devices, so
// they are lists; their values are the hw.id values the devices' own
// metrics carry, which is what joins a trace to its device's series.
const (
	AttrAcceleratorHWIDs    = "accelerator.hw.ids"
	AttrAcceleratorHWParent = "accelerator.hw.parents"
	// AttrK8sPodIP is the pod address contrib's k8sattributes processor
	// reads and writes; spans that carry only it are still attributed.
	AttrK8sPodIP = "k8s.pod.ip"
)

// traceAttributes are registered with the others (init below) so that one
// registry documents every key; they live in their own file because only
// the traces pipeline sets them.
var traceAttributes = []AttributeDef{
	{AttrAcceleratorHWIDs, "string[]", ScopeResource, nil, false, "On spans of a pod that holds accelerators: the `hw.id` of each device or partition it holds (MIG instance, NeuronCore, shared GPU), sorted."},
	{AttrAcceleratorHWParent, "string[]", ScopeResource, nil, false, "On spans of a pod that holds accelerators: the `hw.id` of each physical device behind `accelerator.hw.ids`, sorted and without repeats."},
	{AttrK8sPodIP, "string", ScopeResource, nil, false, "Pod IP address (as contrib's k8sattributes processor names it); identifies the pod of a span that carries no pod UID or name."},
}

func init() {
	Attributes = append(Attributes, traceAttributes...)
}
