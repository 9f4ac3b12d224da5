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
