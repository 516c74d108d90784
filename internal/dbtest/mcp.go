package dbtest

import (
	"os"
	"testing"
)

// MCPServerPostgres returns the command of the reference PostgreSQL MCP
// server (@modelcontextprotocol/server-postgres): $MCP_SERVER_POSTGRES, or
// where .ci/install-mcp-postgres.sh puts it. Without it the test fails
// when CI is set and is skipped otherwise.
func MCPServerPostgres(tb testing.TB) string {
	tb.Helper()
	p := os.Getenv("MCP_SERVER_POSTGRES")
	if p == "" {
		p = "/usr/local/lib/mcp-server-postgres/node_modules/.bin/mcp-server-postgres"
	}
	if _, err := os.Stat(p); err != nil {
		msg := "the reference PostgreSQL MCP server is not installed (bash .ci/install-mcp-postgres.sh)"
		if os.Getenv("CI") != "" {
			tb.Fatal(msg + "; CI is set, so the test may not be skipped")
		}
		tb.Skip(msg)
	}
	return p
}
