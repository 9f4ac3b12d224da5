package promschema

import (
	"fmt"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// Matcher is one label matcher of a selector.
type Matcher struct {
	Label, Op, Value string
}

// Refs are the names one query reads and makes.
type Refs struct {
	Metrics   []string  // metric names of every selector
	Labels    []string  // every label name the query reads
	Matchers  []Matcher // every label matcher but the metric name's
	NewLabels []string  // labels the query creates (label_replace, label_join, count_values)
}

// Parse parses a query with Prometheus's own parser and collects what it
// references. A selector without a metric name is an error: every query
// here reads named series.
func Parse(expr string) (Refs, error) {
	ast, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
	if err != nil {
		return Refs{}, fmt.Errorf("%q: %w", expr, err)
	}
	var refs Refs
	var walkErr error
	parser.Inspect(ast, func(node parser.Node, _ []parser.Node) error {
		switch n := node.(type) {
		case *parser.VectorSelector:
			name := n.Name
			for _, m := range n.LabelMatchers {
				if m.Name == model.MetricNameLabel {
					if m.Type == labels.MatchEqual {
						name = m.Value
					}
					continue
				}
				refs.Labels = append(refs.Labels, m.Name)
				refs.Matchers = append(refs.Matchers, Matcher{m.Name, m.Type.String(), m.Value})
			}
			if name == "" && walkErr == nil {
				walkErr = fmt.Errorf("%q: selector %s has no metric name", expr, n)
			}
			refs.Metrics = append(refs.Metrics, name)
		case *parser.AggregateExpr:
			refs.Labels = append(refs.Labels, n.Grouping...)
			if n.Op == parser.COUNT_VALUES {
				if s, ok := n.Param.(*parser.StringLiteral); ok {
					refs.NewLabels = append(refs.NewLabels, s.Val)
				}
			}
		case *parser.BinaryExpr:
			if n.VectorMatching != nil {
				refs.Labels = append(refs.Labels, n.VectorMatching.MatchingLabels...)
				refs.Labels = append(refs.Labels, n.VectorMatching.Include...)
			}
		case *parser.Call:
			switch n.Func.Name {
			case "label_replace": // (v, dst, replacement, src, regex)
				refs.NewLabels = append(refs.NewLabels, stringArg(n, 1))
				refs.Labels = append(refs.Labels, stringArg(n, 3))
			case "label_join": // (v, dst, separator, src...)
				refs.NewLabels = append(refs.NewLabels, stringArg(n, 1))
				for i := 3; i < len(n.Args); i++ {
					refs.Labels = append(refs.Labels, stringArg(n, i))
				}
			}
		}
		return nil
	})
	return refs, walkErr
}

func stringArg(c *parser.Call, i int) string {
	if i < len(c.Args) {
		if s, ok := c.Args[i].(*parser.StringLiteral); ok {
			return s.Val
		}
	}
	return ""
}
