package executor_test

import (
	"database/sql"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/executor"
	"github.com/text2sql-go/text2sql/executor/executortest"
	"github.com/text2sql-go/text2sql/internal/dbtest"
)

// TestConformance runs the generic database/sql executor through the
// Executor kit over SQLite, PostgreSQL and MariaDB. It has no function
// allow-list, so the fixtures name no forbidden function; it sets no
// server-side limit either, which is why the MariaDB fixture's slow query
// ends on its own.
func TestConformance(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		path, fx := dbtest.SQLiteKit(t)
		db, err := sql.Open("sqlite3", path)
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })
		assert.NoError(t, executortest.TestExecutor(executor.New(db, executor.Options{}), fx))
	})
	t.Run("postgres", func(t *testing.T) {
		db, _, fx := dbtest.PostgresKit(t)
		assert.NoError(t, executortest.TestExecutor(executor.New(db, executor.Options{}), fx))
	})
	t.Run("mariadb", func(t *testing.T) {
		db, _, fx := dbtest.MySQLKit(t)
		assert.NoError(t, executortest.TestExecutor(executor.New(db, executor.Options{}), fx))
	})
}
