// Package demotest gives tests a private copy of the demo database
// (package demo) opened through the guarded SQLite executor, the default
// retriever over it, and a scripted model for the pipeline's model-driven
// stages (Stages).
package demotest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/demo"
	"github.com/text2sql-go/text2sql/executor/sqlite"
	"github.com/text2sql-go/text2sql/retriever"
	"github.com/text2sql-go/text2sql/schema"
)

// Open creates the demo database as registrar.sqlite in a temporary
// directory of t's and opens it with the executor's default options; the
// executor is closed when t ends. It returns the file's path and the
// executor, failing t when either step fails.
func Open(t testing.TB) (string, *sqlite.Executor) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "registrar.sqlite")
	require.NoError(t, demo.Create(path))
	ex, err := sqlite.Open(path, sqlite.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { ex.Close() })
	return path, ex
}

// Retriever returns the default hybrid retriever over db (the demo's
// schema, as the executor Open returns reads it) and the demo's knowledge
// base, failing t when either cannot be made.
func Retriever(t testing.TB, db *schema.Database) *retriever.Hybrid {
	t.Helper()
	kb, err := demo.Knowledge()
	require.NoError(t, err)
	ret, err := retriever.NewHybrid(context.Background(), retriever.HybridOptions{Schema: db, Knowledge: kb})
	require.NoError(t, err)
	return ret
}
