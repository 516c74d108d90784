package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sqlite3 "github.com/mattn/go-sqlite3"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/executor"
	"github.com/text2sql-go/text2sql/guard"
	"github.com/text2sql-go/text2sql/internal/dbtest"
	"github.com/text2sql-go/text2sql/internal/exectest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const employees = `
CREATE TABLE Employee (id INTEGER PRIMARY KEY, name TEXT);
INSERT INTO Employee VALUES (1, 'Ada'), (2, 'Grace');
CREATE TABLE employees (id INTEGER PRIMARY KEY, name TEXT);
INSERT INTO employees VALUES (1, 'Ada');
CREATE TABLE city_stats (city TEXT, population INTEGER);
INSERT INTO city_stats VALUES ('Toronto', 2930000);
CREATE TABLE messages (id INTEGER PRIMARY KEY, body TEXT);
INSERT INTO messages VALUES (1, 'hi'), (2, 'there'), (3, '!');
CREATE INDEX messages_body ON messages (body);
PRAGMA user_version = 7;
`

func userVersion(t *testing.T, path string) int {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	require.NoError(t, err)
	defer db.Close()
	var v int
	require.NoError(t, db.QueryRow(`PRAGMA user_version`).Scan(&v))
	return v
}

// C1 #1: DROP TABLE is refused as not read-only whatever the case and white
// space; the table survives; with the statement check bypassed, SQLite
// itself refuses the write.
func TestC1DropTable(t *testing.T) {
	path := dbtest.SQLiteFile(t, "emp.db", employees)
	untouched(t, path)
	e := open(t, path, Options{})
	refusedUnread(t, e, text2sql.KindNotReadOnly,
		"DROP TABLE Employee;",
		"\n  drop\ttable city_stats ;  ",
		"DrOp TaBlE Employee",
		"/* cleanup */ DROP TABLE IF EXISTS Employee -- bye",
		"(DROP TABLE Employee)",
	)
	require.Equal(t, 2, count(t, path, "Employee"), "a table lost rows")
	require.Equal(t, 1, count(t, path, "city_stats"), "a table lost rows")

	// Bypass the lexical check: the authorizer refuses at prepare time.
	bypass := open(t, path, Options{skipTextCheck: true})
	for _, q := range []string{"DROP TABLE Employee;", "\n  drop\ttable city_stats ;  "} {
		res := exectest.RunKind(t, bypass, q, text2sql.KindNotReadOnly)
		assert.Contains(t, res.Error.Message, "schema change", "%q: message %q does not name the action", q, res.Error.Message)
	}

	// No authorizer either: the connection is read-only (mode=ro,
	// query_only) and SQLite answers SQLITE_READONLY.
	bare := open(t, path, Options{skipTextCheck: true, noAuthorizer: true})
	exectest.RunKind(t, bare, "DROP TABLE Employee", text2sql.KindNotReadOnly)
	_, err := bare.DB().Exec("DROP TABLE Employee")
	var serr sqlite3.Error
	require.True(t, errors.As(err, &serr), "DROP through the bare read-only handle: %v, want SQLITE_READONLY", err)
	require.Equal(t, sqlite3.ErrReadonly, serr.Code, "DROP through the bare read-only handle: %v, want SQLITE_READONLY", err)
	// mode=ro alone (no query_only) is enough.
	roOnly := open(t, path, Options{skipTextCheck: true, noAuthorizer: true, noQueryOnly: true})
	_, err = roOnly.DB().Exec("DROP TABLE Employee")
	require.True(t, errors.As(err, &serr), "DROP with mode=ro only: %v, want SQLITE_READONLY", err)
	require.Equal(t, sqlite3.ErrReadonly, serr.Code, "DROP with mode=ro only: %v, want SQLITE_READONLY", err)
	// And through the guarded handle the authorizer says no.
	_, err = e.DB().Exec("DROP TABLE Employee")
	require.Error(t, err, "DROP through DB(): %v, want not authorized", err)
	require.Contains(t, err.Error(), "not authorized", "DROP through DB(): %v, want not authorized", err)
	require.Equal(t, 2, count(t, path, "Employee"), "a table lost rows")
	require.Equal(t, 1, count(t, path, "city_stats"), "a table lost rows")
}

// C1 #2a: several statements are refused and none runs, not even the
// first SELECT: SQLite's authorizer, which it calls while compiling any
// statement, is never called.
func TestC1MultipleStatements(t *testing.T) {
	path := dbtest.SQLiteFile(t, "emp.db", employees)
	untouched(t, path)
	e := open(t, path, Options{})
	refusedUnread(t, e, text2sql.KindMultipleStatements,
		"SELECT 1; DROP TABLE employees; SELECT 2;",
		"SELECT 1;DROP TABLE employees",
		"SELECT name FROM employees; SELECT 2",
		"SELECT 1 /* /* */ ; DROP TABLE employees; -- */", // nested comment read the SQLite way
		"SELECT $a$; DROP TABLE employees; SELECT $a$",    // dollar quote is not a string in SQLite
		"SELECT '\\'; DROP TABLE employees; SELECT '\\'",  // backslash escapes, MySQL's way
	)
	require.Equal(t, 1, count(t, path, "employees"), "employees lost rows")
	// A semicolon in a literal, identifier or comment, or a trailing
	// comment after the final semicolon, is still one statement.
	for _, q := range []string{
		"SELECT ';' AS x;",
		`SELECT name AS "a;b" FROM employees /* ; */`,
		"SELECT 1; -- trailing comment",
		"SELECT 1;;\n",
	} {
		before := e.authCalls.Load()
		res := exectest.Run(t, e, q)
		assert.False(t, res.Error != nil || len(res.Rows) != 1, "%q: %v %v", q, res.Error, res.Rows)
		assert.NotEqual(t, before, e.authCalls.Load(), "%q: accepted statement did not reach SQLite?", q)
	}
	for _, q := range []string{"", "  ;; ", "-- nothing\n/* at all */;"} {
		exectest.RunKind(t, e, q, text2sql.KindEmpty)
	}
}

// C1 #7: a data-modifying statement after a CTE is refused; the row count
// is unchanged; bypassing the check meets the authorizer, and without it
// the read-only connection (SQLITE_READONLY).
func TestC1CTEDelete(t *testing.T) {
	path := dbtest.SQLiteFile(t, "msg.db", employees)
	untouched(t, path)
	q := "WITH x AS (SELECT 1) DELETE FROM messages -- limit"
	e := open(t, path, Options{})
	exectest.RunKind(t, e, q, text2sql.KindNotReadOnly)
	for _, v := range []string{
		"with x as (select 1) insert into messages values (9, 'x')",
		"WITH x AS (SELECT 1) UPDATE messages SET body = ''",
		"WITH d AS (DELETE FROM messages RETURNING *) SELECT * FROM d",
		"WITH RECURSIVE a AS (SELECT 1), b(n) AS (INSERT INTO messages VALUES (5, 'x') RETURNING id) SELECT * FROM b",
		"REPLACE INTO messages VALUES (1, 'x')",
		"SELECT * FROM messages FOR UPDATE",
		"SELECT * INTO loot FROM messages",
	} {
		exectest.RunKind(t, e, v, text2sql.KindNotReadOnly)
	}
	exectest.RunKind(t, open(t, path, Options{skipTextCheck: true}), q, text2sql.KindNotReadOnly)
	_, err := open(t, path, Options{noAuthorizer: true}).DB().Exec(q)
	var serr sqlite3.Error
	require.True(t, errors.As(err, &serr), "bypass on the bare read-only handle: %v, want SQLITE_READONLY", err)
	require.Equal(t, sqlite3.ErrReadonly, serr.Code, "bypass on the bare read-only handle: %v, want SQLITE_READONLY", err)
	require.Equal(t, 3, count(t, path, "messages"), "messages lost rows")
}

// C1 #8: VACUUM INTO, ATTACH and PRAGMA are refused, with or without the
// lexical check; no file is created; user_version is unchanged; the DSN is
// a file: URI with mode=ro; a CREATE through the handle fails.
func TestC1AttachVacuumPragma(t *testing.T) {
	path := dbtest.SQLiteFile(t, "emp.db", employees)
	untouched(t, path)
	dir := filepath.Dir(path)
	exfil, other := filepath.Join(dir, "exfil.db"), filepath.Join(dir, "other.db")
	stmts := []string{
		"/* x */ VACUUM INTO '" + exfil + "'",
		"-- x\nATTACH DATABASE '" + other + "' AS o",
		"PRAGMA user_version = 42",
		"PRAGMA writable_schema = ON",
		"VACUUM",
		"DETACH DATABASE main",
		"BEGIN IMMEDIATE",
		"SAVEPOINT s1",
		"ANALYZE",
		"REINDEX",
		"SELECT * FROM pragma_table_info('messages')",
	}
	kinds := []text2sql.ErrorKind{
		text2sql.KindForbiddenStatement, text2sql.KindForbiddenStatement, text2sql.KindForbiddenStatement,
		text2sql.KindForbiddenStatement, text2sql.KindForbiddenStatement, text2sql.KindForbiddenStatement,
		text2sql.KindForbiddenStatement, text2sql.KindForbiddenStatement, text2sql.KindNotReadOnly,
		text2sql.KindNotReadOnly, text2sql.KindForbiddenFunction,
	}
	e := open(t, path, Options{})
	bypass := open(t, path, Options{skipTextCheck: true})
	for i, q := range stmts {
		exectest.RunKind(t, e, q, kinds[i])
		// Even on the read-only handle without the lexical check, the
		// authorizer refuses them. VACUUM passes the authorizer at
		// prepare time (it attaches its target only when it runs), so
		// sqlite3_stmt_readonly stops it first, as not read-only; so does
		// SQLite's read-only check for a bare REINDEX, which has nothing
		// to authorize.
		res := exectest.Run(t, bypass, q)
		require.NotNil(t, res.Error, "bypass %q: %+v", q, res.Error)
		require.True(t, res.Error.Kind.Refusal(), "bypass %q: %+v", q, res.Error)
		if strings.Contains(q, "VACUUM") || q == "REINDEX" {
			assert.Equal(t, text2sql.KindNotReadOnly, res.Error.Kind, "bypass %q: %+v", q, res.Error)
			continue
		}
		assert.Equal(t, kinds[i], res.Error.Kind, "bypass %q: kind %s (%s), want %s", q, res.Error.Kind, res.Error.Message, kinds[i])
	}
	// Without the authorizer, SQLITE_LIMIT_ATTACHED = 0 still stops ATTACH
	// and VACUUM INTO (which attaches its target), and the read-only
	// connection the PRAGMA write.
	bare := open(t, path, Options{skipTextCheck: true, noAuthorizer: true})
	for _, q := range append(stmts[:3], "REINDEX") {
		_, err := bare.DB().Exec(q)
		assert.Error(t, err, "bare handle ran %q", q)
	}
	for _, f := range []string{exfil, other} {
		_, err := os.Stat(f)
		assert.ErrorIs(t, err, os.ErrNotExist, "%s was created", f)
	}
	v := userVersion(t, path)
	assert.Equal(t, 7, v, "user_version = %d, want 7", v)

	// The DSN really used.
	assert.False(t, !strings.HasPrefix(e.dsn, "file:") || !strings.Contains(e.dsn, "mode=ro") || !strings.Contains(e.dsn, "_query_only=1"), "DSN %q", e.dsn)
	var file string
	err := bare.DB().QueryRow(`SELECT file FROM pragma_database_list WHERE name = 'main'`).Scan(&file)
	assert.False(t, err != nil || file != path, "connection opened %q (%v), want %q", file, err, path)
	var qo int
	err = bare.DB().QueryRow(`PRAGMA query_only`).Scan(&qo)
	assert.False(t, err != nil || qo != 1, "query_only = %d (%v)", qo, err)
	for _, h := range []*sql.DB{e.DB(), bare.DB()} {
		_, err := h.Exec("CREATE TABLE pwn (x)")
		assert.Error(t, err, "CREATE through the handle succeeded")
	}
	got := listDir(t, dir)
	assert.Equal(t, []string{"emp.db"}, got, "files in the database directory: %q", got)
}

// DSN escapes characters that mean something in a URI, and Open finds the
// file under such a name.
func TestDSNEscaping(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "we?ird #1 100%.db")
	src := dbtest.SQLiteFile(t, "src.db", "CREATE TABLE t (x); INSERT INTO t VALUES (42);")
	b, err := os.ReadFile(src)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, b, 0o644))
	dsn, err := DSN(path, true)
	require.NoError(t, err)
	assert.False(t, !strings.HasPrefix(dsn, "file:///") || strings.Count(dsn, "?") != 1 || strings.Contains(dsn, "#") ||
		!strings.HasSuffix(dsn, "?mode=ro&_query_only=1"), "DSN %q", dsn)
	e := open(t, path, Options{})
	res := exectest.Run(t, e, "SELECT x FROM t")
	require.Nil(t, res.Error, "%+v", res)
	require.Equal(t, [][]any{{int64(42)}}, res.Rows, "%+v", res)
	got := listDir(t, dir)
	assert.Equal(t, []string{"we?ird #1 100%.db"}, got, "files: %q", got)
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.db")
	_, err := Open(missing, Options{})
	assert.False(t, !errors.Is(err, text2sql.ErrInvalidConfig) || !strings.Contains(err.Error(), "does not exist"), "missing file: %v", err)
	_, err = os.Stat(missing)
	assert.ErrorIs(t, err, os.ErrNotExist, "Open created the missing file")
	_, err = Open(dir, Options{})
	assert.ErrorIs(t, err, text2sql.ErrInvalidConfig, "directory: %v", err)
	junk := filepath.Join(dir, "junk.db")
	os.WriteFile(junk, []byte("this is not a database, just some text long enough to have a header....."), 0o644)
	_, err = Open(junk, Options{})
	assert.ErrorIs(t, err, text2sql.ErrInvalidConfig, "junk file: %v", err)
	good := dbtest.SQLiteFile(t, "g.db", "CREATE TABLE t (x)")
	_, err = Open(good, Options{MaxRows: -1})
	assert.ErrorIs(t, err, text2sql.ErrInvalidConfig, "negative MaxRows: %v", err)
	e, err := Open(good, Options{})
	require.NoError(t, err)
	e.Close()
	_, err = e.Execute(context.Background(), text2sql.ExecuteRequest{SQL: "SELECT 1"})
	assert.ErrorIs(t, err, executor.ErrClosed, "Execute after Close: %v", err)
	err = e.Check(context.Background(), "SELECT 1")
	assert.ErrorIs(t, err, executor.ErrClosed, "Check after Close: %v", err)
	assert.NoError(t, e.Close(), "second Close")
}

// C1 #6 negative control: a recursive CTE runs and returns 1..5.
func TestC1RecursiveCTE(t *testing.T) {
	e := open(t, dbtest.SQLiteFile(t, "x.db", "CREATE TABLE t (x)"), Options{})
	res := exectest.Run(t, e, "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 5) SELECT n FROM t")
	want := [][]any{{int64(1)}, {int64(2)}, {int64(3)}, {int64(4)}, {int64(5)}}
	require.Nil(t, res.Error, "%+v", res)
	require.Equal(t, want, res.Rows, "%+v", res)
	require.Equal(t, []string{"n"}, res.Columns, "%+v", res)
	require.NoError(t, e.Check(context.Background(), "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 5) SELECT n FROM t"))
}

// C1 #40: load_extension is refused as a forbidden function, and
// extension loading is off in the driver even without the authorizer.
func TestC1LoadExtension(t *testing.T) {
	path := dbtest.SQLiteFile(t, "x.db", "CREATE TABLE t (x)")
	untouched(t, path)
	q := "SELECT load_extension('/tmp/x.so')"
	for _, opts := range []Options{{}, {skipTextCheck: true}} {
		res := exectest.RunKind(t, open(t, path, opts), q, text2sql.KindForbiddenFunction)
		assert.Contains(t, res.Error.Message, "load_extension", "message %q does not name the function", res.Error.Message)
	}
	err := open(t, path, Options{}).Check(context.Background(), q)
	var se *text2sql.SQLError
	assert.False(t, !errors.As(err, &se) || se.Kind != text2sql.KindForbiddenFunction, "Check: %v", err)
	// Other functions off the allow-list, as a scalar, in a subquery, in
	// a view-like CTE, or as a table-valued pragma.
	e := open(t, path, Options{})
	for _, q := range []string{
		"SELECT fts3_tokenizer('simple')",
		"SELECT x FROM t WHERE x IN (SELECT authenticate('u', 'p'))",
		"WITH c AS (SELECT sqlite_compileoption_get(0) AS o) SELECT o FROM c",
		"SELECT * FROM pragma_compile_options",
	} {
		exectest.RunKind(t, e, q, text2sql.KindForbiddenFunction)
	}
	// Extension loading is disabled in the driver: even a connection
	// without our authorizer cannot call it.
	bare := open(t, path, Options{skipTextCheck: true, noAuthorizer: true})
	_, err = bare.DB().Exec(q)
	assert.False(t, err == nil || !strings.Contains(err.Error(), "not authorized"), "load_extension without the authorizer: %v", err)
	// The allow-list can be extended.
	ext := open(t, path, Options{AllowFunctions: []string{"Pragma_Table_Info"}})
	res := exectest.Run(t, ext, "SELECT name FROM pragma_table_info('t')")
	assert.False(t, res.Error != nil || !reflect.DeepEqual(res.Rows, [][]any{{"x"}}), "allowed pragma function: %+v", res)
	exectest.RunKind(t, ext, "PRAGMA table_info(t)", text2sql.KindForbiddenStatement)
}

// Function names are matched as SQLite matches them, whatever their
// case, by auth.c's lookup (ASCII names on the list) and by Go's (the
// rest): an allowed name in upper or mixed case runs, a name off the list
// is refused in any case, and a name AllowFunctions adds is allowed in any
// case while one beyond ASCII on the list changes nothing else.
func TestFunctionNameCase(t *testing.T) {
	path := dbtest.SQLiteFile(t, "x.db", "CREATE TABLE t (x)")
	e := open(t, path, Options{})
	res := exectest.Run(t, e, "SELECT ABS(-1), Upper('a'), lOWER('A'), COUNT(*)")
	require.Nil(t, res.Error, "%v", res.Error)
	assert.Equal(t, [][]any{{int64(1), "A", "a", int64(1)}}, res.Rows)
	for _, q := range []string{"SELECT LOAD_EXTENSION('x')", "SELECT Sqlite_Source_Id()", "SELECT sqlite_source_id()"} {
		res := exectest.RunKind(t, e, q, text2sql.KindForbiddenFunction)
		assert.Contains(t, strings.ToLower(res.Error.Message), strings.ToLower(q[7:strings.IndexByte(q, '(')]), q)
	}
	ext := open(t, path, Options{AllowFunctions: []string{"SQLITE_source_id", "é", "abs\x00load_extension"}})
	for _, q := range []string{"SELECT Sqlite_Source_Id()", "SELECT sqlite_source_id()"} {
		res := exectest.Run(t, ext, q)
		assert.Nil(t, res.Error, "%q: %v", q, res.Error)
	}
	exectest.RunKind(t, ext, "SELECT load_extension('x')", text2sql.KindForbiddenFunction)
}

// The allow-list covers what real queries use.
func TestAllowedFunctions(t *testing.T) {
	e := open(t, dbtest.SQLiteFile(t, "x.db", `CREATE TABLE t (x INTEGER, s TEXT, d TEXT);
		INSERT INTO t VALUES (1, 'abc', '2024-01-31'), (2, 'b%c', '2023-12-01');`), Options{})
	for _, q := range []string{
		"SELECT abs(-x), upper(s), lower(s), length(s), substr(s, 1, 2), substring(s, 2), instr(s, 'b'), replace(s, 'a', 'z'), trim(s), round(x / 3.0, 2), coalesce(NULL, x), ifnull(NULL, 1), nullif(x, 1), iif(x > 1, 'y', 'n'), typeof(x), printf('%05d', x), format('%s', s), hex(s), quote(s), char(65), unicode('A'), cast(x AS REAL) FROM t",
		"SELECT count(*), count(DISTINCT s), sum(x), total(x), avg(x), min(x), max(x), group_concat(s, ',') FROM t",
		"SELECT date(d), time('12:00'), datetime(d), julianday(d), strftime('%Y', d), unixepoch(d), date('now') IS NOT NULL, CURRENT_DATE IS NOT NULL FROM t",
		"SELECT row_number() OVER (ORDER BY x), rank() OVER w, dense_rank() OVER w, lag(x) OVER w, lead(x) OVER w, first_value(x) OVER w, ntile(2) OVER w, percent_rank() OVER w, cume_dist() OVER w FROM t WINDOW w AS (ORDER BY x)",
		"SELECT json_extract('{\"a\":[1,2]}', '$.a[1]'), json_array(1, 2), json_object('k', x), '{\"a\":1}' -> '$.a', '{\"a\":1}' ->> 'a', json_array_length('[1]'), json_valid('{}') FROM t",
		"SELECT value FROM json_each('[1,2,3]')",
		"SELECT s FROM t WHERE s LIKE 'a%' OR s GLOB 'b*' OR s LIKE 'b\\%c' ESCAPE '\\'",
		"SELECT x FROM t ORDER BY random() LIMIT 1",
		"SELECT CASE WHEN x BETWEEN 1 AND 2 THEN 'in' ELSE 'out' END, x IN (1, 3), EXISTS (SELECT 1 FROM t) FROM t",
		"VALUES (1, 'a'), (2, 'b')",
		"(SELECT 1)",
		"SELECT zeroblob(10), randomblob(4) IS NOT NULL, length(zeroblob(100))",
	} {
		res := exectest.Run(t, e, q)
		if res.Error != nil && q == "(SELECT 1)" && res.Error.Kind == text2sql.KindSyntax {
			continue // SQLite has no parenthesised top-level SELECT; the check lets the engine say so
		}
		assert.Nil(t, res.Error, "%q", q)
	}
}

// C1 #11 (library entry points): the executor and the guard give the
// same refusal for DROP TABLE, and the generic executor (which this
// package's check is shared with) does too.
func TestC1EntryPoints(t *testing.T) {
	path := dbtest.SQLiteFile(t, "t.db", "CREATE TABLE t (x); INSERT INTO t VALUES (1);")
	untouched(t, path)
	e := open(t, path, Options{})
	var (
		_ text2sql.Executor = e
		_ text2sql.Guard    = e
	)
	plain, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	require.NoError(t, err)
	defer plain.Close()
	gen := executor.New(plain, executor.Options{})
	entry := map[string]func(string) *text2sql.SQLError{
		"sqlite.Execute": func(q string) *text2sql.SQLError { return exectest.Run(t, e, q).Error },
		"sqlite.Check":   func(q string) *text2sql.SQLError { return exectest.SQLError(e.Check(context.Background(), q)) },
		"executor.Execute": func(q string) *text2sql.SQLError {
			res, err := gen.Execute(context.Background(), text2sql.ExecuteRequest{SQL: q})
			require.NoError(t, err)
			return res.Error
		},
		"executor.Check":  func(q string) *text2sql.SQLError { return exectest.SQLError(gen.Check(context.Background(), q)) },
		"guard.CheckText": func(q string) *text2sql.SQLError { return guard.CheckText(q) },
	}
	for name, f := range entry {
		se := f("DROP TABLE t")
		assert.False(t, se == nil || se.Kind != text2sql.KindNotReadOnly || !errors.Is(se, text2sql.ErrRefused), "%s: %v", name, se)
		se = f("SELECT x FROM t")
		assert.Nil(t, se, "%s refused a query: %v", name, se)
	}
	require.Equal(t, 1, count(t, path, "t"), "t lost rows")
}

// Check prepares without stepping: a query that would run forever is
// accepted at once, and refusals match Execute's.
func TestCheck(t *testing.T) {
	path := dbtest.SQLiteFile(t, "t.db", "CREATE TABLE topics (id INTEGER, name TEXT);")
	e := open(t, path, Options{Timeout: 50 * 1e6})
	cases := exectest.TopicsCheckKinds()
	maps.Copy(cases, map[string]text2sql.ErrorKind{
		"SELECT load_extension('x')":          text2sql.KindForbiddenFunction,
		"PRAGMA user_version":                 text2sql.KindForbiddenStatement,
		"SELECT nosuchfunc(name) FROM topics": text2sql.KindRuntime,
	})
	exectest.WantCheck(t, e, cases)
	se := exectest.SQLError(e.Check(context.Background(), "SELECT name FROM topic"))
	assert.False(t, se == nil || !strings.Contains(se.Hint, "topics"), "hint: %+v", se)
}

// Issue 9's false refusals: columns named like keywords of writes and
// locking clauses (lock, merge, truncate, update, …) are what SQLite reads
// them as, because SQLite's own parse decides whether a query writes; a
// construct SQLite cannot parse that would write or lock elsewhere is
// still named as the refusal it is.
func TestKeywordNamedColumns(t *testing.T) {
	e := open(t, dbtest.SQLiteFile(t, "weird.db", `CREATE TABLE weird (id INTEGER PRIMARY KEY, "lock" INT, "merge" TEXT, "truncate" TEXT, "into" INT, "returning" INT, "update" INT);
		INSERT INTO weird VALUES (1, 1, 'm', 't', 5, 6, 7), (2, 3, 'n', 'u', 8, 9, 10);`), Options{})
	for q, want := range map[string]int{
		`SELECT merge, truncate FROM weird`:                               2,
		`SELECT id FROM weird WHERE lock IN (1, 2)`:                       1,
		`SELECT id FROM weird WHERE lock in (SELECT 1)`:                   1,
		`SELECT "into", "returning", "update" FROM weird`:                 2,
		`SELECT w."update" FROM weird w WHERE w.merge = 'm'`:              1,
		`SELECT count(*) FROM weird GROUP BY truncate HAVING lock IN (1)`: 1,
	} {
		res, err := e.Execute(context.Background(), text2sql.ExecuteRequest{SQL: q})
		require.NoError(t, err)
		require.Nil(t, res.Error, q)
		assert.Len(t, res.Rows, want, q)
		assert.NoError(t, e.Check(context.Background(), q), q)
	}
	for _, q := range []string{
		`SELECT * FROM weird FOR UPDATE`,
		`SELECT * INTO loot FROM weird`,
		`SELECT * FROM weird LOCK IN SHARE MODE`,
		`WITH d AS (DELETE FROM weird RETURNING *) SELECT * FROM d`,
		`SELECT id FROM weird WHERE id IN (DELETE FROM weird RETURNING id)`,
	} {
		res, err := e.Execute(context.Background(), text2sql.ExecuteRequest{SQL: q})
		require.NoError(t, err)
		if assert.NotNil(t, res.Error, q) {
			assert.Equal(t, text2sql.KindNotReadOnly, res.Error.Kind, q)
		}
	}
}

// bigDB returns a database with a table big of n rows (id, label, half).
func bigDB(t testing.TB, n int) string {
	t.Helper()
	return dbtest.SQLiteFile(t, "big.db", `CREATE TABLE big (id INTEGER PRIMARY KEY, label TEXT, half REAL);
		WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < `+strconv.Itoa(n)+`)
		INSERT INTO big SELECT n, 'row ' || n, n * 0.5 FROM c;`)
}

// C5 #31: a 1,000,000-row table, SELECT * with a cap of 1,000: 1,000 rows,
// truncated, and the memory used does not depend on the table's size.
func TestC5RowCapBigTable(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 1,000,000-row table")
	}
	bigPath := bigDB(t, 1_000_000)
	untouched(t, bigPath)
	big := open(t, bigPath, Options{MaxRows: 1000})
	small := open(t, bigDB(t, 2000), Options{MaxRows: 1000})

	res := exectest.Run(t, big, "SELECT * FROM big")
	require.Nil(t, res.Error, "error %v, %d rows, truncated %v", res.Error, res.RowCount, res.Truncated)
	require.Equal(t, 1000, res.RowCount, "error %v, %d rows, truncated %v", res.Error, res.RowCount, res.Truncated)
	require.True(t, res.Truncated, "error %v, %d rows, truncated %v", res.Error, res.RowCount, res.Truncated)
	require.False(t, !reflect.DeepEqual(res.Columns, []string{"id", "label", "half"}) ||
		!reflect.DeepEqual(res.Rows[999], []any{int64(1000), "row 1000", 500.0}), "columns %q, last row %v", res.Columns, res.Rows[999])
	// A request's cap wins over the option.
	res, _ = big.Execute(context.Background(), text2sql.ExecuteRequest{SQL: "SELECT * FROM big", MaxRows: 10})
	require.Equal(t, 10, res.RowCount, "request cap: %d rows, truncated %v", res.RowCount, res.Truncated)
	require.True(t, res.Truncated, "request cap: %d rows, truncated %v", res.RowCount, res.Truncated)
	// Exactly at the cap is not truncated.
	res = exectest.Run(t, small, "SELECT * FROM big LIMIT 1000")
	require.False(t, res.RowCount != 1000 || res.Truncated, "at cap: %d rows, truncated %v", res.RowCount, res.Truncated)

	measure := func(e *Executor) (allocs float64, bytes uint64) {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		allocs = testing.AllocsPerRun(5, func() { exectest.Run(t, e, "SELECT * FROM big") })
		runtime.ReadMemStats(&after)
		return allocs, (after.TotalAlloc - before.TotalAlloc) / 6 // AllocsPerRun runs f once more to warm up
	}
	bigAllocs, bigBytes := measure(big)
	smallAllocs, smallBytes := measure(small)
	t.Logf("1,000,000-row table: %.0f allocs, %d bytes per call; 2,000-row table: %.0f allocs, %d bytes",
		bigAllocs, bigBytes, smallAllocs, smallBytes)
	assert.False(t, bigAllocs > smallAllocs*1.1+50 || bigBytes > smallBytes*2, "memory grows with the table: %.0f vs %.0f allocs, %d vs %d bytes", bigAllocs, smallAllocs, bigBytes, smallBytes)
	// 1,000,000 rows of three values would need tens of megabytes.
	assert.LessOrEqual(t, bigBytes, uint64(2<<20), "%d bytes allocated for a 1,000-row result", bigBytes)
}

func maxRSS(t *testing.T) int64 {
	var ru syscall.Rusage
	require.NoError(t, syscall.Getrusage(syscall.RUSAGE_SELF, &ru), "getrusage")
	return ru.Maxrss * 1024 // kilobytes on Linux
}

// C5 #41: values beyond the length limit fail with too_large; the process
// does not allocate gigabytes.
func TestC5HugeValues(t *testing.T) {
	path := dbtest.SQLiteFile(t, "x.db", "CREATE TABLE t (x)")
	untouched(t, path)
	rss := maxRSS(t)
	for _, opts := range []Options{{}, {skipTextCheck: true}} {
		e := open(t, path, opts)
		for _, q := range []string{
			"SELECT zeroblob(2000000000)",
			"SELECT printf('%.*c', 1000000000, 'x')",
			"SELECT length(replace(hex(zeroblob(1000000)), '0', '0000000000000000'))",
			"SELECT randomblob(2000000000)",
			"WITH RECURSIVE c(s) AS (SELECT 'x' UNION ALL SELECT s || s FROM c WHERE length(s) < 1e10) SELECT max(length(s)) FROM c",
		} {
			res := exectest.RunKind(t, e, q, text2sql.KindTooLarge)
			assert.Contains(t, res.Error.Message, "1048576 bytes", "message %q does not give the limit", res.Error.Message)
		}
		// Under the limit is fine.
		res := exectest.Run(t, e, "SELECT length(zeroblob(1000000))")
		require.Nil(t, res.Error, "%+v", res)
		require.Equal(t, int64(1000000), res.Rows[0][0], "%+v", res)
	}
	// A lower limit applies.
	e := open(t, path, Options{MaxLength: 1000})
	exectest.RunKind(t, e, "SELECT zeroblob(1001)", text2sql.KindTooLarge)
	grown := maxRSS(t) - rss
	assert.LessOrEqual(t, grown, int64(256<<20), "peak RSS grew by %d MiB", grown>>20)
}

// A statement that runs forever is interrupted at the time limit and
// reported as timeout, not as a Go error; the caller's own cancellation
// is a Go error.
func TestTimeout(t *testing.T) {
	e := open(t, dbtest.SQLiteFile(t, "x.db", "CREATE TABLE t (x)"), Options{Timeout: 5 * time.Second})
	start := time.Now()
	res, err := e.Execute(context.Background(), text2sql.ExecuteRequest{SQL: dbtest.Unbounded, Timeout: 200 * time.Millisecond})
	took := time.Since(start)
	require.NoError(t, err, "Go error")
	exectest.WantKind(t, dbtest.Unbounded, res, text2sql.KindTimeout)
	assert.False(t, took < 200*time.Millisecond || took > 2*time.Second || res.Duration > 2*time.Second, "stopped after %v (Duration %v), limit 200ms", took, res.Duration)
	// The option's limit applies when the request has none.
	short := open(t, dbtest.SQLiteFile(t, "y.db", "CREATE TABLE t (x)"), Options{Timeout: 100 * time.Millisecond})
	exectest.RunKind(t, short, dbtest.Unbounded, text2sql.KindTimeout)
	// Also while rows are being read (the first rows come quickly).
	rowsForever := "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT n FROM c WHERE n % 1000000000 = 0"
	exectest.RunKind(t, short, rowsForever, text2sql.KindTimeout)

	// The caller cancels: a Go error, context.Canceled.
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start = time.Now()
	res, err = e.Execute(ctx, text2sql.ExecuteRequest{SQL: dbtest.Unbounded})
	require.ErrorIs(t, err, context.Canceled, "caller cancellation: %v, %+v", err, res)
	require.Nil(t, res, "caller cancellation: %v, %+v", err, res)
	took = time.Since(start)
	assert.LessOrEqual(t, took, 2*time.Second, "cancellation took %v", took)
	// The caller's own deadline is the caller's business too.
	ctx, cancel = context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err = e.Execute(ctx, text2sql.ExecuteRequest{SQL: dbtest.Unbounded})
	require.ErrorIs(t, err, context.DeadlineExceeded, "caller deadline: %v", err)
	// Already cancelled: nothing runs.
	_, err = e.Execute(ctx, text2sql.ExecuteRequest{SQL: "SELECT 1"})
	require.Error(t, err, "cancelled context accepted")
	// The executor still works afterwards, on every pooled connection.
	for i := 0; i < 8; i++ {
		res := exectest.Run(t, e, "SELECT 1")
		require.Nil(t, res.Error, "after timeouts: %v", res.Error)
	}
}

// The time limit also bounds the wait for a connection: with the only
// one busy, a call whose limit passes first ends in timeout without
// running, and the executor serves calls once it is free.
func TestTimeoutWaitingForConnection(t *testing.T) {
	e := open(t, dbtest.SQLiteFile(t, "x.db", "CREATE TABLE t (x)"), Options{MaxOpenConns: 1})
	busy := make(chan *text2sql.Result)
	go func() {
		res, _ := e.Execute(context.Background(), text2sql.ExecuteRequest{SQL: dbtest.Unbounded, Timeout: 3 * time.Second})
		busy <- res
	}()
	require.Eventually(t, func() bool { return len(e.pool.slots) == 1 && len(e.pool.idle) == 0 }, 10*time.Second, time.Millisecond)
	res, err := e.Execute(context.Background(), text2sql.ExecuteRequest{SQL: "SELECT 1", Timeout: 50 * time.Millisecond})
	require.NoError(t, err)
	exectest.WantKind(t, "SELECT 1", res, text2sql.KindTimeout)
	exectest.WantKind(t, dbtest.Unbounded, <-busy, text2sql.KindTimeout)
	res = exectest.Run(t, e, "SELECT 1")
	require.Nil(t, res.Error, "%v", res.Error)
}

// Concurrent calls each get their own refusal kind and rows (run with
// -race).
func TestConcurrent(t *testing.T) {
	e := open(t, dbtest.SQLiteFile(t, "x.db", "CREATE TABLE t (x); INSERT INTO t VALUES (1), (2), (3);"), Options{MaxOpenConns: 3})
	cases := []struct {
		q    string
		kind text2sql.ErrorKind
	}{
		{"SELECT x FROM t", ""},
		{"SELECT load_extension('x')", text2sql.KindForbiddenFunction},
		{"SELECT nope FROM t", text2sql.KindUnknownColumn},
		{"DELETE FROM t", text2sql.KindNotReadOnly},
	}
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				c := cases[(w+i)%len(cases)]
				res, err := e.Execute(context.Background(), text2sql.ExecuteRequest{SQL: c.q})
				if !assert.NoError(t, err) {
					return
				}
				if !assert.False(t, c.kind == "" && (res.Error != nil || res.RowCount != 3) || c.kind != "" && (res.Error == nil || res.Error.Kind != c.kind), "%q: %+v", c.q, res) {
					return
				}
			}
		}(w)
	}
	wg.Wait()
}

// Many rows of large values stop at the result's byte bound with too_large
// instead of holding rows × MaxLength bytes in memory.
func TestResultByteBound(t *testing.T) {
	path := dbtest.SQLiteFile(t, "x.db", "CREATE TABLE t (x); WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM c WHERE n < 1000) INSERT INTO t SELECT n FROM c")
	rss := maxRSS(t)
	e := open(t, path, Options{MaxResultBytes: 8 << 20})
	q := "SELECT zeroblob(1000000) FROM t"
	res := exectest.RunKind(t, e, q, text2sql.KindTooLarge)
	assert.False(t, !strings.Contains(res.Error.Message, "8388608 bytes") || res.Rows != nil, "%+v", res.Error)
	res = exectest.Run(t, e, "SELECT zeroblob(1000) FROM t")
	require.Nil(t, res.Error, "1000 x 1 KB under the bound: %+v", res.Error)
	require.Equal(t, 1000, res.RowCount, "1000 x 1 KB under the bound: %+v", res.Error)
	grown := maxRSS(t) - rss
	assert.LessOrEqual(t, grown, int64(256<<20), "peak RSS grew by %d MiB", grown>>20)
}

// refusedUnread requires each query to be refused with kind before any
// part of it reached SQLite (its authorizer was never called).
func refusedUnread(t *testing.T, e *Executor, kind text2sql.ErrorKind, queries ...string) {
	t.Helper()
	for _, q := range queries {
		before := e.authCalls.Load()
		exectest.RunKind(t, e, q, kind)
		assert.Equal(t, before, e.authCalls.Load(), "%q: a refused text reached SQLite", q)
	}
}
