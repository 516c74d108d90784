package sqlite

import (
	"context"
	"database/sql"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/dbtest"
	"github.com/text2sql-go/text2sql/internal/exectest"
)

func TestDataVersion(t *testing.T) {
	for _, mode := range []string{"delete", "wal"} {
		t.Run(mode, func(t *testing.T) {
			path := dbtest.SQLiteFile(t, "v.db", "PRAGMA journal_mode="+mode+"; CREATE TABLE t (n INTEGER); INSERT INTO t VALUES (1)")
			e, err := Open(path, Options{})
			require.NoError(t, err)
			defer e.Close()
			ctx := context.Background()
			v0, err := e.DataVersion(ctx)
			require.NoError(t, err)
			_, err = e.Execute(ctx, text2sql.ExecuteRequest{SQL: "SELECT count(*) FROM t"})
			require.NoError(t, err)
			v, err := e.DataVersion(ctx)
			require.NoError(t, err)
			assert.Equal(t, v0, v, "a read leaves the version alone")

			w, err := sql.Open("sqlite3", path)
			require.NoError(t, err)
			defer w.Close()
			_, err = w.Exec("INSERT INTO t VALUES (2)")
			require.NoError(t, err)
			v1, err := e.DataVersion(ctx)
			require.NoError(t, err)
			assert.NotEqual(t, v0, v1, "a committed write changes the version")
			// Same size, same instant: only the commit tells them apart.
			_, err = w.Exec("UPDATE t SET n = n + 1")
			require.NoError(t, err)
			v2, err := e.DataVersion(ctx)
			require.NoError(t, err)
			assert.NotEqual(t, v1, v2, "an update in place changes the version")
		})
	}
}

// The WAL cases that the file header alone misses: a writer that keeps
// its connection while the log restarts and is rewritten in place at the
// same size, and writers that each open and close (the log is
// checkpointed and deleted every time).
func TestDataVersionWAL(t *testing.T) {
	path := dbtest.SQLiteFile(t, "w.db", "PRAGMA journal_mode=wal; CREATE TABLE t (n INTEGER); INSERT INTO t VALUES (1)")
	e, err := Open(path, Options{})
	require.NoError(t, err)
	defer e.Close()
	w, err := sql.Open("sqlite3", path)
	require.NoError(t, err)
	w.SetMaxOpenConns(1)
	for i := range 300 {
		_, err = w.Exec("INSERT INTO t VALUES (?)", i)
		require.NoError(t, err)
	}
	_, err = w.Exec("PRAGMA wal_checkpoint(RESTART)")
	require.NoError(t, err)
	exec := func(db *sql.DB) func(string) {
		return func(stmt string) {
			_, err := db.Exec(stmt)
			require.NoError(t, err)
		}
	}
	exectest.VersionMoves(t, e, exec(w), "INSERT INTO t VALUES (1)", "INSERT INTO t VALUES (2)", "DELETE FROM t WHERE n > 10", "UPDATE t SET n = 0 WHERE n = 1")
	require.NoError(t, w.Close())

	// Each writer opens, inserts and closes.
	exectest.VersionMoves(t, e, func(stmt string) {
		w, err := sql.Open("sqlite3", path)
		require.NoError(t, err)
		exec(w)(stmt)
		require.NoError(t, w.Close())
	}, "INSERT INTO t VALUES (1000)", "INSERT INTO t VALUES (1001)", "INSERT INTO t VALUES (1002)")
}
