#!/usr/bin/env bash
# Runs every fuzz target in the module for a fixed time each.
#   scripts/fuzz.sh 10s     (make test)
#   scripts/fuzz.sh 2m      (make fuzz)
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime="${1:-10s}"
found=0
while IFS= read -r file; do
  pkg="./$(dirname "$file")"
  while IFS= read -r target; do
    found=$((found + 1))
    echo ">> fuzz $pkg $target for $fuzztime"
    go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg"
  done < <(grep -oE '^func (Fuzz[A-Za-z0-9_]+)\(f \*testing\.F\)' "$file" | sed -E 's/^func (Fuzz[A-Za-z0-9_]+).*/\1/')
done < <(git ls-files '*_test.go'; git ls-files --others --exclude-standard '*_test.go')
echo ">> $found fuzz targets ran for $fuzztime each"
