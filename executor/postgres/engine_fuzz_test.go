package postgres

import (
	"context"
	"database/sql"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/dbtest"
)

// No state outlives a query: what one principal's statement leaves on a
// pooled connection — a session setting, an advisory lock — is gone
// before the next statement of another principal runs on the same
// connection. The statement check is off, so the transaction's rollback
// and the unlock-all are what holds.
func TestSessionIsolation(t *testing.T) {
	db, _ := testDB(t, attackDB...)
	db.SetMaxOpenConns(1) // every statement reuses the one connection
	e := newExec(t, db, Options{skipCheck: true})
	other, err := sql.Open("pgx", dsnOf(t, db))
	require.NoError(t, err)
	defer other.Close()

	var wg sync.WaitGroup
	for i, stmt := range []string{
		`SELECT set_config('app.secret', 'alice', false), pg_advisory_lock(42), setseed(0.5)`,
		`SELECT current_setting('app.secret', true), pg_try_advisory_lock(43)`,
	} {
		wg.Add(1)
		go func(principal int, stmt string) {
			defer wg.Done()
			for range 50 {
				res, err := e.Execute(context.Background(), text2sql.ExecuteRequest{SQL: stmt})
				if !assert.False(t, err != nil || res.Error != nil, "error: %s", stmt) {
					continue
				}
				if principal == 1 {
					assert.Contains(t, []any{nil, ""}, res.Rows[0][0], "bob read alice's setting")
				}
			}
		}(i, stmt)
	}
	wg.Wait()
	var locks int
	require.NoError(t, other.QueryRow(`SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'`).Scan(&locks))
	assert.Zero(t, locks, "advisory locks outlived their statements")
}

// FuzzEngine checks the statement check against the engine: in a
// database where EXECUTE on every pg_catalog function the allow-list
// refuses is revoked from PUBLIC (function privileges are per database),
// a statement the Checker accepts is run by a login without superuser
// power. The server checks EXECUTE on every function it calls, however
// the call was written, including operators, casts and the calls inside
// SQL-language functions; so a "permission denied for function" (42501)
// would be a call the check let through, and a read-only violation
// (25006) a write. Neither may happen. Seeds are the attacks and the
// samples of the other checker tests; run it with
//
//	go test ./executor/postgres -run '^$' -fuzz FuzzEngine -fuzztime 10m
func FuzzEngine(f *testing.F) {
	for _, s := range append(append([]string{}, fastPathSamples...),
		`SELECT ('bgwriter'::text).pg_stat_reset_shared`, `SELECT f.pg_read_file FROM unnest(ARRAY['/etc/passwd']) f`,
		`SELECT (3.0).pg_sleep`, `SELECT x.nextval FROM (SELECT 'orders_id_seq'::regclass) s(x)`,
		`SELECT u.name, (u).email, upper(u.name) FROM users u JOIN orders o ON o.user_id = u.id`,
		`SELECT count(*), sum(amount)::text FROM orders GROUP BY user_id HAVING count(*) > 1`,
		`SELECT * FROM generate_series(1, 3) g(n), LATERAL (SELECT n * 2) d(m)`,
		`SELECT to_char(now(), 'YYYY'), age(now()), random() < 2, md5('x'), jsonb_build_object('a', 1)`,
		`WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT n FROM r`) {
		f.Add(s)
	}
	db, _ := testDB(f, attackDB...)
	cat, err := LoadCatalog(context.Background(), db)
	require.NoError(f, err)
	revokeRefused(f, db, cat)
	role := dbtest.Name("text2sql_fuzz")
	dbtest.Exec(f, db, `CREATE ROLE `+role+` LOGIN`, `GRANT SELECT ON ALL TABLES IN SCHEMA public TO `+role,
		`GRANT SELECT ON ALL SEQUENCES IN SCHEMA public TO `+role)
	f.Cleanup(func() { db.Exec(`DROP OWNED BY ` + role + `; DROP ROLE ` + role) })
	e, err := Open(context.Background(), withUser(f, dsnOf(f, db), role), Options{Timeout: time.Second})
	require.NoError(f, err)
	f.Cleanup(func() { e.Close() })
	c := e.Checker()
	// The oracle can fail: with the check off, the server refuses a call
	// in attribute notation.
	bare, err := Open(context.Background(), withUser(f, dsnOf(f, db), role), Options{skipCheck: true})
	require.NoError(f, err)
	res, err := bare.Execute(context.Background(), text2sql.ExecuteRequest{SQL: `SELECT (0.0).pg_sleep`})
	bare.Close()
	require.NoError(f, err)
	require.NotNil(f, res.Error)
	require.Equal(f, "42501", res.Error.SQLState, res.Error.Message)

	f.Fuzz(func(t *testing.T, s string) {
		if c.CheckSQL(s) != nil {
			return
		}
		res, err := e.Execute(context.Background(), text2sql.ExecuteRequest{SQL: s})
		if err != nil {
			return // a broken connection is not a bypass; the pool replaces it
		}
		if se := res.Error; se != nil {
			assert.False(t, se.SQLState == "42501" && strings.Contains(se.Message, "function"), "accepted %q, but the server refused a function call: %s", s, se.Message)
			assert.False(t, se.SQLState == "25006" || se.Kind == text2sql.KindNotReadOnly, "accepted %q, but it tried to write: %s", s, se.Message)
		}
	})
}

// revokeRefused revokes EXECUTE from PUBLIC on every pg_catalog function
// whose name the allow-list refuses, in db's database only.
func revokeRefused(tb testing.TB, db *sql.DB, cat *Catalog) {
	tb.Helper()
	rows, err := db.Query(`SELECT p.oid::regprocedure::text, p.proname FROM pg_proc p
		WHERE p.pronamespace = 'pg_catalog'::regnamespace AND p.prokind <> 'p'`)
	require.NoError(tb, err)
	defer rows.Close()
	var stmts []string
	for rows.Next() {
		var sig, name string
		require.NoError(tb, rows.Scan(&sig, &name))
		if !cat.allowed[name] {
			stmts = append(stmts, `REVOKE EXECUTE ON FUNCTION `+sig+` FROM PUBLIC`)
		}
	}
	require.NoError(tb, rows.Err())
	_, err = db.Exec(strings.Join(stmts, ";\n"))
	require.NoError(tb, err)
}
