package mcpexec_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/executor/mcpexec"
	"github.com/text2sql-go/text2sql/internal/dbtest"
	"github.com/text2sql-go/text2sql/internal/exectest"
)

// Attacks on the PostgreSQL path, against the reference server (which
// runs each query in a READ ONLY transaction that COMMIT ends).
func TestReferenceServerAttacks(t *testing.T) {
	bin := dbtest.MCPServerPostgres(t)
	db, dsn, _ := dbtest.PostgresKit(t)
	var name string
	require.NoError(t, db.QueryRow("SELECT current_database()").Scan(&name))
	serverTimeout(t, db, "10s")
	dbtest.Exec(t, db,
		// With standard_conforming_strings off, '\' ends no literal: one
		// statement to a guard that assumes on is three to the server.
		fmt.Sprintf("ALTER DATABASE %s SET standard_conforming_strings = off", name),
		// A function of the database the allow-list refuses, reachable by
		// attribute notation ((k).evil is evil(k)).
		`CREATE FUNCTION evil(k kit) RETURNS int LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'EVIL RAN'; END $$`,
		// An operator and a domain CHECK run functions the allow-list
		// never sees.
		`CREATE FUNCTION evilop(a int, b int) RETURNS int LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'EVIL RAN'; END $$`,
		`CREATE OPERATOR ~~~ (LEFTARG = int, RIGHTARG = int, FUNCTION = evilop)`,
		`CREATE FUNCTION evilchk(v int) RETURNS bool LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'EVIL RAN'; END $$`,
		`CREATE DOMAIN evild AS int CHECK (evilchk(VALUE))`,
	)
	ex, err := mcpexec.Open(context.Background(), mcpexec.Options{Command: []string{bin, dsn}, MaxRows: 1000})
	require.NoError(t, err)
	defer ex.Close()
	count := func() int {
		var n int
		require.NoError(t, db.QueryRow("SELECT count(*) FROM kit").Scan(&n))
		return n
	}
	before := count()
	exectest.RefusedUntripped(t, ex, "EVIL RAN",
		`SELECT '\' , '; COMMIT; DELETE FROM kit; --'`,
		`SELECT 'a\', 'b'`,
		"SELECT (k).evil FROM kit k LIMIT 1",
		"SELECT k.evil FROM kit k LIMIT 1",
		"SELECT evil(k) FROM kit k LIMIT 1",
		"SELECT 1 ~~~ 1",
		"SELECT 1::evild",
	)
	assert.Equal(t, before, count(), "nothing was deleted")

	// E'…' strings read the same whatever the setting: allowed.
	res, err := ex.Execute(context.Background(), text2sql.ExecuteRequest{SQL: `SELECT E'a\\b' AS s`})
	require.NoError(t, err)
	require.Nil(t, res.Error)
	assert.Equal(t, `a\b`, res.Rows[0][0])

	// A result far past the row cap is bounded before it crosses the
	// connection: the session survives it.
	res, err = ex.Execute(context.Background(), text2sql.ExecuteRequest{SQL: "SELECT n, repeat('x', 100) FROM generate_series(1, 300000) n", MaxRows: 10})
	require.NoError(t, err)
	require.Nil(t, res.Error)
	assert.Len(t, res.Rows, 10)
	assert.True(t, res.Truncated)
	res, err = ex.Execute(context.Background(), text2sql.ExecuteRequest{SQL: "SELECT count(*) AS n FROM kit"})
	require.NoError(t, err)
	require.Nil(t, res.Error, "the session still works")
	assert.True(t, strings.Contains(fmt.Sprint(res.Rows), fmt.Sprint(before)))
}

// The MCP path decides names on the server's own catalog as the main
// executor does (owner code through implied operators, domains, casts is
// refused) and reads only the relations it exposes, sent qualified.
func TestReferenceServerOwnerCodeAndRelations(t *testing.T) {
	bin := dbtest.MCPServerPostgres(t)
	db, dsn, _ := dbtest.PostgresKit(t)
	serverTimeout(t, db, "10s")
	dbtest.Exec(t, db,
		`CREATE FUNCTION m_it(int, text) RETURNS bool LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'EVIL RAN'; END $$`,
		`CREATE OPERATOR public.= (LEFTARG = int, RIGHTARG = text, FUNCTION = m_it)`,
		`CREATE FUNCTION m_i(int) RETURNS bool LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'EVIL RAN'; END $$`,
		`CREATE DOMAIN dom AS int CHECK (m_i(VALUE))`,
		`CREATE SCHEMA extensions`, `CREATE EXTENSION pg_stat_statements SCHEMA extensions`)
	ex, err := mcpexec.Open(context.Background(), mcpexec.Options{Command: []string{bin, dsn}, MaxRows: 1000})
	require.NoError(t, err)
	defer ex.Close()
	exectest.RefusedUntripped(t, ex, "EVIL RAN",
		`SELECT 80 IN (SELECT 'x'::text)`, `SELECT CASE 31 WHEN 'x'::text THEN 1 END`, `SELECT '{11}'::_dom`,
		`SELECT * FROM jsonb_to_record('{"a":16}') AS x(a dom)`)
	exectest.RunKind(t, ex, `SELECT query FROM extensions.pg_stat_statements`, text2sql.KindForbiddenTable)
	assert.Nil(t, ex.Schema().Lookup("extensions.pg_stat_statements"), "an extension's view is not exposed")
	res := exectest.Run(t, ex, `SELECT count(*) FROM kit`)
	assert.Nil(t, res.Error)
}
