package postgres

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
)

// A database's own operators and domains run functions the allow-list
// never sees: the operator's function, the domain's CHECK. Statements
// using them are refused before they reach the server (found by an
// attack session on the MCP executor, which shares this guard); built-in
// operators, casts to base types and to the database's enum types still
// run.
func TestUserOperatorsAndDomains(t *testing.T) {
	db, _ := testDB(t,
		`CREATE TABLE kit (id int PRIMARY KEY, name text)`,
		`INSERT INTO kit VALUES (1, 'a'), (2, 'b')`,
		`CREATE FUNCTION evilop(a int, b int) RETURNS int LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'EVIL RAN op'; END $$`,
		`CREATE OPERATOR ~~~ (LEFTARG = int, RIGHTARG = int, FUNCTION = evilop)`,
		`CREATE FUNCTION evilchk(v int) RETURNS bool LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'EVIL RAN check'; END $$`,
		`CREATE DOMAIN evild AS int CHECK (evilchk(VALUE))`,
		`CREATE TYPE mood AS ENUM ('happy', 'sad')`,
	)
	e := newExec(t, db, Options{})
	ctx := context.Background()
	for _, q := range []string{
		"SELECT 1 ~~~ 1",
		"SELECT id FROM kit WHERE id ~~~ 1 = 0",
		"SELECT id FROM kit ORDER BY id USING ~~~",
		"SELECT 1 ~~~ ANY (SELECT id FROM kit)",
		"SELECT 1::evild",
		"SELECT CAST(id AS public.evild) FROM kit",
		"SELECT id::EVILD FROM kit",
	} {
		res, err := e.Execute(ctx, text2sql.ExecuteRequest{SQL: q})
		require.NoError(t, err, q)
		require.NotNil(t, res.Error, q)
		assert.True(t, res.Error.Kind.Refusal(), "%s: refused before the server, not %v", q, res.Error)
		assert.NotContains(t, res.Error.Message, "EVIL RAN", q)
	}
	for _, q := range []string{"SELECT id + 1, name || 'x' FROM kit WHERE id > 0 ORDER BY id", "SELECT 'happy'::mood, 1::bigint"} {
		res, err := e.Execute(ctx, text2sql.ExecuteRequest{SQL: q})
		require.NoError(t, err, q)
		assert.Nil(t, res.Error, q)
	}
}
