package eval

import (
	"database/sql"
	"path/filepath"
	"testing"

	_ "github.com/mattn/go-sqlite3" // the "sqlite3" driver, to build test databases

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
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// openExec opens the guarded executor over path.
func openExec(t testing.TB, path string) *sqlite.Executor {
	t.Helper()
	ex, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ex.Close() })
	return ex
}
