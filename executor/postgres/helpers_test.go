package postgres

import (
	"context"
	"database/sql"
	"testing"

	"github.com/stretchr/testify/require"

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
	require.NoError(t, err)
	t.Cleanup(func() { e.Close() })
	return e
}
