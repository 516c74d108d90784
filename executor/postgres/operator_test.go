package postgres

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/text2sql-go/text2sql/internal/exectest"
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
	exectest.RefusedUntripped(t, e, "EVIL RAN",
		"SELECT 1 ~~~ 1",
		"SELECT id FROM kit WHERE id ~~~ 1 = 0",
		"SELECT id FROM kit ORDER BY id USING ~~~",
		"SELECT 1 ~~~ ANY (SELECT id FROM kit)",
		"SELECT 1::evild",
		"SELECT CAST(id AS public.evild) FROM kit",
		"SELECT id::EVILD FROM kit",
	)
	for _, q := range []string{"SELECT id + 1, name || 'x' FROM kit WHERE id > 0 ORDER BY id", "SELECT 'happy'::mood, 1::bigint"} {
		assert.Nil(t, exectest.Run(t, e, q).Error, q)
	}
}
