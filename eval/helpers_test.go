package eval

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	_ "github.com/mattn/go-sqlite3" // the "sqlite3" driver, to build test databases
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/executor/sqlite"
)

// newDB creates a SQLite file in a temporary folder, runs stmts on it and
// returns its path.
func newDB(t testing.TB, name string, stmts ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	writeDB(t, path, stmts...)
	return path
}

// writeDB creates (or extends) the SQLite file at path with stmts.
func writeDB(t testing.TB, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite3", path)
	require.NoError(t, err)
	defer db.Close()
	for _, s := range stmts {
		_, err := db.Exec(s)
		require.NoError(t, err, s)
	}
}

// writeFile writes content to the file at path.
func writeFile(t testing.TB, path, content string) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
}

// scoreOne scores the one prediction set p on ds with the default
// options, requires that to succeed and returns its report.
func scoreOne(t testing.TB, ds *Dataset, p *Predictions) *Report {
	t.Helper()
	reps, err := Score(context.Background(), ds, []*Predictions{p}, Options{})
	require.NoError(t, err)
	require.Len(t, reps, 1)
	return reps[0]
}

// assertCounts checks a report's correct, scored and excluded question
// counts.
func assertCounts(t testing.TB, r *Report, correct, total, excluded int) {
	t.Helper()
	assert.Equal(t, correct, r.Correct, "correct")
	assert.Equal(t, total, r.Total, "total")
	assert.Equal(t, excluded, r.Excluded, "excluded")
}

// openExec opens the guarded executor over path.
func openExec(t testing.TB, path string) *sqlite.Executor {
	t.Helper()
	ex, err := sqlite.Open(path, sqlite.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { ex.Close() })
	return ex
}
