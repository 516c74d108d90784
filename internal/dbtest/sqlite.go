package dbtest

import (
	"database/sql"
	"path/filepath"
	"testing"

	_ "github.com/mattn/go-sqlite3" // the "sqlite3" driver
)

// SQLiteFile creates the SQLite database file name in a temporary
// directory of tb's, runs script (statements separated by semicolons) on
// it, and returns its path. It fails tb when a step fails.
func SQLiteFile(tb testing.TB, name, script string) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), name)
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(script); err != nil {
		tb.Fatalf("SQLite script: %v", err)
	}
	return path
}
