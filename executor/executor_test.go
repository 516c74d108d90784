package executor_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/executor"
	"github.com/text2sql-go/text2sql/internal/dbtest"
	"github.com/text2sql-go/text2sql/internal/shareddata"
	"github.com/text2sql-go/text2sql/schema"
)

func spider(t *testing.T) (*sql.DB, *schema.Database) {
	t.Helper()
	path := shareddata.Path(t, "spider", "database", "concert_singer", "concert_singer.sqlite")
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	sch, err := schema.InspectSQLite(context.Background(), db)
	require.NoError(t, err)
	return db, sch
}

func execute(t *testing.T, e *executor.Executor, req text2sql.ExecuteRequest) *text2sql.Result {
	t.Helper()
	res, err := e.Execute(context.Background(), req)
	require.NoError(t, err, "Execute(%q)", req.SQL)
	require.Equal(t, len(res.Rows), res.RowCount, "RowCount %d, %d rows", res.RowCount, len(res.Rows))
	return res
}

func TestGenericExecutorSpider(t *testing.T) {
	db, sch := spider(t)
	e := executor.New(db, executor.Options{Schema: sch, MaxRows: 3})
	var _ text2sql.Executor = e
	var _ text2sql.Guard = e

	res := execute(t, e, text2sql.ExecuteRequest{SQL: "SELECT count(*) FROM singer;"})
	require.Nil(t, res.Error, "%+v", res)
	require.Equal(t, [][]any{{int64(6)}}, res.Rows, "%+v", res)
	require.Equal(t, "count(*)", res.Columns[0], "%+v", res)
	res = execute(t, e, text2sql.ExecuteRequest{SQL: "SELECT name, country FROM singer ORDER BY singer_id"})
	require.Nil(t, res.Error, "cap: %+v", res)
	require.Equal(t, 3, res.RowCount, "cap: %+v", res)
	require.True(t, res.Truncated, "cap: %+v", res)
	_, ok := res.Rows[0][0].(string)
	assert.True(t, ok, "text value is %T", res.Rows[0][0])
	res = execute(t, e, text2sql.ExecuteRequest{SQL: "SELECT name FROM singer", MaxRows: 100})
	require.False(t, res.RowCount != 6 || res.Truncated, "request cap: %+v", res)
	res = execute(t, e, text2sql.ExecuteRequest{SQL: "SELECT name FROM singr"})
	require.NotNil(t, res.Error, "unknown table: %+v", res.Error)
	require.Equal(t, text2sql.KindUnknownTable, res.Error.Kind, "unknown table: %+v", res.Error)
	require.Equal(t, `did you mean "singer"?`, res.Error.Hint, "unknown table: %+v", res.Error)
	res = execute(t, e, text2sql.ExecuteRequest{SQL: "SELECT T1.stadium_id FROM singer AS T1"})
	require.NotNil(t, res.Error, "unknown column: %+v", res.Error)
	require.Equal(t, text2sql.KindUnknownColumn, res.Error.Kind, "unknown column: %+v", res.Error)
	require.Contains(t, res.Error.Hint, "stadium", "unknown column: %+v", res.Error)
	for q, kind := range map[string]text2sql.ErrorKind{
		"DROP TABLE singer":             text2sql.KindNotReadOnly,
		"SELECT 1; DROP TABLE singer":   text2sql.KindMultipleStatements,
		"PRAGMA user_version = 1":       text2sql.KindForbiddenStatement,
		"SELECT name FROM singer WHERE": text2sql.KindSyntax,
		"   ":                           text2sql.KindEmpty,
		"SELECT zeroblob(10) FROM singer x WHERE x.nope = 1": text2sql.KindUnknownColumn,
	} {
		res := execute(t, e, text2sql.ExecuteRequest{SQL: q})
		assert.False(t, res.Error == nil || res.Error.Kind != kind, "%q: %+v, want %s", q, res.Error, kind)
	}
	assert.NoError(t, e.Check(context.Background(), "SELECT name FROM singer"), "Check")
	var se *text2sql.SQLError
	err := e.Check(context.Background(), "SELECT name FROM singr")
	assert.False(t, !errors.As(err, &se) || se.Kind != text2sql.KindUnknownTable, "Check unknown table: %v", err)
	err = e.Check(context.Background(), "DELETE FROM singer")
	assert.ErrorIs(t, err, text2sql.ErrRefused, "Check delete: %v", err)
}

