package acceleratordiagnosisprocessor

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.uber.org/zap"
)

// baselinesKey is the storage key of the endpoints' latency baselines.
const baselinesKey = "latency_baselines"

func storageClient(ctx context.Context, host component.Host, ext, self component.ID) (storage.Client, error) {
	e, ok := host.GetExtensions()[ext]
	if !ok {
		return nil, fmt.Errorf("baselines.storage: extension %q is not running; add it under `extensions:` and to `service.extensions`", ext)
	}
	se, ok := e.(storage.Extension)
	if !ok {
		return nil, fmt.Errorf("baselines.storage: extension %q is not a storage extension (use file_storage)", ext)
	}
	client, err := se.GetClient(ctx, component.KindProcessor, self, baselinesKey)
	if err != nil {
		return nil, fmt.Errorf("baselines.storage: %q gave no client: %w", ext, err)
	}
	return client, nil
}

// loadBaselines restores what the last run saved. A broken or unreadable
// record is logged and the processor starts without baselines: they
// rebuild within baselines.min_samples windows.
func (p *diagnosisProcessor) loadBaselines(ctx context.Context) {
	data, err := p.storage.Get(ctx, baselinesKey)
	if err != nil {
		err = fmt.Errorf("reading latency baselines from %s: %w", p.cfg.Baselines.Storage, err)
		p.logger.Error("starting without stored latency baselines", zap.Error(err))
		p.status.Fail(sourceStorage, err)
		return
	}
	if data == nil {
		return
	}
	p.mu.Lock()
	dropped, err := p.baselines.Unmarshal(data, p.now())
	n := p.baselines.Len()
	p.mu.Unlock()
	if err != nil {
		p.logger.Error("stored latency baselines are unreadable; starting without them",
			zap.String("storage", p.cfg.Baselines.Storage.String()), zap.Error(err))
		return
	}
	if dropped > 0 {
		p.logger.Warn("dropped malformed stored latency baselines", zap.Int("dropped", dropped))
	}
	p.logger.Info("latency baselines restored", zap.Int("baselines", n))
}

// saveBaselines writes the baselines when they changed since the last save.
func (p *diagnosisProcessor) saveBaselines(ctx context.Context) (saved bool, err error) {
	p.mu.Lock()
	if !p.baselines.Dirty() {
		p.mu.Unlock()
		return false, nil
	}
	data, err := p.baselines.Marshal()
	p.mu.Unlock()
	if err != nil {
		return false, fmt.Errorf("encoding latency baselines: %w", err)
	}
	if err := p.storage.Set(ctx, baselinesKey, data); err != nil {
		return false, fmt.Errorf("saving latency baselines to %s: %w", p.cfg.Baselines.Storage, err)
	}
	return true, nil
}

func (p *diagnosisProcessor) saveLoop() {
	defer p.wg.Done()
	ticker := time.NewTicker(p.cfg.Baselines.SaveInterval)
	defer ticker.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-ticker.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), p.cfg.Baselines.SaveInterval)
		switch saved, err := p.saveBaselines(ctx); {
		case err != nil:
			p.warn.Warn("baselines-save", "could not save latency baselines; will retry", zap.Error(err))
			p.status.Fail(sourceStorage, err)
		case saved:
			p.status.Clear(sourceStorage)
		}
		cancel()
	}
}
