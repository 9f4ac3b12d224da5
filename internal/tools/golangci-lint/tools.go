//go:build tools

// Package tools pins golangci-lint. It lives in its own module so that the
// linter's many dependencies never enter the collector's build; `make lint`
// builds it once per pinned version into the tool cache.
package tools

import _ "github.com/golangci/golangci-lint/v2/cmd/golangci-lint"
