package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/executor/mysql"
	"github.com/text2sql-go/text2sql/executor/postgres"
	"github.com/text2sql-go/text2sql/generator"
	"github.com/text2sql-go/text2sql/internal/dbtest"
	"github.com/text2sql-go/text2sql/retriever"
	"github.com/text2sql-go/text2sql/schema"
	"github.com/text2sql-go/text2sql/wire"
)

// recursiveCTE is the negative control of C1 #6: it must run everywhere
// and return 1..5.
const recursiveCTE = "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 5) SELECT n FROM t"

// chokePoint sends every case through every entry point that executes
// SQL — the library call (lib.Execute, the reference), POST /v1/run, POST
// /v1/ask with a scripted model, and the MCP tools run_sql and ask — and
// expects the same refusal kind everywhere (case C1 #11). withModel
// builds a pipeline on the same database whose model always answers sql.
func chokePoint(t *testing.T, lib *text2sql.Pipeline, withModel func(sql string) *text2sql.Pipeline, cases []string) {
	ctx := context.Background()
	want := map[string]text2sql.ErrorKind{}
	for _, q := range cases {
		res, err := lib.Execute(ctx, q)
		require.False(t, err != nil || res.Error == nil, "library ran %q: %v %+v", q, err, res)
		want[q] = res.Error.Kind
		k := res.Error.Kind
		assert.False(t, !k.Refusal() && k != text2sql.KindTooLarge, "%q: kind %q is neither a refusal nor a bound", q, k)
	}
	srv := testServer(t, Config{Pipeline: lib})
	entry := map[string]func(t *testing.T, q string) (text2sql.ErrorKind, int){
		"POST /v1/run": func(t *testing.T, q string) (text2sql.ErrorKind, int) {
			var r RunResponse
			do(t, srv, "POST", "/v1/run", testToken, map[string]string{"sql": q}).json(t, &r)
			return kindOf(r.Error), r.RowCount
		},
		"POST /v1/ask": func(t *testing.T, q string) (text2sql.ErrorKind, int) {
			s := testServer(t, Config{Pipeline: withModel(q)})
			var a wire.Answer
			do(t, s, "POST", "/v1/ask", testToken, map[string]string{"question": "Do it"}).json(t, &a)
			require.Len(t, a.Attempts, 1, "ask %q: %+v", q, a)
			require.NotNil(t, a.Attempts[0].Result, "ask %q: %+v", q, a)
			return kindOf(a.Attempts[0].Result.Error), a.Attempts[0].Result.RowCount
		},
		"MCP run_sql": func(t *testing.T, q string) (text2sql.ErrorKind, int) {
			cs := mcpSession(t, Config{Pipeline: lib})
			var r RunResponse
			callTool(t, cs, "run_sql", map[string]any{"sql": q}, &r)
			return kindOf(r.Error), r.RowCount
		},
		"MCP ask": func(t *testing.T, q string) (text2sql.ErrorKind, int) {
			cs := mcpSession(t, Config{Pipeline: withModel(q)})
			var a wire.Answer
			callTool(t, cs, "ask", map[string]any{"question": "Do it"}, &a)
			require.Len(t, a.Attempts, 1, "ask %q: %+v", q, a)
			require.NotNil(t, a.Attempts[0].Result, "ask %q: %+v", q, a)
			return kindOf(a.Attempts[0].Result.Error), a.Attempts[0].Result.RowCount
		},
	}
	for name, run := range entry {
		t.Run(name, func(t *testing.T) {
			for _, q := range cases {
				got, _ := run(t, q)
				assert.Equal(t, want[q], got, "%q: kind %q, the library says %q", q, got, want[q])
			}
			got, n := run(t, recursiveCTE)
			assert.False(t, got != "" || n != 5, "recursive CTE: kind %q, %d rows", got, n)
		})
	}
}

