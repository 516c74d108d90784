package postgres

import (
	"context"
	"database/sql"
	"errors"
	"maps"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/executor"
	"github.com/text2sql-go/text2sql/internal/dbtest"
	"github.com/text2sql-go/text2sql/internal/exectest"
)

// Values come typed where JSON has a type and as PostgreSQL prints them
// otherwise.
func TestValues(t *testing.T) {
	db, _ := testDB(t, `CREATE TYPE mood AS ENUM ('sad', 'ok')`)
	e := newExec(t, db, Options{})
	q := `SELECT true AS b, 2::int2 AS i2, 4::int4 AS i4, 9007199254740993::int8 AS i8, 1.5::float4 AS f4, 0.1::float8 AS f8,
		12::numeric AS n_int, 12.50::numeric(10,2) AS n_dec, 123456789012345678901234567890::numeric AS n_big,
		'NaN'::float8 AS nan, 'Infinity'::numeric AS inf, '\x0102ff'::bytea AS by, 'héllo'::text AS tx, 'ab'::varchar(5) AS vc,
		DATE '2024-01-31' AS d, TIMESTAMP '2024-01-31 12:00:00' AS ts, INTERVAL '1 day 2 hours' AS iv, ARRAY[1,2] AS arr,
		'{"a": 1}'::jsonb AS js, 'ok'::mood AS en, NULL::int AS nul, 'a1b2c3d4-0000-0000-0000-000000000000'::uuid AS id, 42::oid AS o`
	res := exectest.Run(t, e, q)
	require.Nil(t, res.Error, res.Error)
	want := []any{true, int64(2), int64(4), int64(9007199254740993), 1.5, 0.1, int64(12), 12.5, 1.2345678901234568e29,
		"NaN", "Infinity", []byte{1, 2, 0xff}, "héllo", "ab", "2024-01-31", "2024-01-31 12:00:00", "1 day 02:00:00", "{1,2}",
		`{"a": 1}`, "ok", nil, "a1b2c3d4-0000-0000-0000-000000000000", int64(42)}
	assert.Equal(t, [][]any{want}, res.Rows, "rows\n%#v\nwant\n%#v", res.Rows[0], want)
	assert.False(t, res.Columns[0] != "b" || res.Columns[len(res.Columns)-1] != "o" || len(res.Columns) != len(want), "columns %q", res.Columns)
	// A statement with no result columns and an empty result.
	res = exectest.Run(t, e, `SELECT FROM generate_series(1, 2)`)
	assert.False(t, res.Error != nil || len(res.Columns) != 0 || len(res.Rows) != 2, "%+v", res)
	res = exectest.Run(t, e, `SELECT 1 AS x WHERE false`)
	assert.False(t, res.Error != nil || !reflect.DeepEqual(res.Columns, []string{"x"}) || len(res.Rows) != 0, "%+v", res)
}

// The row cap is enforced by the server: a result that would never end
// stops at the cap, marked truncated, at once.
func TestRowCap(t *testing.T) {
	db, _ := testDB(t, `CREATE TABLE big AS SELECT g AS id FROM generate_series(1, 5000) g`)
	// Uncapped, each would run into the time limit (or the result's byte
	// bound) and answer an error: no error and 1,000 rows say the cap
	// stopped it, whatever the machine's load.
	e := newExec(t, db, Options{MaxRows: 1000})
	for _, q := range []string{
		`SELECT generate_series(1, 1000000000)`,
		`WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT n FROM c`,
		`SELECT id FROM big ORDER BY id`,
	} {
		res := exectest.Run(t, e, q)
		if !assert.False(t, res.Error != nil || res.RowCount != 1000 || !res.Truncated, "%q: %d rows, truncated %v, %v", q, res.RowCount, res.Truncated, res.Error) {
			continue
		}
		assert.False(t, res.Rows[0][0] != int64(1) || res.Rows[999][0] != int64(1000), "%q: rows %v … %v", q, res.Rows[0], res.Rows[999])
	}
	// Exactly the cap: not truncated. A request's own cap wins.
	res := exectest.Run(t, e, `SELECT id FROM big WHERE id <= 1000`)
	assert.False(t, res.RowCount != 1000 || res.Truncated, "1000 rows: %d %v", res.RowCount, res.Truncated)
	r2, err := e.Execute(context.Background(), text2sql.ExecuteRequest{SQL: `SELECT id FROM big`, MaxRows: 3})
	assert.False(t, err != nil || r2.RowCount != 3 || !r2.Truncated, "MaxRows 3: %+v %v", r2, err)
	// The connection is fine afterwards (the portal was left suspended
	// and rolled back).
	res = exectest.Run(t, e, `SELECT count(*) FROM big`)
	assert.False(t, res.Error != nil || res.Rows[0][0] != int64(5000), "%+v", res)
}

