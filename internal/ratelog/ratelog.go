// Package ratelog is the old name of componenthealth's Logger, kept until
// its callers use componenthealth directly.
//
// Deprecated: use componenthealth.Logger.
package ratelog

import (
	"time"

	"go.uber.org/zap"

	"github.com/otelcol-accel/otelcol-accel/internal/componenthealth"
)

// Logger is componenthealth.Logger.
type Logger = componenthealth.Logger

// New is componenthealth.NewLogger.
func New(log *zap.Logger, interval time.Duration) *Logger {
	return componenthealth.NewLogger(log, interval)
}
