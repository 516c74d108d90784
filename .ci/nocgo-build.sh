#!/usr/bin/env bash
# Builds with CGO_ENABLED=0 every package of the workspace that needs no
# driver (and has non-test files): the rule is that neither the package nor any non-standard package
# it imports (transitively, as built with cgo) has cgo files. The cgo ones
# (go-sqlite3, pg_query_go, onnxruntime_go) are left out with everything
# that imports them; the project rule is that all others build without cgo.
# Usage: bash .ci/nocgo-build.sh   (from the repository root)
set -euo pipefail
cd "$(dirname "$0")/.."
pats=$(go list -m -f '{{.Dir}}/...')
cgo=$(CGO_ENABLED=1 go list -deps -f '{{if and (not .Standard) .CgoFiles}}{{.ImportPath}}{{end}}' $pats | sort -u)
pure=$(CGO_ENABLED=1 go list -f '{{if .GoFiles}}{{.ImportPath}} {{join .Deps " "}}{{end}}' $pats |
  awk -v cgo="$cgo" 'BEGIN { n = split(cgo, c, "\n"); for (i = 1; i <= n; i++) if (c[i] != "") bad[c[i]] = 1 }
    { ok = !($1 in bad); for (i = 2; i <= NF && ok; i++) if ($i in bad) ok = 0; if (ok) print $1 }')
echo "cgo packages: $(echo "$cgo" | tr '\n' ' ')"
echo "$(echo "$pure" | wc -w) of $(go list $pats | wc -l) packages need no cgo; building them with CGO_ENABLED=0"
CGO_ENABLED=0 go build $pure
