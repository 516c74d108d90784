package postgres_test

import (
	"context"
	"testing"

	"github.com/text2sql-go/text2sql/executor/postgres"
	"github.com/text2sql-go/text2sql/internal/dbtest"
	"github.com/text2sql-go/text2sql/internal/exectest"
)

// TestConformance runs the PostgreSQL executor through the Executor kit.
func TestConformance(t *testing.T) {
	db, _, fx := dbtest.PostgresKit(t)
	e, err := postgres.New(context.Background(), db, postgres.Options{})
	exectest.Conforms(t, e, err, fx, "SELECT pg_read_file('/etc/passwd')")
}
