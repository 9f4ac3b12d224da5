package e2etest

import (
	"context"
	"fmt"
	"net/http"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// ScrapePrometheus fetches and parses a Prometheus text endpoint.
func ScrapePrometheus(url string) (map[string]*dto.MetricFamily, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(resp.Body)
}

// WaitForFamilies scrapes until every named family is present.
func WaitForFamilies(ctx context.Context, url string, names ...string) (map[string]*dto.MetricFamily, error) {
	var last error
	for {
		fams, err := ScrapePrometheus(url)
		if err == nil {
			missing := ""
			for _, n := range names {
				if _, ok := fams[n]; !ok {
					missing = n
					break
				}
			}
			if missing == "" {
				return fams, nil
			}
			last = fmt.Errorf("family %q not exported yet", missing)
		} else {
			last = err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%v: %w", last, ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// Label returns a metric's label value.
func Label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}
