package neuronreceiver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/otelcol-accel/otelcol-accel/internal/promscrape"
	"github.com/otelcol-accel/otelcol-accel/receiver/neuronreceiver/internal/promreport"
)

// exporterHint completes the message for an exporter that does not answer.
const exporterHint = "start neuron-monitor's Prometheus exporter (neuron-monitor | neuron-monitor-prometheus.py --port 8000) or point endpoint: at it"

// pageScraper reads neuron-monitor-prometheus.py's page every
// collection_interval and hands each scrape, as a report, to the receiver's
// one mapping.
type pageScraper struct {
	r      *neuronReceiver
	url    string
	client *promscrape.Client
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
	// A page cut short (the exporter died mid-write, or past the client's
	// 64 MiB bound; a trn2.48xlarge with a few runtimes serves well under a
	// MiB) is used as far as it goes: the torn last line is a bad line.
	text, err := s.client.Fetch(ctx, s.url)
	if err != nil && text == "" {
		if errors.Is(ctx.Err(), context.Canceled) {
			return // shutting down
		}
		s.unreachable(err)
		return
	}
	s.reachable()
	var tooLarge *promscrape.BodyTooLargeError
	switch {
	case errors.As(err, &tooLarge):
		s.r.log.Warn("scrape/size", fmt.Sprintf("neuron-monitor-prometheus at %s: %v; the lines after the cut are not used", s.url, err))
	case err != nil:
		s.r.log.Warn("scrape/cut", fmt.Sprintf("neuron-monitor-prometheus at %s: the page ended early after %d bytes (%v); the lines read are used", s.url, len(text), err))
	}
	page := promreport.Parse(text)
	if page.Errors.Count > 0 {
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

func (s *pageScraper) badLines(page promscrape.Page) {
	first := make([]string, len(page.Errors.First))
	for i, e := range page.Errors.First {
		first[i] = e.Error()
	}
	msg := fmt.Sprintf("neuron-monitor-prometheus at %s: skipped %d of %d lines that could not be read; the rest of the page is used", s.url, page.Errors.Count, page.Lines)
	s.r.log.Warn("scrape/lines", msg, zap.Strings("first_errors", first))
}
