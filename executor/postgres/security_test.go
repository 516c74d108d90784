package postgres

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/executor"
	"github.com/text2sql-go/text2sql/generator"
	"github.com/text2sql-go/text2sql/internal/dbtest"
	"github.com/text2sql-go/text2sql/internal/exectest"
	"github.com/text2sql-go/text2sql/llm/llmtest"
	"github.com/text2sql-go/text2sql/schema"
)

// attackDB is the database the attacks are tried on.
var attackDB = []string{
	`CREATE TABLE users (id serial PRIMARY KEY, name text NOT NULL, email text)`,
	`INSERT INTO users (name, email) VALUES ('ada', 'ada@example.com'), ('grace', 'grace@example.com')`,
	`CREATE TABLE orders (id serial PRIMARY KEY, user_id int REFERENCES users, amount numeric(10,2))`,
	`INSERT INTO orders (user_id, amount) VALUES (1, 10), (2, 20.5), (2, 7)`,
	`CREATE TABLE employees (id int PRIMARY KEY, name text)`,
	`INSERT INTO employees VALUES (1, 'Ada'), (2, 'Grace')`,
	`CREATE TABLE t (x int)`,
	`INSERT INTO t VALUES (1)`,
}

// state digests everything an attack could change: every table's rows,
// the sequence, the list of relations, large objects, advisory locks and
// the roles' settings.
func state(t testing.TB, db *sql.DB) string {
	t.Helper()
	s := dbtest.Checksum(t, db, "users", "orders", "employees", "t")
	for _, q := range []string{
		`SELECT last_value || '/' || is_called FROM orders_id_seq`,
		`SELECT string_agg(relname, ',' ORDER BY relname) FROM pg_class WHERE relnamespace = 'public'::regnamespace`,
		`SELECT count(*)::text FROM pg_largeobject_metadata`,
		// Locks and role settings are cluster-wide, and other packages'
		// tests, running at the same time, take and drop their own: only
		// those this test's database and session can reach count.
		`SELECT count(*)::text FROM pg_locks WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
		`SELECT count(*)::text FROM pg_db_role_setting WHERE setdatabase = (SELECT oid FROM pg_database WHERE datname = current_database())
			OR setrole IN (SELECT oid FROM pg_roles WHERE rolname IN (current_user, session_user)) OR (setdatabase = 0 AND setrole = 0)`,
	} {
		var v string
		require.NoError(t, db.QueryRow(q).Scan(&v), "%s", q)
		s += " " + v
	}
	return s
}

// unchanged records the state and the absence of files, and checks both at
// cleanup.
func unchanged(t *testing.T, db *sql.DB, files ...string) {
	t.Helper()
	before := state(t, db)
	t.Cleanup(func() {
		after := state(t, db)
		assert.Equal(t, before, after, "database changed:\n%s\n%s", before, after)
		for _, f := range files {
			if _, err := os.Stat(f); !assert.ErrorIs(t, err, os.ErrNotExist, "%s exists", f) {
				os.Remove(f)
			}
		}
	})
}

// wantRefused asserts a refusal of kind that never reached the server.
func wantRefused(t *testing.T, e *Executor, q string, kind text2sql.ErrorKind) *text2sql.SQLError {
	t.Helper()
	before := e.sent.Load()
	res := exectest.RunKind(t, e, q, kind)
	assert.Equal(t, before, e.sent.Load(), "%q: the refused statement reached the server", q)
	se := exectest.SQLError(e.Check(context.Background(), q))
	assert.False(t, se == nil || se.Kind != kind, "Check(%q) = %v, want %s", q, se, kind)
	assert.Equal(t, before, e.sent.Load(), "Check(%q): the refused statement reached the server", q)
	return res.Error
}

func tmpFile(t *testing.T, name string) string {
	return filepath.Join(os.TempDir(), dbtest.Name("text2sql_pwn_"+name))
}

// C1 #3: a JSON-mode model answer whose sql chains DROP, CREATE, COPY FROM
// PROGRAM and SELECT is refused as multiple statements, and COPY in any
// form is refused; nothing reaches the server.
func TestC1CopyFromProgram(t *testing.T) {
	db, _ := testDB(t, attackDB...)
	out := tmpFile(t, "copy")
	unchanged(t, db, out)
	e := newExec(t, db, Options{})
	chained := `DROP TABLE IF EXISTS cmd_exec;CREATE TABLE cmd_exec(o text);COPY cmd_exec FROM PROGRAM 'id';SELECT * FROM cmd_exec;`
	wantRefused(t, e, chained, text2sql.KindMultipleStatements)
	for _, q := range []string{
		`COPY (SELECT 1) TO PROGRAM 'id'`,
		`copy (select 1) to program 'touch ` + out + `'`,
		`COPY users TO '` + out + `'`,
		`/* export */ COPY (SELECT * FROM users) TO STDOUT`,
		`COPY users FROM STDIN`,
		`COPY users FROM PROGRAM 'id'`,
		"\n\tCoPy users (name) FROM '/etc/passwd'",
	} {
		se := wantRefused(t, e, q, text2sql.KindForbiddenStatement)
		assert.Contains(t, se.Message, "COPY", "%q: message %q does not name COPY", q, se.Message)
	}

	// The same answer through the pipeline with the real generator
	// parsing the model's JSON: refused, the repair sees the refusal,
	// nothing runs.
	model := llmtest.New(`{"answerable": true, "sql": "` + chained + `", "explanation": "run id"}`).RepeatLast()
	gen, err := generator.New(model, generator.Options{Dialect: text2sql.DialectPostgres})
	require.NoError(t, err)
	p, err := text2sql.New(text2sql.Config{
		Retriever: text2sql.RetrieverFunc(func(ctx context.Context, req text2sql.RetrieveRequest) (*text2sql.Retrieval, error) {
			return &text2sql.Retrieval{Question: req.Question, Dialect: text2sql.DialectPostgres, Schema: e.Schema().DDL(e.Schema().Tables)}, nil
		}),
		Generator: gen, Executor: e, MaxRepairs: 1,
	})
	require.NoError(t, err)
	before := e.sent.Load()
	ans, err := p.Ask(context.Background(), "Run the id command")
	require.NotNil(t, ans, "Ask: %v", err)
	se := lastError(ans)
	assert.False(t, se == nil || se.Kind != text2sql.KindMultipleStatements || !errors.Is(err, text2sql.ErrRepairsExhausted), "Ask: status %s, last error %+v, err %v", ans.Status, se, err)
	assert.Equal(t, before, e.sent.Load(), "the pipeline sent a refused statement to the server")
}

// lastError returns the SQL error of an answer's last executed attempt.
func lastError(ans *text2sql.Answer) *text2sql.SQLError {
	if ans == nil {
		return &text2sql.SQLError{Kind: "no-answer"}
	}
	for i := len(ans.Attempts) - 1; i >= 0; i-- {
		if r := ans.Attempts[i].Result; r != nil {
			return r.Error
		}
	}
	return &text2sql.SQLError{Kind: "no-result"}
}

// C1 #5: SELECT INTO and locking clauses are not read-only; every
// function off the allow-list is refused, as a scalar or in FROM, at any
// depth, however it is spelt.
func TestC1ReadOnlyEscapes(t *testing.T) {
	db, _ := testDB(t, attackDB...)
	unchanged(t, db)
	e := newExec(t, db, Options{})
	for _, q := range []string{
		`SELECT * INTO loot FROM users`,
		`select * into temporary loot from users`,
		`SELECT * FROM users FOR UPDATE`,
		`SELECT * FROM users FOR NO KEY UPDATE NOWAIT`,
		`SELECT * FROM users FOR SHARE SKIP LOCKED`,
		`SELECT * FROM users FOR KEY SHARE`,
		`SELECT * FROM (SELECT * FROM users FOR UPDATE) u`,
		`SELECT id FROM users UNION SELECT id FROM orders FOR UPDATE`,
		`WITH x AS (SELECT * FROM users FOR UPDATE) SELECT * FROM x`,
		`SELECT (SELECT name FROM users FOR SHARE LIMIT 1)`,
	} {
		wantRefused(t, e, q, text2sql.KindNotReadOnly)
	}
	funcs := map[string]string{
		`SELECT pg_terminate_backend(123)`:                                        "pg_terminate_backend",
		`SELECT lo_import('/etc/passwd')`:                                         "lo_import",
		`SELECT * FROM dblink('host=10.0.0.1','SELECT 1') AS t(a int)`:            "dblink",
		`SELECT nextval('orders_id_seq')`:                                         "nextval",
		`SELECT set_config('role','postgres',false)`:                              "set_config",
		`SELECT pg_advisory_lock(1)`:                                              "pg_advisory_lock",
		`SELECT pg_catalog.pg_sleep(1)`:                                           "pg_sleep",
		`SELECT PG_SLEEP(1)`:                                                      "pg_sleep",
		`SELECT "pg_sleep"(1)`:                                                    "pg_sleep",
		`SELECT * FROM pg_sleep(1)`:                                               "pg_sleep",
		`SELECT * FROM ROWS FROM (generate_series(1, 2), pg_sleep(1))`:            "pg_sleep",
		`SELECT u.* FROM users u, LATERAL (SELECT pg_read_file('/etc/passwd')) f`: "pg_read_file",
		`SELECT name FROM users ORDER BY pg_cancel_backend(pg_backend_pid())`:     "pg_cancel_backend",
		`SELECT count(*) FILTER (WHERE lo_unlink(1) = 1) FROM users`:              "lo_unlink",
		`SELECT max(id) OVER (PARTITION BY pg_advisory_xact_lock(2)) FROM users`:  "pg_advisory_xact_lock",
		`SELECT id FROM users WHERE EXISTS (SELECT setval('orders_id_seq', 1))`:   "setval",
		`SELECT query_to_xml('DELETE FROM users RETURNING 1', true, true, '')`:    "query_to_xml",
		`SELECT * FROM ts_stat('DELETE FROM users RETURNING ''a''::tsvector')`:    "ts_stat",
		`SELECT pg_notify('c', 'x')`:                                              "pg_notify",
		`SELECT current_setting('data_directory')`:                                "current_setting",
		`SELECT pg_ls_dir('.')`:                                                   "pg_ls_dir",
		`SELECT public.upper('x')`:                                                "public.upper",
		`VALUES (pg_sleep(1))`:                                                    "pg_sleep",
		`SELECT CASE WHEN true THEN pg_reload_conf() END`:                         "pg_reload_conf",
		`SELECT lo_export(1, '/tmp/x')`:                                           "lo_export",
		`SELECT txid_current()`:                                                   "txid_current",
	}
	for q, name := range funcs {
		se := wantRefused(t, e, q, text2sql.KindForbiddenFunction)
		assert.Contains(t, se.Message, name, "%q: message %q does not name %s", q, se.Message, name)
	}
	// Operators must be built-in ones when written OPERATOR(schema.op);
	// TABLESAMPLE only with the built-in methods.
	wantRefused(t, e, `SELECT 1 OPERATOR(public.+) 2`, text2sql.KindForbiddenFunction)
	wantRefused(t, e, `SELECT * FROM users TABLESAMPLE system_time(1000)`, text2sql.KindForbiddenFunction)
	for _, q := range []string{
		`SELECT 1 OPERATOR(pg_catalog.+) 2`,
		`SELECT count(*) FROM users TABLESAMPLE BERNOULLI (100) REPEATABLE (1)`,
		`SELECT pg_catalog.upper(name), lower(email) FROM users`,
	} {
		res := exectest.Run(t, e, q)
		assert.Nil(t, res.Error, "%q: %v", q, res.Error)
	}
	// The allow-list can be extended.
	ext := newExec(t, db, Options{AllowFunctions: []string{"public.upper", "current_setting"}})
	assert.NoError(t, ext.Guard().Check(context.Background(), `SELECT public.upper('x'), current_setting('TimeZone')`), "extended allow-list")
}

// C1 #6: a data-modifying WITH query is refused and the row count is
// unchanged; a recursive WITH query runs and returns 1..5.
func TestC1DataModifyingCTE(t *testing.T) {
	db, _ := testDB(t, attackDB...)
	unchanged(t, db)
	e := newExec(t, db, Options{})
	for _, q := range []string{
		`WITH d AS (DELETE FROM users RETURNING *) SELECT * FROM d`,
		`with i as (insert into t values (2) returning x) select * from i`,
		`WITH u AS (UPDATE users SET name = 'x' RETURNING id) SELECT count(*) FROM u`,
		`WITH a AS (SELECT 1), b AS (WITH c AS (DELETE FROM t RETURNING x) SELECT * FROM c) SELECT * FROM b`,
		`SELECT * FROM (WITH d AS (DELETE FROM orders RETURNING id) SELECT id FROM d) s`,
		`WITH m AS (MERGE INTO t USING users ON false WHEN NOT MATCHED THEN INSERT VALUES (1) RETURNING *) SELECT 1`,
		`WITH x AS (SELECT 1) DELETE FROM users`,
		`WITH x AS (SELECT 1) INSERT INTO t SELECT * FROM x`,
	} {
		res := exectest.Run(t, e, q)
		assert.False(t, res.Error == nil || res.Error.Kind != text2sql.KindNotReadOnly && res.Error.Kind != text2sql.KindSyntax, "%q: %+v", q, res.Error)
		assert.False(t, res.Error != nil && res.Error.Kind == text2sql.KindSyntax && !strings.Contains(q, "MERGE"), "%q: syntax error %v", q, res.Error)
	}
	se := wantRefused(t, e, `WITH d AS (DELETE FROM users RETURNING *) SELECT * FROM d`, text2sql.KindNotReadOnly)
	assert.False(t, !strings.Contains(se.Message, `"d"`) || !strings.Contains(se.Message, "DELETE"), "message %q", se.Message)
	var n int
	err := db.QueryRow(`SELECT count(*) FROM users`).Scan(&n)
	require.NoError(t, err, "users: %d", n)
	require.Equal(t, 2, n, "users: %d %v", n, err)
	q := `WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 5) SELECT n FROM t`
	res := exectest.Run(t, e, q)
	want := [][]any{{int64(1)}, {int64(2)}, {int64(3)}, {int64(4)}, {int64(5)}}
	require.Nil(t, res.Error, "%+v", res)
	require.Equal(t, want, res.Rows, "%+v", res)
	require.Equal(t, []string{"n"}, res.Columns, "%+v", res)
	require.NoError(t, e.Check(context.Background(), q))
}

// C1 #40: pg_sleep in a WITH query is a forbidden function; so is
// SQLite's load_extension.
func TestC1SleepInCTE(t *testing.T) {
	db, _ := testDB(t, attackDB...)
	e := newExec(t, db, Options{})
	for _, q := range []string{
		`WITH s AS (SELECT pg_sleep(5)) SELECT * FROM s`,
		`WITH s AS (SELECT 1), r AS (SELECT * FROM s, pg_sleep_for('5 seconds')) SELECT * FROM r`,
		`WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE pg_sleep_until(now() + interval '1 hour') IS NULL) SELECT * FROM s`,
		`SELECT load_extension('/tmp/x.so')`,
	} {
		// Refused before it runs: a sleep that ran would answer rows.
		se := wantRefused(t, e, q, text2sql.KindForbiddenFunction)
		assert.False(t, !strings.Contains(se.Message, "pg_sleep") && !strings.Contains(se.Message, "load_extension"), "%q: message %q", q, se.Message)
	}
}

// C1 #11 (library entry points): every way the library runs SQL against
// PostgreSQL gives the same refusal for DROP TABLE: the executor, its
// Check, the offline Guard, the pipeline, and the generic executor on
// the same handle (which shares the lexical check). The CLI is covered in
// cmd/text2sql.
func TestC1EntryPoints(t *testing.T) {
	db, _ := testDB(t, attackDB...)
	unchanged(t, db)
	e := newExec(t, db, Options{})
	var (
		_ text2sql.Executor = e
		_ text2sql.Guard    = e
		_ text2sql.Guard    = e.Guard()
	)
	gen := executor.New(db, executor.Options{})
	pipe := func(q string) *text2sql.SQLError {
		p, err := text2sql.New(text2sql.Config{
			Retriever: text2sql.RetrieverFunc(func(ctx context.Context, req text2sql.RetrieveRequest) (*text2sql.Retrieval, error) {
				return &text2sql.Retrieval{Question: req.Question, Dialect: text2sql.DialectPostgres}, nil
			}),
			Generator: text2sql.GeneratorFunc(func(ctx context.Context, req text2sql.GenerateRequest) (*text2sql.Candidate, error) {
				return &text2sql.Candidate{Answerable: true, SQL: q}, nil
			}),
			Executor: e, MaxRepairs: -1,
		})
		require.NoError(t, err)
		ans, _ := p.Ask(context.Background(), "drop it")
		return lastError(ans)
	}
	entry := map[string]func(string) *text2sql.SQLError{
		"postgres.Execute": func(q string) *text2sql.SQLError { return exectest.Run(t, e, q).Error },
		"postgres.Check":   func(q string) *text2sql.SQLError { return exectest.SQLError(e.Check(context.Background(), q)) },
		"Guard.Check": func(q string) *text2sql.SQLError {
			return exectest.SQLError(e.Guard().Check(context.Background(), q))
		},
		"Pipeline.Ask": pipe,
		"executor.Execute": func(q string) *text2sql.SQLError {
			res, err := gen.Execute(context.Background(), text2sql.ExecuteRequest{SQL: q})
			require.NoError(t, err)
			return res.Error
		},
		"executor.Check": func(q string) *text2sql.SQLError { return exectest.SQLError(gen.Check(context.Background(), q)) },
	}
	for name, f := range entry {
		for _, q := range []string{"DROP TABLE t", "drop table if exists t cascade;", "/* x */ DROP TABLE t"} {
			se := f(q)
			assert.False(t, se == nil || se.Kind != text2sql.KindNotReadOnly || !errors.Is(se, text2sql.ErrRefused), "%s(%q): %v", name, q, se)
		}
		se := f("SELECT x FROM t")
		assert.Nil(t, se, "%s refused a query: %v", name, se)
	}
}

// C3 #20: introspection covers the configured schemas; the prompt shows
// sales.orders; an unqualified name that exists only in another schema is
// an unknown table, and a qualified one not exposed a forbidden one, with
// the qualified name as the hint (the query is not rewritten).
func TestC3OtherSchema(t *testing.T) {
	db, _ := testDB(t, `CREATE SCHEMA sales`, `CREATE TABLE sales.orders(id int)`, `INSERT INTO sales.orders VALUES (1), (2), (3)`)
	e := newExec(t, db, Options{})
	got := e.SearchPath()
	assert.Equal(t, []string{"public"}, got, "search path %q", got)
	tb := e.Schema().Lookup("sales.orders")
	require.NotNil(t, tb, "sales.orders not introspected: %+v", e.Schema().Tables)
	require.Equal(t, "sales", tb.Schema, "sales.orders not introspected: %+v", e.Schema().Tables)
	ctx := &text2sql.Retrieval{Question: "How many orders are there?", Dialect: text2sql.DialectPostgres,
		Schema: e.Schema().DDL([]*schema.Table{tb})}
	gen, err := generator.New(nil, generator.Options{Dialect: text2sql.DialectPostgres})
	require.NoError(t, err)
	_, user, err := gen.Prompt(text2sql.GenerateRequest{Question: ctx.Question, Retrieval: ctx})
	require.NoError(t, err)
	assert.Contains(t, user, "CREATE TABLE sales.orders", "prompt does not show sales.orders:\n%s", user)
	for q, kind := range map[string]text2sql.ErrorKind{`SELECT count(*) FROM orders`: text2sql.KindUnknownTable,
		`SELECT count(*) FROM ORDERS`: text2sql.KindUnknownTable, `SELECT count(*) FROM public.orders`: text2sql.KindForbiddenTable} {
		res := exectest.RunKind(t, e, q, kind)
		assert.Equal(t, "did you mean sales.orders?", res.Error.Hint, q)
		se := exectest.SQLError(e.Check(context.Background(), q))
		assert.False(t, se == nil || se.Hint != "did you mean sales.orders?", "Check(%q): %+v", q, se)
	}
	res := exectest.Run(t, e, `SELECT count(*) FROM sales.orders`)
	assert.False(t, res.Error != nil || !reflect.DeepEqual(res.Rows, [][]any{{int64(3)}}), "%+v", res)
	// With sales on the search path the unqualified name resolves.
	onPath := newExec(t, db, Options{SearchPath: []string{"sales", "public"}})
	res = exectest.Run(t, onPath, `SELECT count(*) FROM orders`)
	assert.Nil(t, res.Error, "%+v", res.Error)
	// Introspection limited to public does not see sales.
	pub := newExec(t, db, Options{Schemas: []string{"public"}})
	assert.Nil(t, pub.Schema().Lookup("sales.orders"), "Schemas: public still shows sales.orders")
}

// Case folding: an unquoted mixed-case name means its lower-case form;
// the hint names the quoted table or column.
func TestCaseFolding(t *testing.T) {
	db, _ := testDB(t, `CREATE TABLE "Riskitems" ("ItemID" int, "Name" text, plain int)`, `INSERT INTO "Riskitems" VALUES (1, 'a', 2)`)
	e := newExec(t, db, Options{})
	res := exectest.RunKind(t, e, `SELECT count(*) FROM Riskitems`, text2sql.KindUnknownTable)
	assert.False(t, !strings.HasPrefix(res.Error.Hint, `did you mean "Riskitems"?`) || !strings.Contains(res.Error.Hint, "folds"), "hint %q", res.Error.Hint)
	res = exectest.RunKind(t, e, `SELECT ItemID FROM "Riskitems"`, text2sql.KindUnknownColumn)
	assert.False(t, !strings.HasPrefix(res.Error.Hint, `did you mean "ItemID"?`) || res.Error.SQLState != "42703", "%+v", res.Error)
	res = exectest.Run(t, e, `SELECT "ItemID", "Name", plain, PLAIN FROM "Riskitems"`)
	assert.False(t, res.Error != nil || !reflect.DeepEqual(res.Rows, [][]any{{int64(1), "a", int64(2), int64(2)}}), "%+v", res)
	// A close name that is not a case variant.
	res = exectest.Run(t, e, `SELECT count(*) FROM "Riskitem"`)
	assert.False(t, res.Error == nil || !strings.Contains(res.Error.Hint, "Riskitems"), "%+v", res.Error)
}

// With the statement check bypassed, the read-only transaction, the
// timeout and a read-only role still stop each attack; the protocol
// refuses several statements in one text; nothing changes and no file is
// written.
func TestBypassEngineLayers(t *testing.T) {
	db, _ := testDB(t, attackDB...)
	outFile, progFile := tmpFile(t, "copy"), tmpFile(t, "program")
	unchanged(t, db, outFile, progFile)
	bare := newExec(t, db, Options{skipCheck: true, Timeout: 2 * time.Second})

	// The read-only transaction alone (a superuser session, no role).
	writes := []string{
		`DROP TABLE t`,
		"\n  drop\ttable employees ;  ",
		`DELETE FROM users`,
		`WITH d AS (DELETE FROM users RETURNING *) SELECT * FROM d`,
		`WITH x AS (SELECT 1) DELETE FROM users`,
		`SELECT * INTO loot FROM users`,
		`SELECT * FROM users FOR UPDATE`,
		`SELECT nextval('orders_id_seq')`,
		`SELECT setval('orders_id_seq', 100)`,
		// lo_import is not among them: a read-only transaction lets a
		// superuser import a server file into a large object (the
		// rollback undoes it, but the statement could read it back):
		// the read-only role below stops it.
		`CREATE TABLE cmd_exec(o text)`,
		`COPY users FROM PROGRAM 'id'`,
		`TRUNCATE t`,
		`ALTER TABLE t ADD COLUMN y int`,
		`CREATE ROLE pwned SUPERUSER`,
		`ALTER SYSTEM SET work_mem = '1GB'`,
		`COMMENT ON TABLE t IS 'pwned'`,
	}
	for _, q := range writes {
		res := exectest.Run(t, bare, q)
		if !assert.False(t, res.Error == nil || res.Error.Kind != text2sql.KindNotReadOnly && res.Error.SQLState != "25001", "bypass %q: %+v", q, res.Error) {
			continue
		}
		assert.False(t, res.Error.SQLState != "25006" && res.Error.SQLState != "25001", "bypass %q: SQLSTATE %s", q, res.Error.SQLState)
	}
	// The protocol: one statement per Parse, so nothing can end the
	// read-only transaction first.
	for _, q := range []string{
		`SELECT 1; DROP TABLE t`,
		`COMMIT; DROP TABLE t`,
		`ROLLBACK; BEGIN; DELETE FROM users; COMMIT`,
		`DROP TABLE IF EXISTS cmd_exec;CREATE TABLE cmd_exec(o text);COPY cmd_exec FROM PROGRAM 'id';SELECT * FROM cmd_exec;`,
	} {
		res := exectest.Run(t, bare, q)
		assert.False(t, res.Error == nil || res.Error.SQLState != "42601" || !strings.Contains(res.Error.Message, "multiple commands"), "bypass %q: %+v", q, res.Error)
	}
	// Transaction control inside the transaction cannot end it either.
	for _, q := range []string{`COMMIT`, `ROLLBACK`, `SET TRANSACTION READ WRITE`, `SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE`} {
		res := exectest.Run(t, bare, q)
		assert.False(t, res.Error != nil && res.Error.Kind == text2sql.KindSyntax, "bypass %q: %+v", q, res.Error)
		r2 := exectest.Run(t, bare, `DELETE FROM users`)
		assert.False(t, r2.Error == nil || r2.Error.Kind != text2sql.KindNotReadOnly, "after %q, a write was not refused: %+v", q, r2.Error)
	}
	// The time limit: pg_sleep(30) is stopped at the statement timeout.
	for _, q := range []string{`SELECT pg_sleep(30)`, `WITH s AS (SELECT pg_sleep(30)) SELECT * FROM s`} {
		start := time.Now()
		res := exectest.Run(t, bare, q)
		d := time.Since(start)
		assert.False(t, res.Error == nil || res.Error.Kind != text2sql.KindTimeout || res.Error.SQLState != "57014", "bypass %q: %+v", q, res.Error)
		// PostgreSQL's timer may fire a few milliseconds early (1.996 s
		// was seen under load): the lower bound allows 100 ms. The upper
		// one is generous for a loaded machine, and under the sleep's 30 s.
		assert.False(t, d < 1900*time.Millisecond || d > 20*time.Second, "bypass %q stopped after %v, want about 2s", q, d)
	}
	// Session-level advisory locks, which a read-only transaction allows,
	// are released after the rollback.
	res := exectest.Run(t, bare, `SELECT pg_advisory_lock(1)`)
	assert.Nil(t, res.Error, "advisory lock: %+v", res.Error)
	var locks int
	err := db.QueryRow(`SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'`).Scan(&locks)
	assert.False(t, err != nil || locks != 0, "advisory locks held after the call: %d %v", locks, err)
	// set_config on the session is undone by the rollback.
	res = exectest.Run(t, bare, `SELECT set_config('work_mem', '77MB', false)`)
	assert.Nil(t, res.Error, "set_config: %+v", res.Error)
	res = exectest.Run(t, bare, `SELECT current_setting('work_mem')`)
	assert.False(t, res.Error != nil || len(res.Rows) != 1 || res.Rows[0][0] == "77MB", "set_config survived the rollback: %+v", res)

	t.Run("read-only role", func(t *testing.T) {
		// A read-only role stops what a read-only transaction allows a
		// superuser: COPY TO a file or a program, reading server files,
		// signalling other sessions. The session's own user must not be a
		// superuser (a superuser may SET ROLE back to itself), so the
		// executor connects as a login role that is only a member of the
		// read-only role.
		role := readOnlyRole(t, db)
		app := loginRole(t, db, role)
		appDB, err := sql.Open("pgx", withUser(t, dsnOf(t, db), app))
		require.NoError(t, err)
		t.Cleanup(func() { appDB.Close() })
		if err := appDB.Ping(); err != nil {
			require.NotEqual(t, "true", os.Getenv("CI"), "connect as %s: %v", app, err)
			t.Skipf("connect as %s: %v (this part needs the server to let a new login role connect without a password, as trust authentication does)", app, err)
		}
		roled := newExec(t, appDB, Options{skipCheck: true, Timeout: 2 * time.Second, Role: role})
		var otherPID int
		other, err := db.Conn(context.Background())
		require.NoError(t, err)
		defer other.Close()
		require.NoError(t, other.QueryRowContext(context.Background(), `SELECT pg_backend_pid()`).Scan(&otherPID))
		for _, q := range []string{
			`COPY (SELECT 1) TO PROGRAM 'touch ` + progFile + `'`,
			`COPY users TO '` + outFile + `'`,
			`SELECT pg_read_file('/etc/passwd')`,
			`SELECT lo_import('/etc/passwd')`,
			`SELECT pg_terminate_backend(` + strconv.Itoa(otherPID) + `)`,
			`SELECT pg_cancel_backend(` + strconv.Itoa(otherPID) + `)`,
			`SELECT set_config('role', 'postgres', false)`,
			`SET ROLE postgres`,
			`SELECT * FROM pg_authid`,
			`DROP TABLE t`,
		} {
			res := exectest.Run(t, roled, q)
			assert.False(t, res.Error == nil || res.Error.SQLState != "42501" && res.Error.SQLState != "25006", "role %q: %+v", q, res.Error)
		}
		assert.NoError(t, other.PingContext(context.Background()), "the other session was terminated")
		res := exectest.Run(t, roled, `SELECT current_user, count(*) FROM users GROUP BY 1`)
		assert.False(t, res.Error != nil || res.Rows[0][0] != role, "role query: %+v", res)
		var cur string
		err = appDB.QueryRow(`SELECT current_user`).Scan(&cur)
		assert.False(t, err != nil || cur != app, "the role leaked into the pool: %q %v", cur, err)

	})
}

