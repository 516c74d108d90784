package postgres

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/dbtest"
	"github.com/text2sql-go/text2sql/internal/exectest"
)

// serverState digests what the attribute-notation attacks of issue 9
// changed on the server, beyond the database (state): statistics reset
// times, replication slots and the files at the top of the data
// directory.
func serverState(t testing.TB, db *sql.DB) string {
	t.Helper()
	var s string
	require.NoError(t, db.QueryRow(`SELECT coalesce((SELECT stats_reset::text FROM pg_stat_bgwriter), '') || '/' ||
		coalesce((SELECT stats_reset::text FROM pg_stat_database WHERE datname = current_database()), '') || '/' ||
		(SELECT count(*) FROM pg_replication_slots)::text || '/' ||
		coalesce((SELECT string_agg(slot_name, ',') FROM pg_replication_slots), '') || '/' ||
		(SELECT string_agg(f, ',' ORDER BY f) FROM pg_ls_dir('.') f)`).Scan(&s))
	return s
}

// PostgreSQL reads x.f and (expr).f as the call f(x) when f is not a
// column or field of x (attribute, or functional, notation). Issue 9
// found the allow-list blind to it: statistics were reset, a replication
// slot created, another session killed, a file read and the server slept.
// Every such call is now decided by the allow-list like any other, and
// refused before it reaches the server; the victim session lives on and
// nothing on the server changed.
func TestAttributeNotation(t *testing.T) {
	db, _ := testDB(t, attackDB...)
	unchanged(t, db)
	server := serverState(t, db)
	victim, err := db.Conn(context.Background())
	require.NoError(t, err)
	defer victim.Close()
	var pid int
	require.NoError(t, victim.QueryRowContext(context.Background(), `SELECT pg_backend_pid()`).Scan(&pid))
	p := strconv.Itoa(pid)
	e := newExec(t, db, Options{})

	attacks := map[string][]string{
		"pg_stat_reset_shared": {
			`SELECT ('bgwriter'::text).pg_stat_reset_shared`,
			`SELECT s.k.pg_stat_reset_shared FROM (SELECT 'bgwriter'::text AS k) s`,
			`SELECT (s.k).pg_stat_reset_shared FROM (SELECT 'bgwriter'::text) s(k)`,
			`WITH c AS (SELECT 'bgwriter'::text AS k) SELECT 1 FROM c WHERE c.k.pg_stat_reset_shared IS NULL`,
			`SELECT u.pg_stat_reset FROM users u`,
			`SELECT x.pg_stat_reset_single_table_counters FROM (VALUES ('users'::regclass::oid)) v(x)`,
		},
		"pg_create_physical_replication_slot": {
			`SELECT ('slot'::name).pg_create_physical_replication_slot`,
			`SELECT n.pg_create_physical_replication_slot FROM unnest(ARRAY['slot2'::name]) n`,
			`SELECT ((('slot3'::name))).pg_create_physical_replication_slot`,
			`SELECT ('slot4'::name)."pg_create_physical_replication_slot"`,
			`SELECT 1 ORDER BY ('slot5'::name).pg_create_logical_replication_slot`,
		},
		"pg_terminate_backend": {
			`SELECT f.pg_terminate_backend FROM unnest(ARRAY[` + p + `]) f`,
			`SELECT (s.p).pg_terminate_backend FROM (SELECT ` + p + `) AS s(p)`,
			`SELECT x.pg_cancel_backend FROM generate_series(` + p + `, ` + p + `) x`,
			`SELECT 1 WHERE (SELECT f.pg_terminate_backend FROM unnest(ARRAY[` + p + `]) f)`,
			`SELECT * FROM users, LATERAL (SELECT g.pg_terminate_backend FROM generate_series(` + p + `, ` + p + `) g) k`,
			`SELECT count(*) FILTER (WHERE (` + p + `).pg_terminate_backend) FROM users`,
		},
		"pg_read_file": {
			`SELECT f.pg_read_file FROM unnest(ARRAY['/etc/passwd']) f`,
			`SELECT (('/etc/hostname')::text).pg_read_file`,
			`SELECT u.f.pg_read_binary_file FROM (VALUES ('/etc/passwd')) u(f)`,
			`SELECT f.pg_ls_dir FROM unnest(ARRAY['/']) f`,
			`SELECT array_agg(f.pg_stat_file) FROM unnest(ARRAY['/etc/passwd']) f`,
			`SELECT users.name FROM users JOIN unnest(ARRAY['/etc/passwd']) f ON f.pg_read_file <> ''`,
		},
		"pg_sleep": {
			`SELECT (3.0).pg_sleep`,
			`SELECT x.pg_sleep FROM generate_series(3, 3) x`,
			`SELECT (t.x).pg_sleep FROM t`,
			`SELECT ('3 seconds'::interval).pg_sleep_for`,
			`SELECT name FROM users GROUP BY name HAVING (3.0).pg_sleep IS NULL`,
		},
		"state": {
			`SELECT ('orders_id_seq'::regclass).nextval`,
			`SELECT (1::bigint).pg_advisory_lock`,
			`SELECT ('/etc/passwd'::text).lo_import`,
			`SELECT ('TimeZone'::text).current_setting`,
			`SELECT (0.5).setseed`,
			`SELECT ('x'::text).pg_notify`,
		},
	}
	n := 0
	for name, qs := range attacks {
		for _, q := range qs {
			se := wantRefused(t, e, q, text2sql.KindForbiddenFunction)
			assert.Contains(t, se.Message, "attribute notation", "%s: %q", name, q)
			n++
		}
	}
	t.Logf("%d attribute-notation attacks refused", n)
	assert.Equal(t, server, serverState(t, db), "server state changed")
	require.NoError(t, victim.PingContext(context.Background()), "the victim session was terminated")

	// What attribute notation legitimately does still runs: columns of
	// tables, subqueries, functions in FROM and VALUES, whole-row field
	// selection, and allowed functions written as attributes.
	for q, want := range map[string]any{
		`SELECT u.name FROM users u WHERE u.id = 1`:                         "ada",
		`SELECT public.users.name FROM public.users WHERE id = 2`:           "grace",
		`SELECT (u).name FROM users u WHERE u.id = 1`:                       "ada",
		`SELECT s.k FROM (SELECT 'x'::text AS k) s`:                         "x",
		`SELECT f.f FROM unnest(ARRAY['y']) f`:                              "y",
		`SELECT v.column1 FROM (VALUES ('z')) v`:                            "z",
		`SELECT (s.k).upper FROM (SELECT 'abc'::text) s(k)`:                 "ABC",
		`SELECT (u.name).length FROM users u WHERE u.id = 1`:                int64(3),
		`SELECT (j.r).a FROM (SELECT json_to_record('{"a":"b"}') AS r) j`:   nil, // record without a type: the server decides
		`SELECT host('10.0.0.1/24'::inet)`:                                  "10.0.0.1",
		`SELECT format_type(23, -1)`:                                        "integer",
		`SELECT (xpath('/a/text()', '<a>x</a>'::xml))[1]::text`:             "x",
		`SELECT pg_catalog.pg_get_userbyid(10) IS NOT NULL`:                 true,
		`SELECT to_regclass('users')::text`:                                 "users",
		`SELECT ts_headline('english', 'the quick fox', to_tsquery('fox'))`: "the quick <b>fox</b>",
	} {
		res := exectest.Run(t, e, q)
		if want == nil {
			continue
		}
		if assert.Nil(t, res.Error, q) && assert.Len(t, res.Rows, 1, q) {
			assert.Equal(t, want, res.Rows[0][0], q)
		}
	}
}

