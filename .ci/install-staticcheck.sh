#!/usr/bin/env bash
# Installs staticcheck at a pinned version (2026.2.2, module v0.8.2, which
# knows Go 1.26) into $(go env GOPATH)/bin and prints its path.
# Idempotent: an installed binary of that version is kept.
set -euo pipefail
version=v0.8.2
bin="$(go env GOPATH)/bin/staticcheck"
if ! go version -m "$bin" 2>/dev/null | grep -q "honnef.co/go/tools[[:space:]]*$version"; then
  GOFLAGS= GOWORK=off go install "honnef.co/go/tools/cmd/staticcheck@$version"
fi
echo "$bin"
