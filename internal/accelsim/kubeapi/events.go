package kubeapi

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
)

// Core v1 Events, with the field selectors the real API server supports
// for them (pkg/registry/core/event/strategy.go), so that the
// accelerator_k8s receiver's watch of pod events (involvedObject.kind=Pod)
// is served as a real server serves it. Tests and scenarios Apply events
// with the timestamps they want measured.
var eventType = &resourceType{group: "", version: "v1", plural: "events", singular: "event", kind: "Event", namespaced: true,
	zero: func() runtime.Object { return &corev1.Event{} },
	fieldsOf: func(o runtime.Object) fields.Set {
		e := o.(*corev1.Event)
		f := objectFields(o)
		f["involvedObject.kind"] = e.InvolvedObject.Kind
		f["involvedObject.namespace"] = e.InvolvedObject.Namespace
		f["involvedObject.name"] = e.InvolvedObject.Name
		f["involvedObject.uid"] = string(e.InvolvedObject.UID)
		f["involvedObject.apiVersion"] = e.InvolvedObject.APIVersion
		f["involvedObject.resourceVersion"] = e.InvolvedObject.ResourceVersion
		f["involvedObject.fieldPath"] = e.InvolvedObject.FieldPath
		f["reason"] = e.Reason
		f["reportingComponent"] = e.ReportingController
		f["source"] = e.Source.Component
		f["type"] = e.Type
		return f
	}}

func init() { resourceTypes = append(resourceTypes, eventType) }