// TestOneChokePointSQLite runs the SQLite C1 cases (#1, #2a, #3, #6, #7,
// #8, #40, #41) through every entry point; nothing is written.
func TestOneChokePointSQLite(t *testing.T) {
	dir := t.TempDir()
	exfil := filepath.Join(dir, "exfil.db")
	other := filepath.Join(dir, "other.db")
	cases := []string{
		"DROP TABLE students;",
		"\n  drop\ttable enrollments ;  ",
		"SELECT 1; DROP TABLE students; SELECT 2;",
		"DROP TABLE IF EXISTS cmd_exec;CREATE TABLE cmd_exec(o text);COPY cmd_exec FROM PROGRAM 'id';SELECT * FROM cmd_exec;",
		"WITH d AS (DELETE FROM students RETURNING *) SELECT * FROM d",
		"WITH x AS (SELECT 1) DELETE FROM enrollments -- limit",
		"INSERT INTO departments (name, building) VALUES ('x', 'y')",
		"UPDATE students SET first_name = 'x'",
		"/* x */ VACUUM INTO '" + exfil + "'",
		"-- x\nATTACH DATABASE '" + other + "' AS o",
		"PRAGMA user_version = 42",
		"PRAGMA writable_schema = ON",
		"SELECT load_extension('/tmp/x.so')",
		"SELECT zeroblob(2000000000)",
		"BEGIN; DELETE FROM students; COMMIT",
	}
	students, enrollments := tableRows(t, "students"), tableRows(t, "enrollments")
	chokePoint(t, newPipeline(t, nil, 0), func(q string) *text2sql.Pipeline { return newPipeline(t, sqlModel(q), -1) }, cases)
	s, e := tableRows(t, "students"), tableRows(t, "enrollments")
	assert.False(t, s != students || e != enrollments, "rows changed: students %d→%d, enrollments %d→%d", students, s, enrollments, e)
	res, _ := fixture.exec.Execute(context.Background(), text2sql.ExecuteRequest{SQL: "SELECT user_version FROM pragma_user_version"})
	assert.False(t, res != nil && res.Error == nil && fmt.Sprint(res.Rows[0][0]) == "42", "user_version was changed")
	for _, f := range []string{exfil, other} {
		_, err := os.Stat(f)
		assert.Error(t, err, "%s was created", f)
	}
}

// TestOneChokePointPostgres runs the PostgreSQL C1 cases (#1, #3, #5,
// #6, #11, #40) through every entry point on a fresh database of the
// test server (skipped without one, except in CI).
func TestOneChokePointPostgres(t *testing.T) {
	db, _ := dbtest.Postgres(t)
	dbtest.Exec(t, db,
		"CREATE TABLE users (id int PRIMARY KEY, name text)",
		"INSERT INTO users VALUES (1, 'ada'), (2, 'grace')",
		"CREATE SEQUENCE orders_id_seq",
		"CREATE TABLE t (a int)",
	)
	ctx := context.Background()
	ex, err := postgres.New(ctx, db, postgres.Options{})
	require.NoError(t, err)
	pipeline := enginePipeline(t, ex, ex.Schema(), text2sql.DialectPostgres)
	cases := []string{
		"DROP TABLE t",
		"DROP TABLE users;",
		"SELECT 1; DROP TABLE users; SELECT 2;",
		"COPY (SELECT 1) TO PROGRAM 'id'",
		"SELECT * INTO loot FROM users",
		"SELECT * FROM users FOR UPDATE",
		"SELECT pg_terminate_backend(123)",
		"SELECT lo_import('/etc/passwd')",
		"SELECT * FROM dblink('host=10.0.0.1','SELECT 1') AS t(a int)",
		"SELECT nextval('orders_id_seq')",
		"SELECT set_config('role','postgres',false)",
		"SELECT pg_advisory_lock(1)",
		"WITH d AS (DELETE FROM users RETURNING *) SELECT * FROM d",
		"WITH s AS (SELECT pg_sleep(5)) SELECT * FROM s",
		// Issue 9: calls in attribute notation, and a result too big.
		"SELECT ('bgwriter'::text).pg_stat_reset_shared",
		"SELECT ('slot'::name).pg_create_physical_replication_slot",
		"SELECT f.pg_terminate_backend FROM unnest(ARRAY[pg_backend_pid()]) f",
		"SELECT f.pg_read_file FROM unnest(ARRAY['/etc/passwd']) f",
		"SELECT (3.0).pg_sleep",
		"SELECT repeat('x', 10000000) FROM generate_series(1, 50)",
	}
	var stats string
	serverState := `SELECT coalesce((SELECT stats_reset::text FROM pg_stat_bgwriter), '') || (SELECT count(*) FROM pg_replication_slots)::text`
	require.NoError(t, db.QueryRowContext(ctx, serverState).Scan(&stats))
	chokePoint(t, pipeline(nil), func(q string) *text2sql.Pipeline { return pipeline(sqlModel(q)) }, cases)
	var after string
	err = db.QueryRowContext(ctx, serverState).Scan(&after)
	assert.False(t, err != nil || after != stats, "statistics reset or replication slot created: %q → %q (%v)", stats, after, err)
	var n int
	err = db.QueryRowContext(ctx, "SELECT count(*) FROM users").Scan(&n)
	assert.False(t, err != nil || n != 2, "users: %d rows, %v", n, err)
	assert.NoError(t, db.QueryRowContext(ctx, "SELECT count(*) FROM t").Scan(&n), "t was dropped")
}

