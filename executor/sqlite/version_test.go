package sqlite

import (
	"context"
	"database/sql"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/dbtest"
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
