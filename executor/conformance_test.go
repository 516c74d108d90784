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
	"github.com/text2sql-go/text2sql/internal/dbtest"
)

// recursive is an unbounded recursive count: it runs until stopped.
const recursive = "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT count(*) FROM c"

// TestConformance runs the generic database/sql executor through the
// Executor kit over SQLite, PostgreSQL and MariaDB. It has no function
// allow-list, so the fixtures name no forbidden function.
func TestConformance(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		db, err := sql.Open("sqlite3", filepath.Join(t.TempDir(), "kit.db"))
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })
		_, err = db.Exec(`CREATE TABLE kit (id INTEGER PRIMARY KEY, name TEXT);
			WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 20)
			INSERT INTO kit SELECT n, 'row ' || n FROM c`)
		require.NoError(t, err)
		assert.NoError(t, executortest.TestExecutor(executor.New(db, executor.Options{}),
			executortest.Fixture{Table: "kit", Rows: 20, Slow: recursive}))
	})
	t.Run("postgres", func(t *testing.T) {
		db, _ := dbtest.Postgres(t)
		dbtest.Exec(t, db,
			"CREATE TABLE kit (id int PRIMARY KEY, name text)",
			"INSERT INTO kit SELECT n, 'row ' || n FROM generate_series(1, 20) n")
		assert.NoError(t, executortest.TestExecutor(executor.New(db, executor.Options{}),
			executortest.Fixture{Table: "kit", Rows: 20, Slow: recursive}))
	})
	t.Run("mariadb", func(t *testing.T) {
		db, _ := dbtest.MySQL(t)
		dbtest.Exec(t, db,
			"CREATE TABLE kit (id INT PRIMARY KEY, name TEXT)",
			"INSERT INTO kit SELECT seq, CONCAT('row ', seq) FROM seq_1_to_20")
		// The generic executor sets no server-side limit and MariaDB runs
		// a statement on after its client disconnects, so the slow query
		// must end on its own: 500 million rows, about 13 s on an idle
		// server (an unbounded one kept running for hours after each run).
		assert.NoError(t, executortest.TestExecutor(executor.New(db, executor.Options{}),
			executortest.Fixture{Table: "kit", Rows: 20, Slow: "SELECT count(*) FROM seq_1_to_1000000 a, seq_1_to_500 b"}))
	})
}
