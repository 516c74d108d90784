#!/usr/bin/env bash
# Checks what a program that embeds the SDK inherits: a new host module
# importing the root package, executor/sqlite and llm/openai (with a replace
# to this checkout) may have in its module graph (go list -m all)
#  - none of OpenTelemetry, Prometheus, gRPC, Redis or chromedp: they belong
#    to the nested modules (server, cmd/text2sql, the Gemini modules);
#  - at most 40 modules of its own: the graph less the modules that enter it
#    only through github.com/openai/openai-go's go.mod (every openai-go v3
#    requires the Azure SDK, and since v3.60 the AWS SDK, for its Azure and
#    Bedrock clients; their packages are not built, but Go's module graph
#    lists any dependency's requirements, and no layout on this side can
#    change that). Without llm/openai the whole graph must be within 40.
# Needs the Go module proxy (or a warm module cache).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
max=40
forbidden='opentelemetry|prometheus|grpc|redis|chromedp'
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export GOWORK=off GOFLAGS=-mod=mod

# host NAME IMPORT...: a module NAME whose main package imports each IMPORT
# (under the SDK's path), tidied.
host() {
  local name="$1"; shift
  mkdir -p "$work/$name"
  {
    echo "module example.com/$name"; echo
    echo "go $(go mod edit -json "$repo/go.mod" | sed -n 's/^\t"Go": "\(.*\)",*$/\1/p')"; echo
    echo "require github.com/text2sql-go/text2sql v0.0.0-00010101000000-000000000000"; echo
    echo "replace github.com/text2sql-go/text2sql => $repo"
  } >"$work/$name/go.mod"
  {
    echo "package main"; echo; echo "import ("
    for p in "$@"; do echo "	_ \"github.com/text2sql-go/text2sql$p\""; done
    echo ")"; echo; echo "func main() {}"
  } >"$work/$name/main.go"
  (cd "$work/$name" && go mod tidy && go build -o /dev/null .)
}

host sqlite "" /executor/sqlite
host openai "" /executor/sqlite /llm/openai
(cd "$work/sqlite" && go list -m -f '{{.Path}}' all) | sort >"$work/sqlite.txt"
(cd "$work/openai" && go list -m -f '{{.Path}}' all) | sort >"$work/openai.txt"
# The modules openai-go's go.mod requires that the host without it lacks.
(cd "$work/openai" && go mod graph) | awk '$1 ~ /^github.com\/openai\/openai-go\/v3@/ && $2 !~ /^(go|toolchain)@/ {sub(/@.*/, "", $2); print $2}' | sort -u |
  comm -23 - "$work/sqlite.txt" >"$work/openai-go.txt"
own="$(comm -23 "$work/openai.txt" "$work/openai-go.txt" | wc -l)"
echo "host (root, executor/sqlite): $(wc -l <"$work/sqlite.txt") modules"
echo "host (root, executor/sqlite, llm/openai): $(wc -l <"$work/openai.txt") modules, $own without the $(wc -l <"$work/openai-go.txt") that only openai-go's go.mod requires"
fail=0
if bad="$(cat "$work/sqlite.txt" "$work/openai.txt" | grep -E "$forbidden" | sort -u)"; then
  echo "host-modules: the host's module graph holds modules of the nested modules:"; echo "$bad"; fail=1
fi
for n in "$(wc -l <"$work/sqlite.txt")" "$own"; do
  if [ "$n" -gt "$max" ]; then echo "host-modules: $n modules, more than $max"; fail=1; fi
done
exit "$fail"