// The time limit stops an allowed query at the server; a request's own
// limit wins; the executor keeps working.
func TestTimeout(t *testing.T) {
	db, _ := testDB(t)
	const limit = 300 * time.Millisecond
	e := newExec(t, db, Options{Timeout: limit})
	q := dbtest.Unbounded
	start := time.Now()
	res := exectest.Run(t, e, q)
	require.NotNil(t, res.Error, "%+v", res.Error)
	require.Equal(t, text2sql.KindTimeout, res.Error.Kind, "%+v", res.Error)
	require.Equal(t, "57014", res.Error.SQLState, "%+v", res.Error)
	d := time.Since(start)
	// An order of magnitude over the limit, for a loaded machine; the
	// statement runs forever otherwise.
	assert.LessOrEqual(t, d, 10*limit, "stopped after %v", d)
	assert.Contains(t, res.Error.Message, "300ms", "message %q", res.Error.Message)
	r2, err := e.Execute(context.Background(), text2sql.ExecuteRequest{SQL: q, Timeout: 100 * time.Millisecond})
	assert.False(t, err != nil || r2.Error == nil || r2.Error.Kind != text2sql.KindTimeout || !strings.Contains(r2.Error.Message, "100ms"), "%+v %v", r2, err)
	res = exectest.Run(t, e, `SELECT 1`)
	assert.Nil(t, res.Error, "after a timeout: %v", res.Error)
}