// The offline Guard (the built-in catalog) refuses the same calls, and
// its fast path agrees with the full check on each.
func TestAttributeNotationOffline(t *testing.T) {
	c := NewGuard(nil, nil)
	for _, q := range []string{
		`SELECT ('bgwriter'::text).pg_stat_reset_shared`,
		`SELECT f.pg_read_file FROM unnest(ARRAY['/etc/passwd']) f`,
		`SELECT a.b.c.pg_sleep FROM a`,
		`SELECT ((x).y).pg_sleep FROM t`,
		`SELECT (x).y.pg_sleep FROM t`,
	} {
		se := c.CheckSQL(q)
		if assert.NotNil(t, se, q) {
			assert.Equal(t, text2sql.KindForbiddenFunction, se.Kind, q)
		}
	}
	for _, q := range []string{`SELECT t.x, t.y.z, (t.c).f FROM t`, `SELECT t.* FROM t`, `SELECT (t.c).* FROM t`, `SELECT s.t.lower FROM s.t`} {
		assert.Nil(t, c.CheckSQL(q), q)
	}
}

// A result is bounded in bytes while it arrives: fifty 10 MB values stop
// with KindTooLarge after the first few; the connection is dropped and
// the next statement runs.
func TestMaxResultBytes(t *testing.T) {
	db, _ := testDB(t)
	e := newExec(t, db, Options{})
	res := exectest.RunKind(t, e, `SELECT repeat('x', 10000000) FROM generate_series(1, 50)`, text2sql.KindTooLarge)
	assert.Contains(t, res.Error.Message, "MaxResultBytes")
	small := newExec(t, db, Options{MaxResultBytes: 1000})
	exectest.RunKind(t, small, `SELECT repeat('x', 100) FROM generate_series(1, 20)`, text2sql.KindTooLarge)
	res = exectest.Run(t, small, `SELECT repeat('x', 100) FROM generate_series(1, 5)`)
	require.Nil(t, res.Error)
	assert.Len(t, res.Rows, 5)
}

