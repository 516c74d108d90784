package main

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/internal/dbtest"
)

// --mcp with the reference PostgreSQL MCP server on stdio: context reads
// the schema through it, run goes through PostgreSQL's parser before the
// server sees the statement.
func TestMCPDatabase(t *testing.T) {
	bin := os.Getenv("MCP_SERVER_POSTGRES")
	if bin == "" {
		bin = "/usr/local/lib/mcp-server-postgres/node_modules/.bin/mcp-server-postgres"
	}
	if _, err := os.Stat(bin); err != nil {
		require.Empty(t, os.Getenv("CI"), "the reference PostgreSQL MCP server is not installed (bash .ci/install-mcp-postgres.sh)")
		t.Skip("the reference PostgreSQL MCP server is not installed")
	}
	db, dsn := dbtest.Postgres(t)
	dbtest.Exec(t, db, "CREATE TABLE singer (singer_id int PRIMARY KEY, name text, country text)",
		"INSERT INTO singer VALUES (1, 'Joe Sharp', 'Netherlands'), (2, 'Timbaland', 'United States')")
	base := []string{"--mcp", "pg=" + bin + " '" + dsn + "'", "--index-dir", t.TempDir(), "--examples", t.TempDir() + "/ex.sqlite"}

	out, errOut, code := cli(t, append(base, "context", "How many singers are there?")...)
	require.Equal(t, 0, code, "exit %d: %s", code, errOut)
	assert.Contains(t, out, "singer")
	assert.Contains(t, out, "retrieved")

	out, errOut, code = cli(t, append(base, "run", "SELECT name FROM singer ORDER BY singer_id")...)
	require.Equal(t, 0, code, "exit %d: %s", code, errOut)
	assert.Contains(t, out, "Joe Sharp")

	out, _, code = cli(t, append(base, "run", "DELETE FROM singer")...)
	assert.Equal(t, exitSQL, code)
	assert.Contains(t, out, "not_read_only")
	rows, err := dbtest.Rows(db, "SELECT count(*) FROM singer")
	require.NoError(t, err)
	assert.EqualValues(t, 2, rows[0][0], "nothing was deleted")

	_, errOut, code = cli(t, "--mcp", "pg='unclosed", "context", "x")
	assert.Equal(t, exitUsage, code, errOut)
	assert.True(t, strings.Contains(errOut, "not a command line"), errOut)
}
