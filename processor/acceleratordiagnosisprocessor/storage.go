package acceleratordiagnosisprocessor

// baselinesKey is the storage key of the endpoints' latency baselines
// (internal/baseline.Persisted keeps them across restarts).
const baselinesKey = "latency_baselines"
