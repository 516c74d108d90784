package postgres_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/executor/executortest"
	"github.com/text2sql-go/text2sql/executor/postgres"
	"github.com/text2sql-go/text2sql/internal/dbtest"
)

// TestConformance runs the PostgreSQL executor through the Executor kit.
func TestConformance(t *testing.T) {
	db, _, fx := dbtest.PostgresKit(t)
	fx.ForbiddenFunction = "SELECT pg_read_file('/etc/passwd')"
	e, err := postgres.New(context.Background(), db, postgres.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { e.Close() })
	assert.NoError(t, executortest.TestExecutor(e, fx))
}
