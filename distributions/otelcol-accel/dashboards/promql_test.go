package dashboards

import (
	"fmt"
	"strings"
	"unicode"
)

// A small PromQL scanner for the checks: it finds the metric names, the
// label names (in matchers and in by/without/on/ignoring/group_* lists), the
// matchers with their values, and the labels label_replace introduces. It is
// not a parser — real Prometheus parses every query in the end-to-end test —
// but it is enough to check every name against internal/accelschema without
// a Prometheus at hand.

type promMatcher struct {
	Label, Op, Value string
}

type promRefs struct {
	Metrics   []string
	Labels    []string // every label name the query reads
	Matchers  []promMatcher
	NewLabels []string // label_replace destinations
}

// Keywords that are neither metric names nor functions.
var promKeywords = map[string]bool{
	"and": true, "or": true, "unless": true, "bool": true, "offset": true,
	"inf": true, "nan": true, "Inf": true, "NaN": true,
}

// Aggregation operators: they may be followed by by/without before their
// parenthesis, so they are recognised by name.
var promAggregations = map[string]bool{
	"sum": true, "avg": true, "min": true, "max": true, "count": true, "group": true, "stddev": true,
	"stdvar": true, "topk": true, "bottomk": true, "quantile": true, "count_values": true,
	"limitk": true, "limit_ratio": true,
}

// Modifiers followed by a parenthesised label list.
var promLabelLists = map[string]bool{
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
}

type promToken struct {
	kind byte // 'i' identifier, 's' string, 'n' number, 'p' punctuation, 'o' operator
	text string
	pos  int
}

func lexPromQL(s string) ([]promToken, error) {
	var toks []promToken
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '"' || c == '\'' || c == '`':
			j := i + 1
			var b strings.Builder
			for ; j < len(s) && s[j] != c; j++ {
				if s[j] == '\\' && c != '`' && j+1 < len(s) {
					j++
				}
				b.WriteByte(s[j])
			}
			if j >= len(s) {
				return nil, fmt.Errorf("unterminated string at %d", i)
			}
			toks = append(toks, promToken{'s', b.String(), i})
			i = j + 1
		case c == '_' || c == ':' || unicode.IsLetter(rune(c)):
			j := i
			for j < len(s) && (s[j] == '_' || s[j] == ':' || unicode.IsLetter(rune(s[j])) || unicode.IsDigit(rune(s[j]))) {
				j++
			}
			toks = append(toks, promToken{'i', s[i:j], i})
			i = j
		case unicode.IsDigit(rune(c)) || c == '.':
			j := i
			for j < len(s) && (unicode.IsDigit(rune(s[j])) || s[j] == '.' || s[j] == 'e' || s[j] == 'E' ||
				((s[j] == '+' || s[j] == '-') && (s[j-1] == 'e' || s[j-1] == 'E'))) {
				j++
			}
			toks = append(toks, promToken{'n', s[i:j], i})
			i = j
		case c == '[':
			// Range or subquery durations: nothing to check inside.
			j := strings.IndexByte(s[i:], ']')
			if j < 0 {
				return nil, fmt.Errorf("unterminated [ at %d", i)
			}
			i += j + 1
		case strings.IndexByte("(){},", c) >= 0:
			toks = append(toks, promToken{'p', string(c), i})
			i++
		case strings.IndexByte("=!<>*/+-^%~", c) >= 0:
			j := i
			for j < len(s) && strings.IndexByte("=!<>~", s[j]) >= 0 && j-i < 2 {
				j++
			}
			if j == i {
				j++
			}
			toks = append(toks, promToken{'o', s[i:j], i})
			i = j
		default:
			return nil, fmt.Errorf("unexpected %q at %d", c, i)
		}
	}
	return toks, nil
}

// scanPromQL collects the references of one (interpolated) query.
func scanPromQL(expr string) (promRefs, error) {
	toks, err := lexPromQL(expr)
	if err != nil {
		return promRefs{}, err
	}
	var refs promRefs
	// One frame per open parenthesis: which function it belongs to and
	// which argument we are in (label_replace's 2nd and 4th are labels).
	type frame struct {
		fn  string
		arg int
	}
	var stack []frame
	at := func(i int) promToken {
		if i < len(toks) {
			return toks[i]
		}
		return promToken{}
	}
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch {
		case t.kind == 'p' && t.text == "(":
			stack = append(stack, frame{})
		case t.kind == 'p' && t.text == ")":
			if len(stack) == 0 {
				return refs, fmt.Errorf("unbalanced ) at %d", t.pos)
			}
			stack = stack[:len(stack)-1]
		case t.kind == 'p' && t.text == ",":
			if len(stack) > 0 {
				stack[len(stack)-1].arg++
			}
		case t.kind == 's':
			if len(stack) > 0 && stack[len(stack)-1].fn == "label_replace" {
				switch stack[len(stack)-1].arg {
				case 1:
					refs.NewLabels = append(refs.NewLabels, t.text)
				case 3:
					refs.Labels = append(refs.Labels, t.text)
				}
			}
		case t.kind == 'p' && t.text == "{":
			n, ms, err := scanMatchers(toks, i+1)
			if err != nil {
				return refs, fmt.Errorf("%w in %q", err, expr)
			}
			refs.Matchers = append(refs.Matchers, ms...)
			for _, m := range ms {
				refs.Labels = append(refs.Labels, m.Label)
			}
			i = n
		case t.kind == 'i':
			next := at(i + 1)
			switch {
			case promLabelLists[t.text]:
				if next.text != "(" {
					continue // group_left without a label list
				}
				j := i + 2
				wantLabel := true
				for ; j < len(toks) && toks[j].text != ")"; j++ {
					switch {
					case wantLabel && toks[j].kind == 'i':
						refs.Labels = append(refs.Labels, toks[j].text)
					case !wantLabel && toks[j].text == ",":
					default:
						return refs, fmt.Errorf("unexpected %q in the %s list of %q", toks[j].text, t.text, expr)
					}
					wantLabel = !wantLabel
				}
				if j == len(toks) {
					return refs, fmt.Errorf("unterminated %s list in %q", t.text, expr)
				}
				i = j
			case promKeywords[t.text], promAggregations[t.text]:
			case next.kind == 'p' && next.text == "(":
				stack = append(stack, frame{fn: t.text})
				i++
			default:
				refs.Metrics = append(refs.Metrics, t.text)
			}
		}
	}
	if len(stack) != 0 {
		return refs, fmt.Errorf("unbalanced ( in %q", expr)
	}
	return refs, nil
}

// scanMatchers reads label matchers from toks[i:] up to the closing brace and
// returns the brace's index.
func scanMatchers(toks []promToken, i int) (int, []promMatcher, error) {
	var out []promMatcher
	for i < len(toks) {
		if toks[i].text == "}" {
			return i, out, nil
		}
		if toks[i].text == "," {
			i++
			continue
		}
		if i+2 >= len(toks) || toks[i].kind != 'i' || toks[i+1].kind != 'o' || toks[i+2].kind != 's' {
			return i, nil, fmt.Errorf("malformed matcher at %d", toks[i].pos)
		}
		switch toks[i+1].text {
		case "=", "!=", "=~", "!~":
		default:
			return i, nil, fmt.Errorf("unknown matcher operator %q", toks[i+1].text)
		}
		out = append(out, promMatcher{toks[i].text, toks[i+1].text, toks[i+2].text})
		i += 3
	}
	return i, nil, fmt.Errorf("unterminated {")
}
