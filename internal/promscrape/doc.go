// Package promscrape is the one Prometheus scrape stack of the receivers
// that read /metrics pages (dcgm-exporter, inference servers,
// neuron-monitor-prometheus): a tolerant parser of the text exposition
// format and an HTTP client built from confighttp.ClientConfig with a
// bound on the response body.
//
// The parser reads format 0.0.4 and the sample lines of OpenMetrics 1.0:
// # HELP and # TYPE, labels in any order (also quoted UTF-8 names), the
// escapes \\ \" \n in label values, NaN, +Inf and -Inf, optional
// timestamps and exemplars, and histograms and summaries as their _bucket,
// _sum and _count lines. A page known to be OpenMetrics (IsOpenMetrics of
// its Content-Type; ParseOptions.OpenMetrics, Reader.OpenMetrics) has its
// timestamps read as seconds and its exemplars read (`# {trace_id="…"}
// value [timestamp]` on a counter's _total or a histogram's _bucket); an
// exemplar that cannot be read is reported on its own and its sample
// kept. Other pages pass exemplars over unread, at no cost.
//
// Unlike expfmt's TextParser, which stops at the first line it cannot
// read, a bad line costs only itself: it is reported with its line and
// column, for the caller to count and rate-limit, and every other line is
// kept.
//
// Two ways in, one line parser behind them:
//
//   - Reader streams a page from an io.Reader; what it returns points into
//     its buffer and is valid until the next call (no allocation per
//     sample);
//   - Parse reads a whole page held as a string into a Page whose samples'
//     names and label values are substrings of it (one array of samples and
//     one of labels per page); ParseInto reuses a Page's arrays for the
//     next page of the same endpoint.
package promscrape // import "github.com/otelcol-accel/otelcol-accel/internal/promscrape"
