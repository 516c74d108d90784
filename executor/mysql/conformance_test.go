package mysql_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/executor/executortest"
	"github.com/text2sql-go/text2sql/executor/mysql"
	"github.com/text2sql-go/text2sql/internal/dbtest"
)

// TestConformance runs the MariaDB/MySQL executor through the Executor
// kit.
func TestConformance(t *testing.T) {
	_, dsn, fx := dbtest.MySQLKit(t)
	fx.ForbiddenFunction = "SELECT SLEEP(30)"
	e, err := mysql.Open(context.Background(), dsn, mysql.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { e.Close() })
	assert.NoError(t, executortest.TestExecutor(e, fx))
}
