// Package storefile opens the SQLite files the stores of this module keep
// their state in (the feedback example store, the conversation store) and
// reads their rows.
package storefile

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"

	_ "github.com/mattn/go-sqlite3" // the SQLite driver (cgo)
)

// busyTimeoutMS is how long a writer waits for another's lock, in
// milliseconds: several processes (replicas, a CLI beside a server) may
// write one store, and a write holds the lock for a few milliseconds.
const busyTimeoutMS = 5000

// Open opens or creates the SQLite file at path (its directory is
// created) in WAL mode, write transactions taking the lock at BEGIN, and
// runs schema (CREATE … IF NOT EXISTS statements). The handle has one
// connection: a caller must not query it while holding a transaction or
// an open Rows of it. Errors name path.
func Open(path, schema string) (*sql.DB, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite3", fmt.Sprintf("file:%s?_busy_timeout=%d&_journal_mode=WAL&_txlock=immediate", path, busyTimeoutMS))
	if err != nil {
		return nil, err
	}
	// One connection: this process's readers and writers queue for it in
	// Go, without a deadline but their context's, instead of polling
	// SQLite's lock until the busy timeout gives up ("database is
	// locked": 4,423 of 5,000 parallel saves before). The busy timeout
	// now only orders this process against others.
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(schema); err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return db, nil
}

// Query runs q with args on db and returns what scan makes of each row,
// in the rows' order. Errors, unwrapped: the query's, the first error scan
// returns, or the rows'.
func Query[T any](ctx context.Context, db *sql.DB, scan func(*sql.Rows) (T, error), q string, args ...any) ([]T, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}
