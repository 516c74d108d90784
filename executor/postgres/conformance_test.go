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
	db, _ := dbtest.Postgres(t)
	dbtest.Exec(t, db,
		"CREATE TABLE kit (id int PRIMARY KEY, name text)",
		"INSERT INTO kit SELECT n, 'row ' || n FROM generate_series(1, 20) n")
	e, err := postgres.New(context.Background(), db, postgres.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { e.Close() })
	assert.NoError(t, executortest.TestExecutor(e, executortest.Fixture{
		Table: "kit", Rows: 20,
		ForbiddenFunction: "SELECT pg_read_file('/etc/passwd')",
		Slow:              "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT count(*) FROM c",
	}))
}