// The transaction bounds memory and temporary files: work_mem always,
// temp_file_limit where the login may set it (the test login is a
// superuser); a sort spilling past the limit fails instead of filling the
// disk.
func TestTempFileLimit(t *testing.T) {
	db, _ := testDB(t)
	// current_setting is refused by the check, which the settings probe
	// switches off.
	e := newExec(t, db, Options{TempFileLimit: 1 << 20, WorkMem: 64 << 10, skipCheck: true})
	require.True(t, e.TempFileLimited())
	res := exectest.Run(t, e, `SELECT current_setting('work_mem'), current_setting('temp_file_limit')`)
	require.Nil(t, res.Error)
	assert.Equal(t, []any{"64kB", "1MB"}, res.Rows[0])
	res = exectest.Run(t, e, `SELECT g FROM generate_series(1, 2000000) g ORDER BY md5(g::text) LIMIT 1`)
	require.NotNil(t, res.Error)
	assert.Contains(t, strings.ToLower(res.Error.Message), "temp_file_limit")
	assert.Contains(t, e.ElevatedPrivileges(), "superuser")

	// A login that is not a superuser keeps the server's temp_file_limit
	// and has no elevated privileges.
	role := loginRole(t, db, readOnlyRole(t, db))
	ro, err := Open(context.Background(), withUser(t, dsnOf(t, db), role), Options{skipCheck: true})
	require.NoError(t, err)
	defer ro.Close()
	assert.False(t, ro.TempFileLimited())
	assert.Empty(t, ro.ElevatedPrivileges())
	res, err = ro.Execute(context.Background(), text2sql.ExecuteRequest{SQL: `SELECT current_setting('work_mem')`})
	require.NoError(t, err)
	require.Nil(t, res.Error)
	assert.Equal(t, "16MB", res.Rows[0][0])
}

