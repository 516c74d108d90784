package main

import (
	"encoding/json"
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
	bin := dbtest.MCPServerPostgres(t)
	db, dsn := dbtest.Postgres(t)
	dbtest.Exec(t, db, "CREATE TABLE singer (singer_id int PRIMARY KEY, name text, country text)",
		"INSERT INTO singer VALUES (1, 'Joe Sharp', 'Netherlands'), (2, 'Timbaland', 'United States')")
	base := []string{"--mcp", "pg=" + bin + " '" + dsn + "'", "--index-dir", t.TempDir(), "--examples", t.TempDir() + "/ex.sqlite"}

	// The server's sessions have no statement_timeout: a statement the
	// CLI stops waiting for would run on, so --mcp refuses the server and
	// says how to bound the login (issue 36).
	_, errOut, code := cli(t, append(base, "--timeout", "3s", "run", "SELECT 1")...)
	assert.NotEqual(t, 0, code)
	assert.Contains(t, errOut, "does not stop statements at the time limit")
	assert.Contains(t, errOut, "text2sql grant --statement-timeout 3s")
	var name string
	require.NoError(t, db.QueryRow("SELECT current_database()").Scan(&name))
	// A limit within the CLI's: --mcp opens. (Open's catalog queries run
	// under it too, so it must not be tight on a loaded machine.)
	dbtest.Exec(t, db, `ALTER DATABASE "`+name+`" SET statement_timeout = '10s'`)

	direct := []string{"--dsn", dsn, "--index-dir", t.TempDir(), "--examples", t.TempDir() + "/ex.sqlite", "--json"}
	base = append(base, "--timeout", "10s")
	for _, args := range [][]string{{"context", "How many singers are there?"}, {"run", "SELECT name, country FROM singer ORDER BY singer_id"}} {
		viaMCP, errOut, code := cli(t, append(append(base, "--json"), args...)...)
		require.Equal(t, 0, code, "--mcp %s: exit %d: %s", args[0], code, errOut)
		viaDSN, errOut, code := cli(t, append(direct, args...)...)
		require.Equal(t, 0, code, "--dsn %s: exit %d: %s", args[0], code, errOut)
		assert.Equal(t, tablesAndRows(t, viaDSN), tablesAndRows(t, viaMCP), "%s: --mcp and --dsn agree", args[0])
	}
	out, _, code := cli(t, append(base, "run", "SELECT name FROM singer ORDER BY singer_id")...)
	require.Equal(t, 0, code)
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

// tablesAndRows is what context and run --json say that must not depend
// on how the database is reached: the tables shown and the rows.
func tablesAndRows(t *testing.T, out string) map[string]any {
	t.Helper()
	var v struct {
		Tables []struct{ Name, Reason string } `json:"tables"`
		Rows   [][]any                         `json:"rows"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &v), out)
	return map[string]any{"tables": v.Tables, "rows": v.Rows}
}

// --mcp with text2sql's own MCP server on stdio (text2sql mcp --demo, the
// test binary as the command): the schema comes from describe_schema and
// run gives the demo's rows; a write is refused before it leaves.
func TestMCPOwnServer(t *testing.T) {
	t.Setenv("TEXT2SQL_CLI_HELPER", "1")
	t.Setenv("GEMINI_API_KEY", "")
	t.Setenv("OPENAI_API_KEY", "")
	server := os.Args[0] + " -test.run=^TestHelperProcess$ -- mcp --demo --index-dir " + t.TempDir()
	base := []string{"--mcp", "demo=" + server, "--index-dir", t.TempDir(), "--examples", t.TempDir() + "/ex.sqlite"}
	out, errOut, code := cli(t, append(base, "run", "SELECT code FROM courses ORDER BY code LIMIT 2")...)
	require.Equal(t, 0, code, "exit %d: %s", code, errOut)
	direct, _, code := cli(t, "--demo", "--index-dir", t.TempDir(), "run", "SELECT code FROM courses ORDER BY code LIMIT 2")
	require.Equal(t, 0, code)
	assert.Equal(t, direct, out, "the same rows as the demo read directly")
	out, _, code = cli(t, append(base, "run", "UPDATE courses SET credits = 0")...)
	assert.Equal(t, exitSQL, code)
	assert.Contains(t, out, "not_read_only")
}
