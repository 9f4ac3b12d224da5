#!/usr/bin/env bash
# Prints a hash of everything the ocb build depends on, so `make dist` can skip
# an unchanged rebuild. Test files and the test tree do not go into the binary.
set -euo pipefail
cd "$(dirname "$0")/.."
{
  cat builder-config.yaml go.mod go.sum
  find . -name '*.go' -not -name '*_test.go' \
    -not -path './_build/*' -not -path './bin/*' -not -path './test/*' \
    -not -path './internal/tools/*' -print0 | sort -z | xargs -0 cat
  # Embedded data (pricing tables, defaults, the insights console's HTML, JS
  # and CSS) is part of the binary too.
  find . \( -path '*/data/*' -o -path '*/embedded/*' -o -path './exporter/acceleratorinsightsexporter/internal/web/*' \) -type f \
    -not -path './_build/*' -not -path './bin/*' -print0 | sort -z | xargs -0 -r cat
} | sha256sum | cut -c1-32
