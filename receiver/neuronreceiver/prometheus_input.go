package neuronreceiver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/otelcol-accel/otelcol-accel/receiver/neuronreceiver/internal/promparse"
	"github.com/otelcol-accel/otelcol-accel/receiver/neuronreceiver/internal/promreport"
)

// maxPageBytes bounds one page; a trn2.48xlarge with a few runtimes serves
// well under a MiB.
const maxPageBytes = 64 << 20

// exporterHint completes the message for an exporter that does not answer.
const exporterHint = "start neuron-monitor's Prometheus exporter (neuron-monitor | neuron-monitor-prometheus.py --port 8000) or point endpoint: at it"

// pageScraper reads neuron-monitor-prometheus.py's page every
// collection_interval and hands each scrape, as a report, to the receiver's
// one mapping.
type pageScraper struct {
	r      *neuronReceiver
	url    string
	client *http.Client
	reader *promreport.Reader
	down   bool // the exporter did not answer last time
}

func (s *pageScraper) run(ctx context.Context) {
	defer s.client.CloseIdleConnections()
	ticker := time.NewTicker(s.r.cfg.CollectionInterval)
	defer ticker.Stop()
	for {
		s.scrape(ctx)
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// scrape reads the page once. An exporter that does not answer is retried
// at the next interval; a page with bad lines is used without them.
func (s *pageScraper) scrape(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, s.r.cfg.CollectionInterval)
	defer cancel()
	now := s.r.clock()
	got, err := s.fetch(ctx)
	if err != nil {
		if errors.Is(ctx.Err(), context.Canceled) {
			return // shutting down
		}
		s.unreachable(err)
		return
	}
	s.reachable()
	switch {
	case got.tooLarge:
		s.r.log.Warn("scrape/size", fmt.Sprintf("neuron-monitor-prometheus at %s: page larger than %d MiB; the lines after the cut are not used", s.url, maxPageBytes>>20))
	case got.cut != nil:
		s.r.log.Warn("scrape/cut", fmt.Sprintf("neuron-monitor-prometheus at %s: the page ended early after %d bytes (%v); the lines read are used", s.url, len(got.body), got.cut))
	}
	page := promparse.Parse(got.body)
	if page.ErrorCount > 0 {
		s.badLines(page)
	}
	rep, problems, err := s.reader.Report(page, now)
	for _, p := range problems {
		s.r.log.Warn("decode/"+p.Key, fmt.Sprintf("neuron-monitor-prometheus at %s: %v", s.url, p.Err))
	}
	if err != nil {
		err = fmt.Errorf("neuron-monitor-prometheus at %s: %w", s.url, err)
		s.r.log.Warn("scrape/foreign", err.Error(), zap.Int("lines", page.Lines))
		s.r.tel.ReceiverNeuronScrapesFailed.Add(ctx, 1)
		s.r.status.Fail(s.r.source, err)
		return
	}
	s.r.process(rep, now)
}

// fetched is one response: the page, and whether it was cut.
type fetched struct {
	body     []byte
	tooLarge bool  // longer than maxPageBytes: cut there
	cut      error // the connection broke mid-page
}

func (s *pageScraper) fetch(ctx context.Context) (fetched, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, http.NoBody)
	if err != nil {
		return fetched{}, err
	}
	// prometheus_client answers OpenMetrics when asked; this reads 0.0.4.
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := s.client.Do(req)
	if err != nil {
		return fetched{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
		return fetched{}, fmt.Errorf("answered %s", resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxPageBytes+1))
	if err != nil && len(body) == 0 {
		return fetched{}, err
	}
	// A page cut short (the exporter died mid-write) is used as far as it
	// goes: promparse reports the torn last line.
	if len(body) > maxPageBytes {
		return fetched{body: body[:maxPageBytes], tooLarge: true}, nil
	}
	return fetched{body: body, cut: err}, nil
}

func (s *pageScraper) unreachable(err error) {
	s.down = true
	err = fmt.Errorf("neuron-monitor-prometheus at %s is not reachable: %w", s.url, err)
	s.r.log.Warn("scrape/unreachable", fmt.Sprintf("%v: %s; retrying every %s", err, exporterHint, s.r.cfg.CollectionInterval))
	s.r.tel.ReceiverNeuronScrapesFailed.Add(context.Background(), 1)
	s.r.status.Fail(s.r.source, err)
}

func (s *pageScraper) reachable() {
	if !s.down {
		return
	}
	s.down = false
	s.r.log.Reset("scrape/unreachable")
	s.r.set.Logger.Info("neuron-monitor-prometheus is reachable again", zap.String("endpoint", s.url))
}

func (s *pageScraper) badLines(page promparse.Page) {
	first := make([]string, len(page.Errors))
	for i, e := range page.Errors {
		first[i] = e.Error()
	}
	msg := fmt.Sprintf("neuron-monitor-prometheus at %s: skipped %d of %d lines that could not be read; the rest of the page is used", s.url, page.ErrorCount, page.Lines)
	if page.GaveUpAt > 0 {
		msg = fmt.Sprintf("neuron-monitor-prometheus at %s: too many lines that could not be read (%d); the page from line %d on is not used", s.url, page.ErrorCount, page.GaveUpAt)
	}
	s.r.log.Warn("scrape/lines", msg, zap.Strings("first_errors", first))
}