// Cancelling the caller's context returns ctx.Err() at once and sends a
// cancel request: the statement stops on the server.
func TestContextCancel(t *testing.T) {
	db, _ := testDB(t)
	e := newExec(t, db, Options{skipCheck: true, Timeout: time.Minute})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	marker := dbtest.Name("sleeper")
	_, err := e.Execute(ctx, text2sql.ExecuteRequest{SQL: `SELECT pg_sleep(30), '` + marker + `'`})
	require.ErrorIs(t, err, context.Canceled, "err %v", err)
	d := time.Since(start)
	assert.LessOrEqual(t, d, 3*time.Second, "returned after %v", d)
	deadline := time.Now().Add(3 * time.Second)
	for {
		var n int
		require.NoError(t, db.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%' || $1 || '%' AND pid <> pg_backend_pid()`, marker).Scan(&n))
		if n == 0 {
			break
		}
		require.False(t, time.Now().After(deadline), "the statement still runs on the server")
		time.Sleep(50 * time.Millisecond)
	}
	// A context that ends by deadline too.
	dctx, dcancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer dcancel()
	_, err = e.Execute(dctx, text2sql.ExecuteRequest{SQL: `SELECT pg_sleep(30)`})
	assert.ErrorIs(t, err, context.DeadlineExceeded, "deadline: %v", err)
	res := exectest.Run(t, e, `SELECT 1`)
	assert.Nil(t, res.Error, "after cancel: %v", res.Error)
	// An already cancelled context: nothing is sent.
	before := e.sent.Load()
	_, err = e.Execute(ctx, text2sql.ExecuteRequest{SQL: `SELECT 1`})
	assert.ErrorIs(t, err, context.Canceled, "cancelled: %v", err)
	assert.Equal(t, before, e.sent.Load(), "sent with a cancelled context")
}

// Check parses and analyses on the server without running: a query that
// would run forever is accepted at once; errors match Execute's.
func TestCheck(t *testing.T) {
	db, _ := testDB(t, `CREATE TABLE topics (id int, name text)`)
	e := newExec(t, db, Options{Timeout: 200 * time.Millisecond})
	cases := exectest.TopicsCheckKinds()
	maps.Copy(cases, map[string]text2sql.ErrorKind{
		"SELECT pg_sleep(1)":                                        text2sql.KindForbiddenFunction,
		"-- only a comment":                                         text2sql.KindEmpty,
		"SHOW search_path":                                          text2sql.KindForbiddenStatement,
		"SELECT name + 1 FROM topics":                               text2sql.KindRuntime,
		"SELECT TOP 5 name FROM topics ORDER BY name":               text2sql.KindDialect,
		"SELECT `name` FROM topics":                                 text2sql.KindDialect,
		"SELECT name FROM topics LIMIT 5, 10":                       text2sql.KindDialect,
		"SELECT ifnull(name, '') FROM topics":                       text2sql.KindDialect,
		"SELECT strftime('%Y', now())":                              text2sql.KindDialect,
		"SELECT group_concat(name) FROM topics":                     text2sql.KindDialect,
		"SELECT name FROM topics WHERE name ILIKE '%ann%'":          "",
		"SELECT EXTRACT(year FROM now()), now() - interval '1 day'": "",
	})
	exectest.WantCheck(t, e, cases)
	se := exectest.SQLError(e.Check(context.Background(), "SELECT name FROM topic"))
	assert.False(t, se == nil || !strings.Contains(se.Hint, "topics") || se.SQLState != "42P01", "hint: %+v", se)
	se = exectest.SQLError(e.Check(context.Background(), "SELECT ifnull(name, '') FROM topics"))
	assert.False(t, se == nil || !strings.Contains(se.Hint, "coalesce"), "dialect hint: %+v", se)
	se = exectest.SQLError(e.Check(context.Background(), "SELEC name FROM topics"))
	assert.False(t, se == nil || se.SQLState != "42601" || !strings.Contains(se.Message, `"SELEC"`), "syntax: %+v", se)
}

// Open, New and Close: configuration errors, the driver check, closing.
func TestOpenNewClose(t *testing.T) {
	db, dsn := testDB(t, `CREATE TABLE t (x int)`, `INSERT INTO t VALUES (7)`)
	ctx := context.Background()
	_, err := Open(ctx, "postgres://u:secret@[::1", Options{})
	assert.False(t, !errors.Is(err, text2sql.ErrInvalidConfig) || strings.Contains(err.Error(), "secret"), "bad DSN: %v", err)
	_, err = Open(ctx, dsn, Options{MaxRows: -1})
	assert.ErrorIs(t, err, text2sql.ErrInvalidConfig, "negative MaxRows: %v", err)
	_, err = New(ctx, db, Options{SearchPath: []string{""}})
	assert.ErrorIs(t, err, text2sql.ErrInvalidConfig, "empty search path entry: %v", err)
	_, err = New(ctx, nil, Options{})
	assert.ErrorIs(t, err, text2sql.ErrInvalidConfig, "nil db: %v", err)
	lite, err := sql.Open("sqlite3", ":memory:")
	require.NoError(t, err)
	defer lite.Close()
	_, err = New(ctx, lite, Options{})
	assert.False(t, !errors.Is(err, text2sql.ErrInvalidConfig) || !strings.Contains(err.Error(), "pgx"), "sqlite handle: %v", err)
	_, err = Open(ctx, "postgres://postgres@127.0.0.1:1/x?sslmode=disable&connect_timeout=2", Options{})
	assert.False(t, err == nil || errors.Is(err, text2sql.ErrInvalidConfig), "unreachable: %v", err)

	e, err := Open(ctx, dsn, Options{MaxOpenConns: 2})
	require.NoError(t, err)
	tb := e.Schema().Lookup("t")
	assert.False(t, tb == nil || tb.Schema != "public", "schema %+v", e.Schema())
	res := exectest.Run(t, e, "SELECT x FROM t")
	assert.False(t, res.Error != nil || res.Rows[0][0] != int64(7), "%+v", res)
	require.NoError(t, e.Close())
	_, err = e.Execute(ctx, text2sql.ExecuteRequest{SQL: "SELECT 1"})
	assert.ErrorIs(t, err, executor.ErrClosed, "Execute after Close: %v", err)
	err = e.Check(ctx, "SELECT 1")
	assert.ErrorIs(t, err, executor.ErrClosed, "Check after Close: %v", err)
	assert.NoError(t, e.Close(), "second Close")
	assert.Error(t, e.DB().Ping(), "Close left Open's pool open")
	// New does not own the handle.
	n := newExec(t, db, Options{})
	n.Close()
	assert.NoError(t, db.Ping(), "Close closed the host's handle")
}

// The executor is safe for concurrent use, and a pool connection is never
// left inside a transaction.
func TestConcurrent(t *testing.T) {
	db, _ := testDB(t, `CREATE TABLE t AS SELECT g AS x FROM generate_series(1, 100) g`)
	db.SetMaxOpenConns(3)
	e := newExec(t, db, Options{MaxRows: 50, Timeout: 2 * time.Second})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 10 {
				var q string
				switch (i + j) % 4 {
				case 0:
					q = "SELECT x FROM t"
				case 1:
					q = "SELECT nope FROM t"
				case 2:
					q = "DROP TABLE t"
				default:
					q = "SELECT count(*) FROM t"
				}
				res, err := e.Execute(context.Background(), text2sql.ExecuteRequest{SQL: q})
				if !assert.NoError(t, err) {
					return
				}
				switch (i + j) % 4 {
				case 0:
					assert.False(t, res.Error != nil || res.RowCount != 50 || !res.Truncated, "capped read: %+v", res)
				case 1, 2:
					assert.NotNil(t, res.Error, "no error for %s", q)
				default:
					assert.False(t, res.Error != nil || res.Rows[0][0] != int64(100), "count: %+v", res)
				}
			}
		}()
	}
	wg.Wait()
	var n int
	err := db.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'`).Scan(&n)
	assert.False(t, err != nil || n != 0, "%d sessions idle in transaction (%v)", n, err)
}

