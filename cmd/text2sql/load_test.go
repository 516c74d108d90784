package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/internal/dbtest"
	"github.com/text2sql-go/text2sql/internal/shareddata"
)

// text2sql load copies a Spider database into a PostgreSQL schema; run,
// context and prompt then work on it with --dsn; DROP TABLE is refused
// through the CLI as through the library (C1 #11).
func TestLoadAndRunPostgres(t *testing.T) {
	src := shareddata.SpiderDB(t, "concert_singer")
	db, dsn := dbtest.Postgres(t)
	out, errOut, code := cli(t, "load", "--db", src, "--dsn", dsn, "--schema", "concert", "--fold-names", "--json")
	require.Equal(t, 0, code, "load: exit %d: %s", code, errOut)
	var rep struct {
		Schema string
		Tables []struct {
			Source, Name string
			Rows         int
		}
		Notes []string
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	assert.False(t, rep.Schema != "concert" || len(rep.Tables) != 4 || rep.Tables[1].Name != "singer" || rep.Tables[1].Rows != 6, "report %+v", rep)
	var n int
	err := db.QueryRow(`SELECT count(*) FROM concert.singer`).Scan(&n)
	require.NoError(t, err, "singer rows: %d", n)
	require.Equal(t, 6, n, "singer rows: %d %v", n, err)
	// Loading again needs --replace.
	_, _, code = cli(t, "load", "--db", src, "--dsn", dsn, "--schema", "concert")
	assert.Equal(t, exitUsage, code, "second load: exit %d", code)
	_, errOut, code = cli(t, "load", "--db", src, "--dsn", dsn, "--schema", "concert", "--replace")
	assert.Equal(t, 0, code, "load --replace: exit %d %s", code, errOut)
	// Exact names without --fold-names.
	out, _, code = cli(t, "load", "--db", src, "--dsn", dsn, "--schema", "Exact")
	assert.False(t, code != 0 || !strings.Contains(out, `"Singer_ID" bigint`), "exact load: %d\n%s", code, out)

	pg := dbtest.PostgresDSNWith(t, dsn, "search_path", "concert")
	out, errOut, code = cli(t, "run", "--dsn", pg, "--json", "SELECT count(*) AS n FROM singer")
	require.Equal(t, 0, code, "run: %d %s %s", code, out, errOut)
	require.Contains(t, out, `"n"`, "run: %d %s %s", code, out, errOut)
	require.Contains(t, out, "6", "run: %d %s %s", code, out, errOut)
	for _, q := range []string{"DROP TABLE singer", "drop table if exists concert.singer cascade"} {
		out, _, code = cli(t, "run", "--dsn", pg, "--json", q)
		assert.False(t, code != exitSQL || !strings.Contains(out, `"not_read_only"`), "run %q: exit %d\n%s", q, code, out)
	}
	out, _, code = cli(t, "run", "--dsn", pg, "--json", "SELECT pg_sleep(1)")
	assert.False(t, code != exitSQL || !strings.Contains(out, `"forbidden_function"`), "pg_sleep: exit %d\n%s", code, out)
	err = db.QueryRow(`SELECT count(*) FROM concert.singer`).Scan(&n)
	require.NoError(t, err, "singer rows after the attacks: %d", n)
	require.Equal(t, 6, n, "singer rows after the attacks: %d %v", n, err)
	out, errOut, code = cli(t, "prompt", "--dsn", pg, "How many singers are there?")
	assert.False(t, code != 0 || !strings.Contains(out, "CREATE TABLE concert.singer"), "prompt: %d %s\n%s", code, errOut, out)
	// Usage errors.
	for _, args := range [][]string{
		{"run", "--dsn", pg, "--db", src, "SELECT 1"},
		{"run", "--dsn", "redis://x", "SELECT 1"},
		{"load", "--db", src, "--dsn", pg},
		{"load", "--db", src, "--dsn", "mysql://root@127.0.0.1/test", "--schema", "x"},
	} {
		_, _, code := cli(t, args...)
		assert.Equal(t, exitUsage, code, "%q: exit %d, want %d", args, code, exitUsage)
	}
}

// run --dsn works on MySQL/MariaDB too.
func TestRunMySQL(t *testing.T) {
	db, dsn := dbtest.MySQL(t)
	dbtest.Exec(t, db, "CREATE TABLE t (x INT)", "INSERT INTO t VALUES (1), (2)")
	out, errOut, code := cli(t, "run", "--dsn", dsn, "--json", "SELECT sum(x) AS s FROM t")
	require.Equal(t, 0, code, "run: %d %s %s", code, out, errOut)
	require.Contains(t, out, `"s"`, "run: %d %s %s", code, out, errOut)
	out, _, code = cli(t, "run", "--dsn", dsn, "--json", "DROP TABLE t")
	assert.False(t, code != exitSQL || !strings.Contains(out, `"not_read_only"`), "drop: %d %s", code, out)
}
