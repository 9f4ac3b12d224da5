// Package e2e holds end-to-end tests of the built otelcol-accel binary
// against the accelsim fleet simulator. They run with `make e2e` (part of
// `make test`), behind the e2e build tag.
package e2e
