package lifecycle

import (
	"slices"
	"strconv"
	"strings"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
)

// Autoscaler is what an HPA (autoscaling/v2) says of the workload it
// scales: its last decision and why it may not act on it.
type Autoscaler struct {
	Namespace, Name string
	// Target is the workload scaled: kind and name in Namespace.
	TargetKind, TargetName string
	Desired, Current       int32
	Min, Max               int32
	// LastScale is status.lastScaleTime: when the HPA last changed the
	// target's replicas (zero when it never did).
	LastScale time.Time
	// Conditions as "Type=Status(Reason)", sorted: AbleToScale,
	// ScalingActive, ScalingLimited.
	Conditions []string
	// Limited is ScalingLimited True: the wanted count is held at
	// minReplicas or maxReplicas. Unable is AbleToScale or ScalingActive
	// False: the HPA cannot act now.
	Limited, Unable bool
}

// AutoscalerOf reads an HPA.
func AutoscalerOf(h *autoscalingv2.HorizontalPodAutoscaler) Autoscaler {
	a := Autoscaler{Namespace: h.Namespace, Name: h.Name, TargetKind: h.Spec.ScaleTargetRef.Kind, TargetName: h.Spec.ScaleTargetRef.Name,
		Desired: h.Status.DesiredReplicas, Current: h.Status.CurrentReplicas, Max: h.Spec.MaxReplicas, Min: 1}
	if h.Spec.MinReplicas != nil {
		a.Min = *h.Spec.MinReplicas
	}
	if h.Status.LastScaleTime != nil {
		a.LastScale = h.Status.LastScaleTime.Time
	}
	for _, c := range h.Status.Conditions {
		a.Conditions = append(a.Conditions, string(c.Type)+"="+string(c.Status)+"("+c.Reason+")")
		switch {
		case c.Type == autoscalingv2.ScalingLimited && c.Status == "True":
			a.Limited = true
		case (c.Type == autoscalingv2.AbleToScale || c.Type == autoscalingv2.ScalingActive) && c.Status == "False":
			a.Unable = true
		}
	}
	slices.Sort(a.Conditions)
	return a
}

// Summary is the conditions in one string, for a record.
func (a Autoscaler) Summary() string { return strings.Join(a.Conditions, " ") }

// Decision is what a record says changed: the wanted and current
// replicas, the last scale time and the conditions' statuses.
func (a Autoscaler) Decision() string {
	return a.TargetKind + "/" + a.TargetName + " " + strconv.Itoa(int(a.Current)) + "→" + strconv.Itoa(int(a.Desired)) + " " + a.LastScale.String() + " " + a.Summary()
}
