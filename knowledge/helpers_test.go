package knowledge_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	_ "github.com/mattn/go-sqlite3"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/executor/sqlite"
	"github.com/text2sql-go/text2sql/internal/shareddata"
	"github.com/text2sql-go/text2sql/schema"

	"github.com/stretchr/testify/require"
)

// guardFor returns the guard of the SQLite executor over the database at
// path: the one choke point that checks SQL before it runs.
func guardFor(t *testing.T, path string) text2sql.Guard {
	t.Helper()
	ex, err := sqlite.Open(path, sqlite.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { ex.Close() })
	return ex
}

// tempDB creates a SQLite file from a script and returns its path.
func tempDB(t *testing.T, script string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "test.sqlite")
	db, err := sql.Open("sqlite3", path)
	require.NoError(t, err)
	defer db.Close()
	_, err = db.Exec(script)
	require.NoError(t, err)
	return path
}

// openRO opens a SQLite file read-only.
func openRO(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

func concertSinger(t *testing.T) (path string, db *sql.DB, sch *schema.Database) {
	t.Helper()
	path = shareddata.Path(t, "spider", "database", "concert_singer", "concert_singer.sqlite")
	db = openRO(t, path)
	return path, db, inspect(t, db)
}

// inspect reads a SQLite schema.
func inspect(t *testing.T, db *sql.DB) *schema.Database {
	t.Helper()
	sch, err := schema.InspectSQLite(context.Background(), db)
	require.NoError(t, err)
	return sch
}
