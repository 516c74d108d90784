package executor_test

import (
	"database/sql"
	"path/filepath"
	"testing"

	_ "github.com/mattn/go-sqlite3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/executor"
	"github.com/text2sql-go/text2sql/executor/executortest"
)

// TestConformance runs the generic database/sql executor, over SQLite,
// through the Executor kit.
func TestConformance(t *testing.T) {
	db, err := sql.Open("sqlite3", filepath.Join(t.TempDir(), "kit.db"))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	_, err = db.Exec(`CREATE TABLE kit (id INTEGER PRIMARY KEY, name TEXT);
		WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 20)
		INSERT INTO kit SELECT n, 'row ' || n FROM c`)
	require.NoError(t, err)
	e := executor.New(db, executor.Options{})
	assert.NoError(t, executortest.TestExecutor(e, executortest.Fixture{
		Table: "kit", Rows: 20,
		// No ForbiddenFunction: the generic executor has no function
		// allow-list (SQLite itself refuses load_extension, as a
		// forbidden_statement).
		Slow: "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT count(*) FROM c",
	}))
}