// enginePipeline returns a builder of pipelines over ex (a server's
// guarded executor) whose model is the one given, with the hybrid
// retriever on sch and no repairs.
func enginePipeline(t *testing.T, ex text2sql.Executor, sch *schema.Database, dialect text2sql.Dialect) func(text2sql.Model) *text2sql.Pipeline {
	t.Helper()
	ret, err := retriever.NewHybrid(context.Background(), retriever.HybridOptions{Schema: sch})
	require.NoError(t, err)
	return func(model text2sql.Model) *text2sql.Pipeline {
		gen, err := generator.New(model, generator.Options{Dialect: dialect})
		require.NoError(t, err)
		p, err := text2sql.New(text2sql.Config{Retriever: ret, Generator: gen, Executor: ex, MaxRepairs: -1})
		require.NoError(t, err)
		return p
	}
}

func kindOf(e *wire.SQLError) text2sql.ErrorKind {
	if e == nil {
		return ""
	}
	return e.Kind
}

// TestOneChokePointMariaDB runs issue 9's MariaDB attacks (executable
// comments, lexing tricks, file and lock functions, user variables, a
// result too big) through every entry point on a fresh database of the
// test server, as root: no file is written, no row changes, no lock or
// variable is left for the next session.
func TestOneChokePointMariaDB(t *testing.T) {
	db, _ := dbtest.MySQL(t)
	dbtest.Exec(t, db, "CREATE TABLE singer (id INT PRIMARY KEY, Name TEXT)", "INSERT INTO singer VALUES (1, 'Ada'), (2, 'Joe')")
	ctx := context.Background()
	ex, err := mysql.New(ctx, db, mysql.Options{})
	require.NoError(t, err)
	pipeline := enginePipeline(t, ex, ex.Schema(), text2sql.DialectMySQL)
	file := filepath.Join(os.TempDir(), dbtest.Name("text2sql_pwn"))
	cases := []string{
		"SELECT 1 /*! INTO OUTFILE '" + file + "' */ FROM DUAL",
		"SELECT Name /*!50000 INTO OUTFILE '" + file + "' */ FROM singer",
		"SELECT 'a\\' , ' INTO OUTFILE \"" + file + "\" -- '",
		"SELECT Name FROM singer # '\nINTO OUTFILE '" + file + "' -- '",
		"SELECT 1 --1 INTO OUTFILE '" + file + "'\nFROM DUAL",
		"SELECT LOAD_FILE('/etc/hostname')",
		"SELECT @secret := 'alice'",
		"SELECT GET_LOCK('x', 0)",
		"SELECT SLEEP(5)",
		"DROP TABLE singer",
		"SELECT Name FROM singer; DELETE FROM singer",
		"WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 50) SELECT REPEAT('x', 10000000) FROM s",
	}
	chokePoint(t, pipeline(nil), func(q string) *text2sql.Pipeline { return pipeline(sqlModel(q)) }, cases)
	var n, locked int
	err = db.QueryRowContext(ctx, "SELECT count(*), IS_USED_LOCK('x') IS NOT NULL FROM singer").Scan(&n, &locked)
	assert.False(t, err != nil || n != 2 || locked != 0, "singer: %d rows, lock held %d, %v", n, locked, err)
	if _, err := os.Stat(file); !assert.Error(t, err, "%s was written", file) {
		os.Remove(file)
	}
}
