// Package web holds the insights console: hand-written HTML, CSS and ES
// modules, embedded in the binary so that nothing is loaded from the
// internet (air-gapped clusters). The exporter serves Assets at its root and
// answers every extension-less path with index.html, so the console's routes
// (fleet, node, device, pod, teams, findings, inference, capacity,
// reliability) are real URLs that can be bookmarked and shared.
//
// Every route is one path segment with its state in the query string, and
// every URL the pages build is relative, so the console also works behind a
// reverse proxy that serves it under a path prefix.
package web

import "embed"

// Assets are the console's files, index.html at the root.
//
//go:embed index.html assets
var Assets embed.FS
