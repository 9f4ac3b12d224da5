package e2etest

import "strings"

// ComponentStatuses returns the status of every instance of a component
// ("processor:accelerator_attributes", "receiver:neuron") in the verbose
// health document, one per pipeline it is in.
func (h HealthStatus) ComponentStatuses(component string) []HealthStatus {
	var out []HealthStatus
	for name, c := range h.Components {
		if name == component {
			out = append(out, c)
		}
		out = append(out, c.ComponentStatuses(component)...)
	}
	return out
}

// ComponentStatus reports the component's status if every pipeline agrees
// ("StatusOK", "StatusRecoverableError", …), joined with "|" if they do not,
// and "" if the component is not in the document.
func (h HealthStatus) ComponentStatus(component string) string {
	seen := map[string]bool{}
	var out []string
	for _, c := range h.ComponentStatuses(component) {
		if !seen[c.Status] {
			seen[c.Status] = true
			out = append(out, c.Status)
		}
	}
	return strings.Join(out, "|")
}
