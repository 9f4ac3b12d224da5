// Package findingtext tells whether a finding's text — its body, action,
// evidence, or the line a reader prints for it — has a field left empty:
// "on :" where a node belongs, "key=" with no value, "()" or "(team )",
// two separators in a row. Runs of spaces are allowed: readers pad columns. Every component that writes findings checks its
// texts with it in tests (issue 29: findings read well), so one rule says
// what "empty" means.
package findingtext // import "github.com/otelcol-accel/otelcol-accel/internal/findingtext"

import (
	"regexp"
	"strings"
)

// emptyPatterns are the shapes an empty field leaves in a sentence.
var emptyPatterns = []struct {
	re   *regexp.Regexp
	what string
}{
	{regexp.MustCompile(`\b(on|of|for|in|from|to|at)\s*[:;,)\]]`), "a preposition with nothing after it"},
	{regexp.MustCompile(`\b(on|of|for|in|from|to|at)\s*$`), "a preposition with nothing after it"},
	{regexp.MustCompile(`\b(on|of|for|in|from|to|at) {2,}`), "a preposition with nothing after it"},
	{regexp.MustCompile(`(^|\s)[\w.\-]+=(\s|$|,|;)`), "a key= with no value"},
	{regexp.MustCompile(`\(\s*\)|\[\s*\]|\{\s*\}`), "empty brackets"},
	{regexp.MustCompile(`\((team|node|model|pod)\s*\)`), "a label with no value"},
	{regexp.MustCompile(`\s[:;,]`), "a separator after a space, where a word is missing"},
	{regexp.MustCompile(`[:;,]\s*[:;,]`), "two separators in a row"},
	{regexp.MustCompile(`^\s*[:;,]|[:;,]\s*$`), "a separator at an end"},
	{regexp.MustCompile(`/\s|\s/|^/|/$`), "a path with an empty part"},
}

// EmptyFields returns what looks like an empty field in text, each with
// the part of the text it was found in; none for a text that reads well.
// An empty text is itself an empty field.
func EmptyFields(text string) []string {
	if strings.TrimSpace(text) == "" {
		return []string{"the text is empty"}
	}
	var out []string
	for _, p := range emptyPatterns {
		if loc := p.re.FindStringIndex(text); loc != nil {
			lo, hi := max(0, loc[0]-20), min(len(text), loc[1]+20)
			out = append(out, p.what+": …"+text[lo:hi]+"…")
		}
	}
	return out
}
