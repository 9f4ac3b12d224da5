// Package componenthealth is how a component tells the collector and the
// operator that something is wrong, without flooding either.
//
// Problems turns the state of a component's sources (a driver library, a
// socket, an endpoint, a file) into one component status: RecoverableError
// naming every broken source, OK once all of them work again, reported to
// the host only when that aggregate changes. Two sources that fail and
// recover independently therefore no longer overwrite each other's status.
//
// Logger logs at most one message per key per interval and says, on the
// next line it lets through, how many it held back. Limiter is the gate
// underneath it, also usable for things that are not log lines (an early
// refresh asked for by every batch).
package componenthealth // import "github.com/otelcol-accel/otelcol-accel/internal/componenthealth"