// A row larger than MaxRowBytes stops the execution before it is read
// into memory; the executor keeps working. A statement with parameters
// is an error, not a broken connection.
func TestTooLarge(t *testing.T) {
	db, _ := testDB(t)
	e := newExec(t, db, Options{MaxRowBytes: 1 << 20})
	for _, q := range []string{`SELECT repeat('x', 2000000)`, `SELECT 1, repeat('x', 600000), repeat('y', 600000)`} {
		res := exectest.RunKind(t, e, q, text2sql.KindTooLarge)
		assert.Contains(t, res.Error.Message, "1048576", "message %q", res.Error.Message)
	}
	res := exectest.Run(t, e, `SELECT repeat('x', 500000)`)
	assert.False(t, res.Error != nil || len(res.Rows[0][0].(string)) != 500000, "under the limit: %v", res.Error)
	res = exectest.Run(t, e, `SELECT $1::int`)
	assert.False(t, res.Error == nil || res.Error.Kind != text2sql.KindRuntime, "parameter: %+v", res.Error)
	res = exectest.Run(t, e, `SELECT 1`)
	assert.Nil(t, res.Error, "after: %v", res.Error)
	// The host's own queries on the handle keep pgx's default limit.
	var n int
	err := db.QueryRow(`SELECT length(repeat('x', 3000000))`).Scan(&n)
	assert.False(t, err != nil || n != 3000000, "host query: %d %v", n, err)
	var s string
	err = db.QueryRow(`SELECT repeat('x', 3000000)`).Scan(&s)
	assert.False(t, err != nil || len(s) != 3000000, "host query: %v", err)
}
