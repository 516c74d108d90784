#!/usr/bin/env bash
# Refreshes the vendored Vega builds from the npm registry: the UMD
# minified files of vega, vega-lite, vega-embed and vega-interpreter (the
# expression interpreter that lets the charts run under a Content-Security-
# Policy without 'unsafe-eval'). All four are BSD-3-Clause, University of
# Washington Interactive Data Lab (LICENSE). Usage: bash update.sh
set -euo pipefail
cd "$(dirname "$0")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
for pkg in vega@5.33.1 vega-lite@5.23.0 vega-embed@6.29.0 vega-interpreter@1.2.1; do
  name="${pkg%@*}"
  (cd "$work" && npm pack --silent "$pkg" >/dev/null && tar -xzf "$name-${pkg#*@}.tgz" && cp "package/build/$name.min.js" "$OLDPWD/" && rm -rf package)
done
