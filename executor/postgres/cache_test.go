package postgres

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/dbtest"
	"github.com/text2sql-go/text2sql/internal/exectest"
)

// A statement the check accepted is kept by the Guard and not checked
// again, but what the catalog may have changed since it was read is
// confirmed on every run, in the statement's own transaction: after a
// role that is no superuser creates a namesake of a function the
// statement calls, or an operator on the types it compares, the same
// text is refused before anything of it runs; after a table it reads
// changes, the executor reads the catalog again, into a new Guard.
func TestPassedCatalogChange(t *testing.T) {
	role := dbtest.Name("t2s_owner")
	db, _ := testDB(t, `CREATE TABLE big (id int PRIMARY KEY, label text)`, `INSERT INTO big VALUES (1, 'A')`,
		`CREATE ROLE `+role+` NOLOGIN`, `GRANT CREATE ON SCHEMA public TO `+role)
	t.Cleanup(func() { _, _ = db.Exec(`DROP OWNED BY ` + role + `; DROP ROLE ` + role) })
	e := newExec(t, db, Options{})
	asRole := func(stmts string) { dbtest.Exec(t, db, `SET ROLE `+role+`; `+stmts+`; RESET ROLE`) }
	accepted := func(q string, want [][]any) *Guard {
		t.Helper()
		for range 2 {
			res := exectest.Run(t, e, q)
			require.Nil(t, res.Error, q)
			require.Equal(t, want, res.Rows, q)
		}
		_, kept := e.guard().passed.Get(q)
		require.True(t, kept, "%q is kept", q)
		return e.guard()
	}

	call := `SELECT lower(label) FROM big WHERE id = 1`
	accepted(call, [][]any{{"a"}})
	asRole(`CREATE FUNCTION public.lower(text) RETURNS text LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'OWNER CODE RAN'; END$$`)
	res := exectest.RunKind(t, e, call, text2sql.KindForbiddenFunction)
	assert.Contains(t, res.Error.Message, "function public.lower")
	assert.NotContains(t, res.Error.Message, ran)

	cmp := `SELECT label FROM big WHERE id = 1`
	before := accepted(cmp, [][]any{{"A"}})
	asRole(`CREATE FUNCTION public.m_ii(int, int) RETURNS bool LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'OWNER CODE RAN'; END$$;
		CREATE OPERATOR public.= (LEFTARG = int, RIGHTARG = int, FUNCTION = public.m_ii)`)
	res = exectest.RunKind(t, e, cmp, text2sql.KindForbiddenFunction)
	assert.Contains(t, res.Error.Message, "public.=")
	assert.NotContains(t, res.Error.Message, ran)
	assert.NotSame(t, before, e.guard(), "the catalog was read again")
	asRole(`DROP OPERATOR public.= (int, int)`)

	all := `SELECT * FROM big`
	before = accepted(all, [][]any{{int64(1), "A"}})
	dbtest.Exec(t, db, `ALTER TABLE big ADD COLUMN extra text DEFAULT 'x'`)
	res = exectest.Run(t, e, all)
	require.Nil(t, res.Error)
	assert.Equal(t, [][]any{{int64(1), "A", "x"}}, res.Rows)
	assert.NotSame(t, before, e.guard(), "the catalog was read again")
}
