package accelschema

import (
	"bytes"
	"fmt"
	"strings"
)

// Markdown renders docs/metrics.md from the registry.
func Markdown() []byte {
	var b bytes.Buffer
	b.WriteString("<!-- Generated from internal/accelschema by `make generate`; do not edit by hand. -->\n\n")
	b.WriteString("# Unified metric schema\n\n")
	b.WriteString("Every receiver in otelcol-accel emits these names whatever the vendor or source, so processors,\n")
	b.WriteString("dashboards and alerts never branch on vendor. Names follow OpenTelemetry semantic conventions where\n")
	b.WriteString("they exist (marked *semconv*) and use the `accelerator.*` namespace where they do not.\n")
	b.WriteString("Units are UCUM: `1` is a ratio 0..1, `By` bytes, `W` watts, `J` joules, `Cel` degrees Celsius, `s` seconds.\n\n")
	b.WriteString("One resource stands for one device or one partition of it (MIG instance, time-sliced or MPS share,\n")
	b.WriteString("DRA allocation, NeuronCore). Health events and cost findings are log records carrying the same resource.\n\n")
	writeCounting(&b)

	sections := []struct {
		title    string
		emitters []string
	}{
		{"Device metrics", []string{EmitterDCGM, EmitterNeuron}},
		{"Allocation metrics", []string{EmitterAttributes}},
		{"Inference metrics", []string{EmitterInference}},
		{"Cost metrics", []string{EmitterCost}},
		{"Workload reliability metrics (Kubernetes)", []string{EmitterK8s}},
	}
	for _, s := range sections {
		fmt.Fprintf(&b, "## %s\n\n", s.title)
		b.WriteString("| name | counted | instrument | unit | value | attributes | emitted by | description |\n")
		b.WriteString("|---|---|---|---|---|---|---|---|\n")
		for _, m := range Metrics {
			if !anyIn(m.Emitters, s.emitters) {
				continue
			}
			if s.title == "Device metrics" && anyIn(m.Emitters, []string{EmitterInference, EmitterCost}) {
				continue
			}
			name := "`" + m.Name + "`"
			if m.SemConv {
				name += " *semconv*"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | `%s` | %s | %s | %s | %s |\n",
				name, m.Counted, m.Instrument, m.Unit, m.ValueType, codeList(m.Attributes), strings.Join(m.Emitters, ", "), m.Brief)
		}
		b.WriteString("\n")
	}

	scopes := []struct {
		title string
		scope Scope
	}{
		{"Resource attributes", ScopeResource},
		{"Data point attributes", ScopeDataPoint},
		{"Log record attributes", ScopeLog},
	}
	for _, s := range scopes {
		fmt.Fprintf(&b, "## %s\n\n", s.title)
		b.WriteString("| key | type | values | description |\n|---|---|---|---|\n")
		for _, a := range Attributes {
			if a.Scope != s.scope {
				continue
			}
			key := "`" + a.Key + "`"
			if a.SemConv {
				key += " *semconv*"
			}
			values := ""
			if a.Enum != nil {
				values = "see [" + a.Enum.Name + "](#" + anchor(a.Enum.Name) + ")"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", key, a.Type, values, a.Brief)
		}
		b.WriteString("\n")
	}

	b.WriteString("## Enumerations\n\n")
	for _, e := range Enums() {
		fmt.Fprintf(&b, "### %s\n\n| value | meaning |\n|---|---|\n", e.Name)
		for _, v := range e.Values {
			fmt.Fprintf(&b, "| `%s` | %s |\n", v.Value, v.Brief)
		}
		b.WriteString("\n")
	}
	return b.Bytes()
}

// writeCounting states the counted-once rule and where per-pod numbers
// come from.
func writeCounting(b *bytes.Buffer) {
	b.WriteString("## Counted once\n\n")
	b.WriteString("Every physical quantity is counted once, so a plain `sum` over everything exported is right. The resources of\n")
	b.WriteString("one device form a tree: the physical device (no `hw.parent`), its partitions (MIG instances, NeuronCores;\n")
	b.WriteString("`hw.parent` names the device) and, on a shared device (time slicing, MPS, a shared DRA claim), one consumer\n")
	b.WriteString("copy per holder (`hw.parent` names the device). Each metric's **counted** column says where it lives:\n\n")
	b.WriteString("| counted | where the metric lives |\n|---|---|\n")
	for _, c := range Countings {
		fmt.Fprintf(b, "| %s | %s |\n", c.Counting, c.Brief)
	}
	b.WriteString("\nOn a shared device the device's own resource keeps every device-wide reading and stands for the share\n")
	b.WriteString("nobody holds; consumer copies carry the consumer's identity and share, and only what was measured for that\n")
	b.WriteString("consumer. Nothing is ever split by share. Per-pod usage on a shared device comes from:\n\n")
	b.WriteString("| metrics | source |\n|---|---|\n")
	for _, s := range PerPodSources {
		fmt.Fprintf(b, "| %s | %s |\n", codeList(s.Metrics), s.Source)
	}
	b.WriteString("\n")
	writeHolders(b)
}

// writeHolders states how the allocation series answers "who holds what"
// without moving a reading off its device.
func writeHolders(b *bytes.Buffer) {
	b.WriteString("### Who holds what\n\n")
	b.WriteString("`accelerator_attributes` emits `" + MetricAllocationShare + "` (counted per **" + string(CountedPerHolding) + "**) on every resource\n")
	b.WriteString("that stands for one holding: a device or partition one holder has whole, each consumer copy of a shared device\n")
	b.WriteString("(time slicing, MPS, a shared DRA claim), and whatever nobody or only a placeholder holds, with\n")
	b.WriteString("`" + AttrAllocationState + "` saying which. The value is the resource's `" + AttrPartitionShare + "`; the holder is\n")
	b.WriteString("in the resource (`k8s.*`, `" + AttrTeam + "`, `accelerator.workload.*`). A device whose partitions are reported\n")
	b.WriteString("(a MIG-enabled GPU, a Neuron device beside its NeuronCores) carries none: its partitions do. So, whatever else\n")
	b.WriteString("is in the pipeline:\n\n")
	b.WriteString("* `sum by (k8s_pod_name) (accelerator_allocation_share_ratio)` is the devices each pod holds (a pod with two\n")
	b.WriteString("  time-sliced replicas of one GPU out of four: 0.5);\n")
	b.WriteString("* `sum by (accelerator_allocation_state) (…)` is the devices held, free and reserved, and a plain `sum` the\n")
	b.WriteString("  devices attributed (the values of one physical device add up to at most 1).\n\n")
	b.WriteString("It adds a series, never a reading: a consumer copy carries its share and only what was measured for that\n")
	b.WriteString("consumer, and power, temperatures and the device's other readings stay on the device's own resource, counted\n")
	b.WriteString("once.\n\n")
}

func anyIn(have, want []string) bool {
	for _, h := range have {
		for _, w := range want {
			if h == w {
				return true
			}
		}
	}
	return false
}

func codeList(items []string) string {
	if len(items) == 0 {
		return ""
	}
	return "`" + strings.Join(items, "`, `") + "`"
}

// anchor mirrors how GitHub turns a heading into a link target.
func anchor(heading string) string {
	return strings.ReplaceAll(strings.ToLower(heading), ".", "")
}
