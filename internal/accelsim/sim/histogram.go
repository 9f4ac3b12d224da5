package sim

import "math"

// Histogram is a cumulative Prometheus-style histogram: Cumulative[i] counts
// observations ≤ Bounds[i]; Count includes those above the last bound.
type Histogram struct {
	Bounds     []float64
	Cumulative []float64
	Count      float64
	Sum        float64
}

func newHistogram(bounds []float64) Histogram {
	return Histogram{Bounds: bounds, Cumulative: make([]float64, len(bounds))}
}

// observeLogNormal adds n observations drawn, in expectation, from a
// log-normal distribution with the given median and shape. Each bucket gets
// round(n·CDF(bound)); rounding a non-decreasing CDF keeps the buckets
// cumulative, and no bucket exceeds n.
func (h *Histogram) observeLogNormal(n, median, sigma float64) {
	if n <= 0 || median <= 0 {
		return
	}
	mu := math.Log(median)
	for i, b := range h.Bounds {
		h.Cumulative[i] += math.Round(n * logNormalCDF(b, mu, sigma))
	}
	h.Count += n
	h.Sum += n * median * math.Exp(sigma*sigma/2)
}

func logNormalCDF(x, mu, sigma float64) float64 {
	if x <= 0 {
		return 0
	}
	return 0.5 * math.Erfc(-(math.Log(x)-mu)/(sigma*math.Sqrt2))
}

// logNormalQuantile returns the value at standard-normal score z.
func logNormalQuantile(median, sigma, z float64) float64 {
	return median * math.Exp(sigma*z)
}

// clone copies a histogram so a snapshot does not share the live buckets.
func (h Histogram) clone() Histogram {
	c := h
	c.Cumulative = append([]float64(nil), h.Cumulative...)
	return c
}

// Default buckets of the inference servers (vLLM V1 loggers.py; SGLang
// metrics collector), which the collector must read from the payload.
var (
	VLLMTTFTBuckets    = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}
	VLLMTokenBuckets   = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0}
	VLLMRequestBuckets = []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}
	SGLangTTFTBuckets  = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 15.0, 20.0, 25.0, 30.0}
	SGLangITLBuckets   = []float64{0.002, 0.004, 0.006, 0.008, 0.010, 0.015, 0.020, 0.025, 0.030, 0.035, 0.040, 0.060, 0.080, 0.100, 0.200, 0.400, 0.600, 0.800, 1.0, 2.0, 4.0, 6.0, 8.0}
	SGLangE2EBuckets   = []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0}
)