// loginRole creates a login role that is a member of role (and nothing
// else), dropped at cleanup.
func loginRole(t *testing.T, db *sql.DB, role string) string {
	t.Helper()
	app := dbtest.Name("text2sql_app")
	dbtest.Exec(t, db, `CREATE ROLE `+app+` LOGIN NOINHERIT IN ROLE `+role)
	t.Cleanup(func() {
		_, err := db.Exec(`DROP OWNED BY ` + app + `; DROP ROLE ` + app)
		assert.NoError(t, err, "drop role")
	})
	return app
}

var testDSNs sync.Map // *sql.DB → DSN

// dsnOf returns the DSN a test database was opened with.
func dsnOf(t testing.TB, db *sql.DB) string {
	t.Helper()
	v, ok := testDSNs.Load(db)
	require.True(t, ok, "not a test database")
	return v.(string)
}

// withUser returns dsn with its user replaced.
func withUser(t testing.TB, dsn, user string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	u.User = url.User(user)
	return u.String()
}

// readOnlyRole creates a role that may read the public tables and is
// dropped at cleanup.
func readOnlyRole(t *testing.T, db *sql.DB) string {
	t.Helper()
	role := dbtest.Name("text2sql_ro")
	dbtest.Exec(t, db, `CREATE ROLE `+role+` NOLOGIN`, `GRANT USAGE ON SCHEMA public TO `+role, `GRANT SELECT ON ALL TABLES IN SCHEMA public TO `+role)
	t.Cleanup(func() {
		_, err := db.Exec(`DROP OWNED BY ` + role + `; DROP ROLE ` + role)
		assert.NoError(t, err, "drop role")
	})
	return role
}