// The server reads the statement as the check did, whatever the session's
// lexical settings: with standard_conforming_strings off in the database
// or a GBK client encoding in the DSN, a backslash cannot end a string
// early and hide a call from the check.
func TestLexingPinned(t *testing.T) {
	db, _ := testDB(t, attackDB...)
	var name string
	require.NoError(t, db.QueryRow(`SELECT current_database()`).Scan(&name))
	dbtest.Exec(t, db, `ALTER DATABASE `+name+` SET standard_conforming_strings = off`)
	server := serverState(t, db)
	for _, dsn := range []string{dsnOf(t, db), dsnOf(t, db) + "&client_encoding=GBK"} {
		if !strings.Contains(dsn, "?") {
			dsn = strings.Replace(dsn, "&", "?", 1)
		}
		e, err := Open(context.Background(), dsn, Options{})
		require.NoError(t, err, dsn)
		for q, want := range map[string]string{
			"SELECT 'a\\' AS x, 1 AS w -- ', pg_stat_reset_shared('bgwriter') AS y --\nFROM users LIMIT 1": `a\`,
			"SELECT E'\u20ac\\' , (pg_sleep(1)::text) AS y -- ' AS z FROM users LIMIT 1":                   "\u20ac' , (pg_sleep(1)::text) AS y -- ",
		} {
			res, err := e.Execute(context.Background(), text2sql.ExecuteRequest{SQL: q})
			require.NoError(t, err)
			if assert.Nil(t, res.Error, q) {
				assert.Equal(t, want, res.Rows[0][0], q)
			}
		}
		e.Close()
	}
	assert.Equal(t, server, serverState(t, db))
}

// Statements whose depth bound passes guard.MaxDepth are refused
// before the parser sees them (libpg_query crashed the process on
// 1+1+…+1 with 30,000 terms, and on chains the operator count missed:
// inside ARRAY[…], ISNULL, AT TIME ZONE, CROSS JOIN), through Execute,
// Check and the offline Guard alike.
func TestDeepStatements(t *testing.T) {
	db, _ := testDB(t)
	e := newExec(t, db, Options{})
	for _, q := range append(exectest.DeepStatements(),
		"SELECT 1 WHERE "+strings.Repeat("NOT ", 20000)+"true",
		"SELECT ARRAY[1"+strings.Repeat("+1", 30000)+"]",
		"SELECT true"+strings.Repeat(" ISNULL", 40000),
		"SELECT true"+strings.Repeat(" NOTNULL", 40000),
		"SELECT now()"+strings.Repeat(" AT TIME ZONE 'UTC'", 30000),
		"SELECT 1 FROM users"+strings.Repeat(" CROSS JOIN users", 30000),
		"SELECT 1 FROM users"+strings.Repeat(" NATURAL JOIN users", 30000),
		// Round 3: a lexer other than PostgreSQL's hid these.
		"SELECT ARRAY['a]'] AS x, 1"+strings.Repeat("+1", 30000)+" AS y",
		"SELECT "+strings.Repeat("@a", 30000),
		"SELECT 1"+strings.Repeat("?1", 40000),
	) {
		wantRefused(t, e, q, text2sql.KindTooLarge)
		assert.Equal(t, text2sql.KindTooLarge, NewGuard(nil, nil).CheckSQL(q).Kind)
	}
	res := exectest.Run(t, e, "SELECT 1"+strings.Repeat("+1", 500))
	require.Nil(t, res.Error)
	assert.Equal(t, int64(501), res.Rows[0][0])
	res = exectest.Run(t, e, "SELECT count(*) FROM (VALUES (1)) v(x) WHERE x IN (1"+strings.Repeat(", 2", 10000)+")")
	require.Nil(t, res.Error)
	assert.Equal(t, int64(1), res.Rows[0][0])
	// What follows the statement is cut by PostgreSQL's scanner: a -- inside
	// a string is not a comment.
	res = exectest.Run(t, e, "SELECT ARRAY['a]', ' -- '] AS x -- trailing\n;")
	require.Nil(t, res.Error)
	assert.Equal(t, "{a],\" -- \"}", res.Rows[0][0])
}

// The catalog read at Open may be older than the statement: a function
// created later, or a volatile namesake of an allowed function in another
// schema, is found by the resolution probe in the statement's own
// transaction, and the statement does not run.
func TestCatalogChangesAfterOpen(t *testing.T) {
	db, _ := testDB(t, attackDB...)
	e := newExec(t, db, Options{AllowFunctions: []string{"mine"}})
	dbtest.Exec(t, db,
		`CREATE TABLE calls (n int)`,
		`CREATE FUNCTION public.evil(users) RETURNS int LANGUAGE sql VOLATILE AS 'INSERT INTO calls VALUES (1) RETURNING 1'`,
		`CREATE FUNCTION public.lower(int) RETURNS int LANGUAGE sql VOLATILE AS 'INSERT INTO calls VALUES (2) RETURNING 2'`,
		`CREATE FUNCTION public.mine(int) RETURNS int LANGUAGE sql VOLATILE AS 'SELECT $1'`,
		`CREATE FUNCTION public."1"(users) RETURNS int LANGUAGE sql VOLATILE AS 'INSERT INTO calls VALUES (3) RETURNING 3'`)
	for _, q := range []string{
		`SELECT u."1" FROM users u`, // a name the probe's cast could have read as a number
		`SELECT u.evil FROM users u`,
		`SELECT (u).evil FROM users u`,
		`SELECT lower(5)`,
		`SELECT (5).lower`,
		`SELECT name FROM users WHERE lower(id) = 1`,
	} {
		res := exectest.RunKind(t, e, q, text2sql.KindForbiddenFunction)
		assert.Contains(t, res.Error.Message, "catalog has function", q)
		assert.Error(t, e.Check(context.Background(), q), q)
	}
	var n int
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM calls`).Scan(&n))
	assert.Zero(t, n, "a function created after Open ran")
	for q, want := range map[string]any{
		`SELECT u.name FROM users u WHERE u.id = 1`: "ada",
		`SELECT pg_catalog.lower('ADA')`:            "ada",
		`SELECT mine(7)`:                            int64(7),
	} {
		res := exectest.Run(t, e, q)
		if assert.Nil(t, res.Error, q) {
			assert.Equal(t, want, res.Rows[0][0], q)
		}
	}
}

