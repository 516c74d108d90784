// Package demotest gives tests a private copy of the demo database
// (package demo) opened through the guarded SQLite executor, and a scripted
// model for the pipeline's model-driven stages (Stages).
package demotest

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/demo"
	"github.com/text2sql-go/text2sql/executor/sqlite"
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
