// Package sqlite is a conversation.Store in one SQLite file, bounded in
// count and age.
package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/conversation"
	"github.com/text2sql-go/text2sql/internal/storefile"
)

// Defaults of Options.
const (
	// DefaultMaxConversations bounds the stored conversations; the least
	// recently updated go first.
	DefaultMaxConversations = 10_000
	// DefaultRetention drops conversations not updated for 30 days.
	DefaultRetention = 30 * 24 * time.Hour
)

// Options bound a Store. Zero values mean the defaults.
type Options struct {
	MaxConversations int
	Retention        time.Duration
}

// Store is a conversation.Store in one SQLite file. It is safe for
// concurrent use, also by several processes.
type Store struct {
	db   *sql.DB
	opts Options
}

var _ conversation.Store = (*Store)(nil)

// Open opens or creates the store at path (its directory is created).
func Open(path string, opts Options) (*Store, error) {
	if opts.MaxConversations <= 0 {
		opts.MaxConversations = DefaultMaxConversations
	}
	if opts.Retention <= 0 {
		opts.Retention = DefaultRetention
	}
	db, err := storefile.Open(path, `CREATE TABLE IF NOT EXISTS conversations (
  id TEXT PRIMARY KEY, owner TEXT NOT NULL, state TEXT NOT NULL, updated TEXT NOT NULL)`)
	if err != nil {
		return nil, fmt.Errorf("conversation/sqlite: %w", err)
	}
	return &Store{db: db, opts: opts}, nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Load returns the conversation with that id, or nil (also when it is past
// the retention).
func (s *Store) Load(ctx context.Context, id string) (*conversation.Saved, error) {
	var owner, state, updated string
	err := s.db.QueryRowContext(ctx, "SELECT owner, state, updated FROM conversations WHERE id = ?", id).Scan(&owner, &state, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("conversation/sqlite: %w", err)
	}
	out := &conversation.Saved{ID: id, Owner: owner}
	if out.Updated, err = time.Parse(time.RFC3339Nano, updated); err == nil {
		err = json.Unmarshal([]byte(state), &out.State)
	}
	if err != nil {
		return nil, fmt.Errorf("conversation/sqlite: %s: %w", id, err)
	}
	if time.Since(out.Updated) > s.opts.Retention {
		return nil, nil
	}
	return out, nil
}

// Save inserts or replaces c, then drops conversations past the retention
// and past MaxConversations. Errors: text2sql.ErrInvalidConfig for an
// empty ID; the database's.
func (s *Store) Save(ctx context.Context, c conversation.Saved) error {
	if c.ID == "" {
		return fmt.Errorf("%w: conversation/sqlite: a conversation needs an ID", text2sql.ErrInvalidConfig)
	}
	if c.Updated.IsZero() {
		c.Updated = time.Now()
	}
	state, err := json.Marshal(c.State)
	if err != nil {
		return fmt.Errorf("conversation/sqlite: %w", err)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("conversation/sqlite: %w", err)
	}
	defer tx.Rollback()
	stmts := []struct {
		q    string
		args []any
	}{
		{"INSERT OR REPLACE INTO conversations VALUES (?, ?, ?, ?)", []any{c.ID, c.Owner, string(state), c.Updated.UTC().Format(time.RFC3339Nano)}},
		{"DELETE FROM conversations WHERE updated < ?", []any{c.Updated.Add(-s.opts.Retention).UTC().Format(time.RFC3339Nano)}},
		{"DELETE FROM conversations WHERE id NOT IN (SELECT id FROM conversations ORDER BY updated DESC LIMIT ?)", []any{s.opts.MaxConversations}},
	}
	for _, st := range stmts {
		if _, err := tx.ExecContext(ctx, st.q, st.args...); err != nil {
			return fmt.Errorf("conversation/sqlite: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("conversation/sqlite: %w", err)
	}
	return nil
}
