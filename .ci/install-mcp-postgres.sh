#!/usr/bin/env bash
# Installs the reference PostgreSQL MCP server (@modelcontextprotocol/server-postgres
# from the npm registry), which executor/mcpexec's tests run on stdio
# against the local PostgreSQL, and prints its command's path on standard
# output. Idempotent. Usage: bash .ci/install-mcp-postgres.sh [DESTDIR]
# (default /usr/local/lib/mcp-server-postgres). Export the printed path as
# MCP_SERVER_POSTGRES.
set -euo pipefail

version=0.6.2
dest="${1:-/usr/local/lib/mcp-server-postgres}"
bin="$dest/node_modules/.bin/mcp-server-postgres"

if [ ! -x "$bin" ] || ! grep -q "\"version\": \"$version\"" "$dest/node_modules/@modelcontextprotocol/server-postgres/package.json" 2>/dev/null; then
  command -v npm >/dev/null 2>&1 || { echo "install-mcp-postgres.sh: npm is needed (apt-get install npm)" >&2; exit 1; }
  mkdir -p "$dest"
  npm install --silent --no-audit --no-fund --prefix "$dest" "@modelcontextprotocol/server-postgres@$version" >&2
fi
echo "$bin"