// The executor's time limit gives a timeout result; the caller's
// cancellation a Go error; the executor works on afterwards.
func TestGenericTimeoutAndCancel(t *testing.T) {
	dir := t.TempDir()
	db, err := sql.Open("sqlite3", filepath.Join(dir, "x.db"))
	require.NoError(t, err)
	defer db.Close()
	_, err = db.Exec("CREATE TABLE t (x)")
	require.NoError(t, err)
	e := executor.New(db, executor.Options{Timeout: 100 * time.Millisecond})
	forever := dbtest.Unbounded
	start := time.Now()
	res := execute(t, e, text2sql.ExecuteRequest{SQL: forever})
	require.NotNil(t, res.Error, "timeout: %+v after %v", res.Error, time.Since(start))
	require.Equal(t, text2sql.KindTimeout, res.Error.Kind, "timeout: %+v after %v", res.Error, time.Since(start))
	require.LessOrEqual(t, time.Since(start), 2*time.Second, "timeout: %+v after %v", res.Error, time.Since(start))
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err = e.Execute(ctx, text2sql.ExecuteRequest{SQL: forever, Timeout: 10 * time.Second})
	require.ErrorIs(t, err, context.Canceled, "caller cancel: %v", err)
	res = execute(t, e, text2sql.ExecuteRequest{SQL: "SELECT 1"})
	require.Nil(t, res.Error, "after: %v", res.Error)
	_, err = executor.New(nil, executor.Options{}).Execute(context.Background(), text2sql.ExecuteRequest{SQL: "SELECT 1"})
	assert.ErrorIs(t, err, text2sql.ErrInvalidConfig, "nil db: %v", err)
}

// Options.MaxResultBytes stops reading a result that passes it,
// Options.MaxSQLLength refuses a long text, Options.Check replaces the
// lexical check, and Options.Conn gives each execution its connection.
func TestGenericBounds(t *testing.T) {
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(t.TempDir(), "b.db"))
	require.NoError(t, err)
	defer db.Close()
	big := "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 100) SELECT n, printf('%.*c', 10000, 'x') FROM r"
	e := executor.New(db, executor.Options{MaxResultBytes: 100000, MaxSQLLength: 200})
	res := execute(t, e, text2sql.ExecuteRequest{SQL: big})
	assert.False(t, res.Error == nil || res.Error.Kind != text2sql.KindTooLarge || len(res.Rows) != 0, "result bytes: %+v", res)
	res = execute(t, e, text2sql.ExecuteRequest{SQL: "SELECT '" + strings.Repeat("x", 200) + "'"})
	assert.False(t, res.Error == nil || res.Error.Kind != text2sql.KindTooLarge, "statement length: %+v", res.Error)
	res = execute(t, e, text2sql.ExecuteRequest{SQL: "SELECT 1"})
	assert.Nil(t, res.Error, "small: %v", res.Error)
	conns := 0
	e = executor.New(nil, executor.Options{
		Check: func(q string) (string, *text2sql.SQLError) {
			if strings.Contains(q, "no") {
				return "", &text2sql.SQLError{Kind: text2sql.KindForbiddenStatement, Message: "no"}
			}
			return q + " + 1", nil
		},
		Conn: func(ctx context.Context) (*sql.Conn, func(), error) {
			conns++
			c, err := db.Conn(ctx)
			return c, func() { c.Close() }, err
		},
	})
	res = execute(t, e, text2sql.ExecuteRequest{SQL: "SELECT 1"})
	assert.False(t, res.Error != nil || !reflect.DeepEqual(res.Rows, [][]any{{int64(2)}}) || conns != 1, "Check and Conn: %+v, %d connections", res, conns)
	res = execute(t, e, text2sql.ExecuteRequest{SQL: "SELECT 'no'"})
	assert.False(t, res.Error == nil || res.Error.Kind != text2sql.KindForbiddenStatement || conns != 1, "refused by Check: %+v, %d connections", res.Error, conns)
}
