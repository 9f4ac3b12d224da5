#!/usr/bin/env bash
# Runs every fuzz target in the module for a fixed time each.
#   scripts/fuzz.sh 10s     (make test)
#   scripts/fuzz.sh 2m      (make fuzz)
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime="${1:-10s}"
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# fuzz_one fuzzes one target. Go 1.26's fuzz coordinator can fail a target
# with a bare "context deadline exceeded" when -fuzztime ends while a worker
# is busy (go.dev/issue/75804, fixed in Go 1.27): no input failed and none
# is written. That case, and only that one, is accepted once the target's
# seed and testdata corpus replay cleanly; a real finding writes its input
# under testdata/fuzz and fails as usual.
fuzz_one() {
  local pkg="$1" target="$2" rc=0
  go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg" 2>&1 | tee "$log" || rc=$?
  [ "$rc" -eq 0 ] && return 0
  # Bare: the failure's only message line is the deadline, nothing written.
  if ! grep -q 'Failing input written' "$log" && [ "$(grep '^    ' "$log")" = "    context deadline exceeded" ]; then
    echo ">> $target: Go's fuzz coordinator stopped with a deadline race (go.dev/issue/75804), no failing input; replaying its corpus"
    go test -count=1 -run "^${target}\$" "$pkg"
    return
  fi
  return "$rc"
}
found=0
while IFS= read -r file; do
  pkg="./$(dirname "$file")"
  while IFS= read -r target; do
    found=$((found + 1))
    echo ">> fuzz $pkg $target for $fuzztime"
    fuzz_one "$pkg" "$target"
  done < <(grep -oE '^func (Fuzz[A-Za-z0-9_]+)\(f \*testing\.F\)' "$file" | sed -E 's/^func (Fuzz[A-Za-z0-9_]+).*/\1/')
done < <(git ls-files '*_test.go'; git ls-files --others --exclude-standard '*_test.go')
echo ">> $found fuzz targets ran for $fuzztime each"