// Findings of the attack on the guard: system catalog relations (whose
// views run the denied functions for the reader), operators of other
// schemas in ORDER BY … USING and subquery comparisons, SQL/JSON syntax
// an older server reads as a plain call, and validators that load
// libraries are refused before they reach the server.
func TestSystemRelationsAndSyntax(t *testing.T) {
	db, _ := testDB(t, attackDB...)
	e := newExec(t, db, Options{})
	for q, kind := range map[string]text2sql.ErrorKind{
		`SELECT * FROM pg_hba_file_rules`:                                         text2sql.KindForbiddenTable,
		`SELECT sourcefile, name, setting FROM pg_file_settings`:                  text2sql.KindForbiddenTable,
		`SELECT pid, usename, query FROM pg_stat_activity`:                        text2sql.KindForbiddenTable,
		`SELECT rolpassword FROM pg_catalog.pg_authid`:                            text2sql.KindForbiddenTable,
		`SELECT name FROM users WHERE EXISTS (SELECT 1 FROM pg_settings)`:         text2sql.KindForbiddenTable,
		`SELECT * FROM users u JOIN "pg_locks" l ON true`:                         text2sql.KindForbiddenTable,
		`SELECT name FROM users ORDER BY name USING OPERATOR(public.<)`:           text2sql.KindForbiddenFunction,
		`SELECT 'a' OPERATOR(public.=) ANY (SELECT name FROM users)`:              text2sql.KindForbiddenFunction,
		`SELECT fmgr_c_validator(u.id::oid) FROM users u`:                         text2sql.KindForbiddenFunction,
		`SELECT fmgr_sql_validator(1)`:                                            text2sql.KindForbiddenFunction,
		`SELECT name FROM pg_available_extensions`:                                text2sql.KindForbiddenTable,
		`SELECT pg_available_extension_versions()`:                                text2sql.KindForbiddenFunction,
		`SELECT JSON_SCALAR(1)`:                                                   text2sql.KindDialect,
		`SELECT JSON('x'::text) AS j`:                                             text2sql.KindDialect,
		`SELECT json('{"a": 1}'::text WITH UNIQUE KEYS)`:                          text2sql.KindDialect,
		`SELECT JSON_SERIALIZE('{}'::json)`:                                       text2sql.KindDialect,
		`SELECT JSON_VALUE('{"a":1}'::jsonb, '$.a')`:                              text2sql.KindDialect,
		`SELECT * FROM JSON_TABLE('[1]'::jsonb, '$[*]' COLUMNS (x int PATH '$'))`: text2sql.KindDialect,
		`SELECT * FROM information_schema.user_mapping_options`:                   text2sql.KindForbiddenTable,
		`SELECT * FROM information_schema._pg_user_mappings`:                      text2sql.KindForbiddenTable,
		`SELECT table_name FROM information_schema.tables`:                        text2sql.KindForbiddenTable,
	} {
		wantRefused(t, e, q, kind)
	}
}

// A server message quoting a huge value is cut.
func TestLongErrorMessage(t *testing.T) {
	db, _ := testDB(t)
	e := newExec(t, db, Options{})
	res := exectest.Run(t, e, `SELECT repeat('x', 15000000)::int`)
	require.NotNil(t, res.Error)
	assert.Less(t, len(res.Error.Message), 3000)
	assert.Contains(t, res.Error.Message, "bytes)")
}
