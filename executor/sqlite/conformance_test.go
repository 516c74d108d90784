package sqlite_test

import (
	"database/sql"
	"path/filepath"
	"testing"

	_ "github.com/mattn/go-sqlite3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/executor/executortest"
	"github.com/text2sql-go/text2sql/executor/sqlite"
)

// TestConformance runs the SQLite executor through the Executor kit.
func TestConformance(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kit.db")
	db, err := sql.Open("sqlite3", path)
	require.NoError(t, err)
	_, err = db.Exec(`CREATE TABLE kit (id INTEGER PRIMARY KEY, name TEXT);
		WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 20)
		INSERT INTO kit SELECT n, 'row ' || n FROM c`)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	e, err := sqlite.Open(path, sqlite.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { e.Close() })
	assert.NoError(t, executortest.TestExecutor(e, executortest.Fixture{
		Table: "kit", Rows: 20,
		ForbiddenFunction: "SELECT load_extension('x')",
		Slow:              "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT count(*) FROM c",
	}))
}
