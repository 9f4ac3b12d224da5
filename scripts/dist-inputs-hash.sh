#!/usr/bin/env bash
# Prints a hash of everything one ocb build depends on, so `make dist` can
# skip an unchanged rebuild:
#
#   scripts/dist-inputs-hash.sh [manifest]   (default builder-config.yaml)
#
# The inputs are the manifest, go.mod/go.sum, and the source and embedded
# files (pricing tables, defaults, the insights console's HTML, JS and CSS)
# of every package of this module the manifest's components import, as the
# Go tool resolves them: a change to a gateway-only component does not
# rebuild the node agent (builder-config-agent.yaml), and a change to any
# package either build compiles in does. Test files never go into a binary.
set -euo pipefail
cd "$(dirname "$0")/.."
manifest=${1:-builder-config.yaml}
[[ -f $manifest ]] || { echo "dist-inputs-hash: no manifest $manifest" >&2; exit 1; }
module=$(go list -m)
# The manifest's own components: `import:` lines under this module's path.
mapfile -t imports < <(awk -v m="$module" '$1 == "import:" && index($2, m) == 1 {print $2}' "$manifest")
{
  cat "$manifest" go.mod go.sum
  if ((${#imports[@]} > 0)); then
    CGO_ENABLED=1 go list -deps -f \
      '{{if .Module}}{{if eq .Module.Path "'"$module"'"}}{{$d := .Dir}}{{range .GoFiles}}{{$d}}/{{.}}{{"\n"}}{{end}}{{range .CgoFiles}}{{$d}}/{{.}}{{"\n"}}{{end}}{{range .EmbedFiles}}{{$d}}/{{.}}{{"\n"}}{{end}}{{end}}{{end}}' \
      "${imports[@]}" | sort -u | while read -r f; do
        printf '%s\n' "${f#"$PWD"/}"
        cat "$f"
      done
  fi
} | sha256sum | cut -c1-32
