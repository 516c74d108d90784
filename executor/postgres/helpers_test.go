package postgres

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/dbtest"
)

// testDB returns a fresh database with script run in it, and its DSN.
func testDB(t testing.TB, stmts ...string) (*sql.DB, string) {
	t.Helper()
	db, dsn := dbtest.Postgres(t)
	testDSNs.Store(db, dsn)
	dbtest.Exec(t, db, stmts...)
	return db, dsn
}

func newExec(t testing.TB, db *sql.DB, opts Options) *Executor {
	t.Helper()
	e, err := New(context.Background(), db, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func run(t testing.TB, e *Executor, query string) *text2sql.Result {
	t.Helper()
	res, err := e.Execute(context.Background(), text2sql.ExecuteRequest{SQL: query})
	if err != nil {
		t.Fatalf("Execute(%q): Go error %v", query, err)
	}
	if res.RowCount != len(res.Rows) {
		t.Fatalf("RowCount %d != len(Rows) %d", res.RowCount, len(res.Rows))
	}
	return res
}

// wantKind asserts that res failed with kind, and that a refusal matches
// text2sql.ErrRefused.
func wantKind(t testing.TB, query string, res *text2sql.Result, kind text2sql.ErrorKind) {
	t.Helper()
	if res.Error == nil {
		t.Fatalf("%q: no error, rows %v; want %s", query, res.Rows, kind)
	}
	if res.Error.Kind != kind {
		t.Fatalf("%q: kind %s (%s), want %s", query, res.Error.Kind, res.Error.Message, kind)
	}
	if kind.Refusal() != errors.Is(res.Error, text2sql.ErrRefused) {
		t.Fatalf("%q: errors.Is(ErrRefused) = %v for kind %s", query, !kind.Refusal(), kind)
	}
	if len(res.Rows) != 0 || res.Truncated {
		t.Fatalf("%q: an error result carries rows", query)
	}
}

func asSQLError(err error) *text2sql.SQLError {
	if err == nil {
		return nil
	}
	var se *text2sql.SQLError
	if errors.As(err, &se) {
		return se
	}
	return &text2sql.SQLError{Kind: "go-error", Message: err.Error()}
}
