package schema_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/internal/shareddata"
	"github.com/text2sql-go/text2sql/schema"
)

// A snapshot holds what InspectSQLite reads: on every Spider database,
// the first call (which writes the file) and the second (which reads it
// and leaves it as it is) return InspectSQLite's schema.
func TestInspectSQLiteSnapshotSpider(t *testing.T) {
	ctx := context.Background()
	dir := shareddata.Path(t, "spider", "database")
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	n := 0
	for _, e := range ents {
		path := filepath.Join(dir, e.Name(), e.Name()+".sqlite")
		if _, err := os.Stat(path); err != nil {
			continue
		}
		n++
		db := openDB(t, "file:"+path+"?mode=ro")
		want, err := schema.InspectSQLite(ctx, db)
		require.NoError(t, err, e.Name())
		snap := filepath.Join(t.TempDir(), "schema.gob")
		first, err := schema.InspectSQLiteSnapshot(ctx, db, snap)
		require.NoError(t, err, e.Name())
		written, err := os.Stat(snap)
		require.NoError(t, err, e.Name())
		second, err := schema.InspectSQLiteSnapshot(ctx, db, snap)
		require.NoError(t, err, e.Name())
		read, err := os.Stat(snap)
		require.NoError(t, err, e.Name())
		require.True(t, os.SameFile(written, read), "%s: the second call read the snapshot, not inspected and wrote again", e.Name())
		require.Equal(t, want, first, e.Name())
		require.Equal(t, want, second, e.Name())
	}
	assert.GreaterOrEqual(t, n, 19, "Spider databases")
}

// The snapshot follows the definitions in sqlite_schema: a column added
// or renamed, a table created or dropped, a view redefined, and a file
// copied over the database whose schema counter (PRAGMA schema_version)
// is the same as the one it replaces all give the schema InspectSQLite
// reads.
func TestInspectSQLiteSnapshotInvalidated(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	snap := filepath.Join(dir, "schema.gob")
	path := filepath.Join(dir, "a.db")
	check := func(db *sql.DB, what string) {
		t.Helper()
		want, err := schema.InspectSQLite(ctx, db)
		require.NoError(t, err, what)
		got, err := schema.InspectSQLiteSnapshot(ctx, db, snap)
		require.NoError(t, err, what)
		require.Equal(t, want, got, what)
	}
	db := openDB(t, path)
	_, err := db.Exec(`CREATE TABLE a(id INTEGER PRIMARY KEY, x TEXT); CREATE VIEW va AS SELECT * FROM a`)
	require.NoError(t, err)
	check(db, "created")
	for _, step := range []string{
		`ALTER TABLE a ADD COLUMN y INT NOT NULL DEFAULT 0`,
		`ALTER TABLE a RENAME COLUMN x TO label`,
		`CREATE TABLE b(id INTEGER PRIMARY KEY, a_id INT REFERENCES a)`,
		`DROP VIEW va; CREATE VIEW va AS SELECT id, label FROM a`,
		`DROP TABLE b`,
	} {
		_, err := db.Exec(step)
		require.NoError(t, err, step)
		check(db, step)
	}
	require.NoError(t, db.Close())

	// Two files of one CREATE each: the same schema_version, different
	// schemas. The copy is read as what it is.
	version := func(p string) (v int) {
		db := openDB(t, p)
		require.NoError(t, db.QueryRow(`PRAGMA schema_version`).Scan(&v))
		require.NoError(t, db.Close())
		return v
	}
	one, other := filepath.Join(dir, "one.db"), filepath.Join(dir, "other.db")
	for p, ddl := range map[string]string{one: `CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT)`, other: `CREATE TABLE t(id INTEGER PRIMARY KEY, title TEXT, year INT)`} {
		db := openDB(t, p)
		_, err := db.Exec(ddl)
		require.NoError(t, err)
		require.NoError(t, db.Close())
	}
	require.Equal(t, version(one), version(other), "the two files carry the same schema counter")
	target := filepath.Join(dir, "target.db")
	copyFile := func(from string) {
		data, err := os.ReadFile(from)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(target, data, 0o600))
	}
	copyFile(one)
	db = openDB(t, target)
	check(db, "one")
	require.NoError(t, db.Close())
	copyFile(other)
	db = openDB(t, target)
	got, err := schema.InspectSQLiteSnapshot(ctx, db, snap)
	require.NoError(t, err)
	require.Len(t, got.Tables, 1)
	assert.Len(t, got.Tables[0].Columns, 3, "the copy's columns: %+v", got.Tables[0].Columns)
	check(db, "other copied over one")
}
