package sqlite_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/executor/executortest"
	"github.com/text2sql-go/text2sql/executor/sqlite"
	"github.com/text2sql-go/text2sql/internal/dbtest"
)

// TestConformance runs the SQLite executor through the Executor kit.
func TestConformance(t *testing.T) {
	path, fx := dbtest.SQLiteKit(t)
	fx.ForbiddenFunction = "SELECT load_extension('x')"
	e, err := sqlite.Open(path, sqlite.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { e.Close() })
	assert.NoError(t, executortest.TestExecutor(e, fx))
}