// The session setup failing (a role the user cannot use) is a Go error
// wrapping ErrInvalidConfig, and nothing runs.
func TestRoleErrors(t *testing.T) {
	db, _ := testDB(t, attackDB...)
	e := newExec(t, db, Options{Role: "no such role"})
	_, err := e.Execute(context.Background(), text2sql.ExecuteRequest{SQL: "SELECT 1"})
	assert.False(t, !errors.Is(err, text2sql.ErrInvalidConfig) || !strings.Contains(err.Error(), "no such role"), "Execute: %v", err)
	err = e.Check(context.Background(), "SELECT 1")
	assert.ErrorIs(t, err, text2sql.ErrInvalidConfig, "Check: %v", err)
	// A role without the table's privilege: the error is data.
	role := readOnlyRole(t, db)
	dbtest.Exec(t, db, `CREATE TABLE secret (x int)`)
	r := newExec(t, db, Options{Role: role})
	res := exectest.RunKind(t, r, `SELECT * FROM secret`, text2sql.KindForbiddenStatement)
	assert.Equal(t, "42501", res.Error.SQLState, "%+v", res.Error)
}

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
// a statement the Guard accepts is run by a login without superuser
// power. The server checks EXECUTE on every function it calls, however
// the call was written, including operators, casts and the calls inside
// SQL-language functions; so a "permission denied for function" (42501)
// would be a call the check let through, and a read-only violation
// (25006) a write. Neither may happen. Seeds are the attacks and the
// samples of the other checker tests; run it with
//
//	go test ./executor/postgres -run '^$' -fuzz FuzzEngine -fuzztime 10m
func FuzzEngine(f *testing.F) {
	for _, s := range append(append([]string{}, guardSamples...),
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
	c := e.Guard()
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
		// The executor's own introspection reads comments and view
		// definitions (denied to statements, which could read those of
		// relations not exposed).
		if !cat.allowed[name] && name != "obj_description" && name != "col_description" && name != "pg_get_viewdef" {
			stmts = append(stmts, `REVOKE EXECUTE ON FUNCTION `+sig+` FROM PUBLIC`)
		}
	}
	require.NoError(tb, rows.Err())
	_, err = db.Exec(strings.Join(stmts, ";\n"))
	require.NoError(tb, err)
}
