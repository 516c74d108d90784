package schema

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/text2sql-go/text2sql/internal/fingerprint"
	"github.com/text2sql-go/text2sql/internal/gobfile"
)

// snapshotLayout names the layout of a snapshot file and of its key: a
// file of another layout is a miss.
const snapshotLayout = "text2sql/schema/sqlite-snapshot/v1"

// snapshot is the content of a snapshot file: the tables of the schema
// of Key as Program inspected them.
type snapshot struct {
	Key     string
	Program string
	Tables  []*Table
}

// InspectSQLiteSnapshot is InspectSQLite with the inspected schema kept
// in the file at path, keyed by SQLiteSchemaKey: when the file holds the
// schema of the key the database has now, it is read from there instead
// of being inspected again (at 10,000 tables the inspection takes most of
// a second of CPU, the key tens of milliseconds). Otherwise the database
// is inspected and the file replaced (written to a temporary file in the
// same directory, then renamed), unless the key changed during the
// inspection. Database.Name is always read from the connection. An empty
// path is InspectSQLite. A snapshot that cannot be read or written is not
// an error (the schema is inspected; the next call inspects again);
// errors are those of the queries.
func InspectSQLiteSnapshot(ctx context.Context, db *sql.DB, path string) (*Database, error) {
	program, ok := fingerprint.Program()
	if path == "" || !ok {
		return InspectSQLite(ctx, db)
	}
	key, err := SQLiteSchemaKey(ctx, db)
	if err != nil {
		return nil, err
	}
	if tables, ok := readSnapshot(path, key, program); ok {
		out := &Database{Tables: tables}
		if err := sqliteName(ctx, db, out); err != nil {
			return nil, err
		}
		return out, nil
	}
	out, err := InspectSQLite(ctx, db)
	if err != nil {
		return nil, err
	}
	if after, err := SQLiteSchemaKey(ctx, db); err == nil && after == key {
		_ = gobfile.Write(path, snapshot{Key: key, Program: program, Tables: out.Tables}) // a cache: the next call inspects again
	}
	return out, nil
}

// SQLiteSchemaKey returns the hex SHA-256 of the SQLite library's version
// and every row of the main database's sqlite_schema (type, name,
// tbl_name and sql: the engine's own definition of every table, view,
// index and trigger, which InspectSQLite's pragmas read from), in type
// and name order. It changes with any CREATE, DROP or ALTER, and, unlike
// PRAGMA schema_version or the file's identity, differs between two files
// of different schemas whatever their counters say.
func SQLiteSchemaKey(ctx context.Context, db *sql.DB) (string, error) {
	w := fingerprint.New()
	w.Str(snapshotLayout)
	var version string
	if err := db.QueryRowContext(ctx, `SELECT sqlite_version()`).Scan(&version); err != nil {
		return "", fmt.Errorf("schema: sqlite version: %w", err)
	}
	w.Str(version)
	rows, err := db.QueryContext(ctx, `SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name`)
	if err != nil {
		return "", fmt.Errorf("schema: sqlite schema key: %w", err)
	}
	defer rows.Close()
	var typ, name, tbl []byte
	var def sql.RawBytes
	for rows.Next() {
		if err := rows.Scan(&typ, &name, &tbl, &def); err != nil {
			return "", fmt.Errorf("schema: sqlite schema key: %w", err)
		}
		// A NULL definition (automatic indexes) is told apart from an
		// empty one.
		null := "null"
		if def != nil {
			null = "sql"
		}
		w.Bytes(typ, name, tbl, []byte(null), def)
	}
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("schema: sqlite schema key: %w", err)
	}
	return w.Hex(), nil
}

// readSnapshot returns the tables of the snapshot file at path when it
// holds key's, as program wrote it.
func readSnapshot(path, key, program string) ([]*Table, bool) {
	var s snapshot
	if err := gobfile.Read(path, &s); err != nil || s.Key != key || s.Program != program {
		return nil, false
	}
	return s.Tables, true
}
