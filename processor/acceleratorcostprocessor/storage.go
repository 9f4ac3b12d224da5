package acceleratorcostprocessor

// baselinesKey is the storage key of the training baselines
// (internal/baseline.Persisted keeps them across restarts).
const baselinesKey = "training_baselines"
