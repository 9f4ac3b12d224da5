//go:build tools

// Package tools pins mdatagen. It lives in its own module because mdatagen
// releases after v0.159.0 are not served by the module proxy this project
// builds against; v0.159.0's generated code compiles against collector
// v0.165.0 / v1.71.0 (see docs/dependencies.md).
package tools

import _ "go.opentelemetry.io/collector/cmd/mdatagen"
