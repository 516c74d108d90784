// Package sqlite is a conversation.Store and conversation.AnswerStore in
// one SQLite file, each bounded in count and age.
package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/conversation"
	"github.com/text2sql-go/text2sql/internal/defaults"
	"github.com/text2sql-go/text2sql/internal/storefile"
)

// Defaults of Options.
const (
	// DefaultMaxConversations bounds every owner's stored conversations
	// together, a backstop behind the per-owner quota; the least recently
	// updated go first.
	DefaultMaxConversations = 10_000
	// DefaultMaxConversationsPerOwner bounds one owner's conversations;
	// past it that owner's least recently updated goes, never another
	// owner's. It is also how many GET /v1/conversations lists.
	DefaultMaxConversationsPerOwner = 100
	// DefaultRetention drops conversations not updated for 30 days.
	DefaultRetention = 30 * 24 * time.Hour
	// DefaultMaxAnswersPerOwner bounds one owner's saved answers: a list
	// a person still reads, and one owner cannot crowd the others out.
	// Past it a new question is refused (conversation.ErrQuotaExceeded):
	// saving is deliberate, so none is dropped unasked.
	DefaultMaxAnswersPerOwner = 500
	// DefaultMaxAnswers bounds every owner's saved answers together, a
	// backstop behind the per-owner quota (the oldest go first); at
	// MaxSavedRowBytes each at most about 6.4 GB, typically a few KB each.
	DefaultMaxAnswers = 100_000
	// DefaultAnswerRetention drops saved answers not saved or refreshed
	// for a year: saving is deliberate, and a yearly report's question
	// comes back after a year.
	DefaultAnswerRetention = 365 * 24 * time.Hour
)

// Options bound a Store. Zero values mean the defaults.
type Options struct {
	MaxConversations         int
	MaxConversationsPerOwner int
	Retention                time.Duration
	// MaxAnswersPerOwner, MaxAnswers and AnswerRetention bound the saved
	// answers.
	MaxAnswersPerOwner int
	MaxAnswers         int
	AnswerRetention    time.Duration
}

// Store is a conversation.Store in one SQLite file. It is safe for
// concurrent use, also by several processes.
type Store struct {
	db   *sql.DB
	opts Options
}

var (
	_ conversation.Store       = (*Store)(nil)
	_ conversation.AnswerStore = (*Store)(nil)
)

// Open opens or creates the store at path (its directory is created).
func Open(path string, opts Options) (*Store, error) {
	defaults.Positive(&opts.MaxConversations, DefaultMaxConversations)
	defaults.Positive(&opts.MaxConversationsPerOwner, DefaultMaxConversationsPerOwner)
	defaults.Positive(&opts.Retention, DefaultRetention)
	defaults.Positive(&opts.MaxAnswersPerOwner, DefaultMaxAnswersPerOwner)
	defaults.Positive(&opts.MaxAnswers, DefaultMaxAnswers)
	defaults.Positive(&opts.AnswerRetention, DefaultAnswerRetention)
	db, err := storefile.Open(path, `CREATE TABLE IF NOT EXISTS conversations (
  id TEXT PRIMARY KEY, owner TEXT NOT NULL, state TEXT NOT NULL, updated TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS conversations_owner ON conversations (owner, updated);
CREATE TABLE IF NOT EXISTS saved_answers (
  id TEXT PRIMARY KEY, owner TEXT NOT NULL, normalized TEXT NOT NULL, answer TEXT NOT NULL, updated TEXT NOT NULL,
  UNIQUE (owner, normalized));
CREATE INDEX IF NOT EXISTS saved_answers_updated ON saved_answers (owner, updated)`)
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
	out, err := s.conversations(ctx, "SELECT id, owner, state, updated FROM conversations WHERE id = ?", id)
	if err != nil || len(out) == 0 {
		return nil, err
	}
	return &out[0], nil
}

// List returns the owner's conversations within the retention, most
// recently updated first, at most limit (limit <= 0: all).
func (s *Store) List(ctx context.Context, owner string, limit int) ([]conversation.Saved, error) {
	defaults.Positive(&limit, -1)
	return s.conversations(ctx, "SELECT id, owner, state, updated FROM conversations WHERE owner = ? AND updated >= ? ORDER BY updated DESC LIMIT ?",
		owner, stamp(time.Now().Add(-s.opts.Retention)), limit)
}

// conversations reads the rows of q, leaving out those past the
// retention.
func (s *Store) conversations(ctx context.Context, q string, args ...any) ([]conversation.Saved, error) {
	out, err := storefile.Query(ctx, s.db, func(rows *sql.Rows) (conversation.Saved, error) {
		var c conversation.Saved
		var state, updated string
		err := rows.Scan(&c.ID, &c.Owner, &state, &updated)
		if err != nil {
			return c, err
		}
		if c.Updated, err = time.Parse(time.RFC3339Nano, updated); err == nil {
			err = decode(state, &c.State)
		}
		if err != nil {
			return c, fmt.Errorf("%s: %w", c.ID, err)
		}
		return c, nil
	}, q, args...)
	if err != nil {
		return nil, fmt.Errorf("conversation/sqlite: %w", err)
	}
	return slices.DeleteFunc(out, func(c conversation.Saved) bool { return time.Since(c.Updated) > s.opts.Retention }), nil
}

// Delete removes the conversation id and reports whether there was one.
func (s *Store) Delete(ctx context.Context, id string) (bool, error) {
	res, err := s.db.ExecContext(ctx, "DELETE FROM conversations WHERE id = ?", id)
	if err != nil {
		return false, fmt.Errorf("conversation/sqlite: %w", err)
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// decode reads JSON keeping numbers as json.Number, so that a saved
// result's integers come back exact.
func decode(s string, v any) error {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	return dec.Decode(v)
}

// stamp is how times are stored: RFC 3339 in UTC, which sorts as text.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// Save inserts or replaces c, then drops conversations past the
// retention, c's owner's least recently updated past
// MaxConversationsPerOwner (so one owner's many never push out another's)
// and everyone's past MaxConversations. Errors: text2sql.ErrInvalidConfig for an
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
	stmts := []stmt{
		{"INSERT OR REPLACE INTO conversations VALUES (?, ?, ?, ?)", []any{c.ID, c.Owner, string(state), stamp(c.Updated)}},
		{"DELETE FROM conversations WHERE updated < ?", []any{stamp(c.Updated.Add(-s.opts.Retention))}},
		{"DELETE FROM conversations WHERE owner = ? AND id NOT IN (SELECT id FROM conversations WHERE owner = ? ORDER BY updated DESC LIMIT ?)",
			[]any{c.Owner, c.Owner, s.opts.MaxConversationsPerOwner}},
		{"DELETE FROM conversations WHERE id NOT IN (SELECT id FROM conversations ORDER BY updated DESC LIMIT ?)", []any{s.opts.MaxConversations}},
	}
	_, err = s.write(ctx, stmts)
	return err
}

type stmt struct {
	q    string
	args []any
}

// write runs stmts in one transaction and returns the rows each changed.
func (s *Store) write(ctx context.Context, stmts []stmt) ([]int64, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("conversation/sqlite: %w", err)
	}
	defer tx.Rollback()
	changed := make([]int64, len(stmts))
	for i, st := range stmts {
		res, err := tx.ExecContext(ctx, st.q, st.args...)
		if err == nil {
			changed[i], err = res.RowsAffected()
		}
		if err != nil {
			return nil, fmt.Errorf("conversation/sqlite: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("conversation/sqlite: %w", err)
	}
	return changed, nil
}

// SaveAnswer stores a, replacing the owner's saved answer of the same
// normalised question (keeping its ID and Created), after dropping saved
// answers past AnswerRetention and before dropping everyone's past
// MaxAnswers, oldest first. Errors: conversation.ErrQuotaExceeded for a
// new question of an owner with MaxAnswersPerOwner saved answers;
// text2sql.ErrInvalidConfig for an empty ID or Normalized; the database's.
func (s *Store) SaveAnswer(ctx context.Context, a conversation.SavedAnswer) (*conversation.SavedAnswer, error) {
	if a.ID == "" || a.Normalized == "" {
		return nil, fmt.Errorf("%w: conversation/sqlite: a saved answer needs an ID and a normalised question", text2sql.ErrInvalidConfig)
	}
	if a.Updated.IsZero() {
		a.Updated = time.Now()
	}
	if a.Created.IsZero() {
		a.Created = a.Updated
	}
	old, err := s.FindAnswer(ctx, a.Owner, a.Normalized)
	if err != nil {
		return nil, err
	}
	if old != nil {
		a.ID, a.Created = old.ID, old.Created
	}
	b, err := json.Marshal(a)
	if err != nil {
		return nil, fmt.Errorf("conversation/sqlite: %w", err)
	}
	changed, err := s.write(ctx, []stmt{
		{"DELETE FROM saved_answers WHERE updated < ?", []any{stamp(a.Updated.Add(-s.opts.AnswerRetention))}},
		// One statement counts and inserts, so concurrent saves of one
		// owner cannot pass the quota together.
		{`INSERT INTO saved_answers SELECT ?, ?, ?, ?, ?
  WHERE (SELECT count(*) FROM saved_answers WHERE owner = ?) < ? OR EXISTS (SELECT 1 FROM saved_answers WHERE owner = ? AND normalized = ?)
  ON CONFLICT (owner, normalized) DO UPDATE SET answer = excluded.answer, updated = excluded.updated`,
			[]any{a.ID, a.Owner, a.Normalized, string(b), stamp(a.Updated), a.Owner, s.opts.MaxAnswersPerOwner, a.Owner, a.Normalized}},
		{"DELETE FROM saved_answers WHERE id NOT IN (SELECT id FROM saved_answers ORDER BY updated DESC LIMIT ?)", []any{s.opts.MaxAnswers}},
	})
	if err != nil {
		return nil, err
	}
	if changed[1] == 0 {
		return nil, fmt.Errorf("%w: %d saved answers, the most one owner may keep", conversation.ErrQuotaExceeded, s.opts.MaxAnswersPerOwner)
	}
	return &a, nil
}

// Answers returns the owner's saved answers within the retention, newest
// first.
func (s *Store) Answers(ctx context.Context, owner string) ([]conversation.SavedAnswer, error) {
	return s.answers(ctx, "SELECT id, answer FROM saved_answers WHERE owner = ? AND updated >= ? ORDER BY updated DESC",
		owner, stamp(time.Now().Add(-s.opts.AnswerRetention)))
}

// FindAnswer returns the owner's saved answer of the normalised question
// within the retention, or nil.
func (s *Store) FindAnswer(ctx context.Context, owner, normalized string) (*conversation.SavedAnswer, error) {
	out, err := s.answers(ctx, "SELECT id, answer FROM saved_answers WHERE owner = ? AND normalized = ? AND updated >= ?",
		owner, normalized, stamp(time.Now().Add(-s.opts.AnswerRetention)))
	if err != nil || len(out) == 0 {
		return nil, err
	}
	return &out[0], nil
}

// DeleteAnswer removes the owner's saved answer id and reports whether
// there was one.
func (s *Store) DeleteAnswer(ctx context.Context, owner, id string) (bool, error) {
	res, err := s.db.ExecContext(ctx, "DELETE FROM saved_answers WHERE owner = ? AND id = ?", owner, id)
	if err != nil {
		return false, fmt.Errorf("conversation/sqlite: %w", err)
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

func (s *Store) answers(ctx context.Context, q string, args ...any) ([]conversation.SavedAnswer, error) {
	out, err := storefile.Query(ctx, s.db, func(rows *sql.Rows) (conversation.SavedAnswer, error) {
		var id, text string
		var a conversation.SavedAnswer
		if err := rows.Scan(&id, &text); err != nil {
			return a, err
		}
		if err := decode(text, &a); err != nil {
			return a, fmt.Errorf("saved answer %s: %w", id, err)
		}
		a.ID = id // the row's, should two writers have raced on one question
		return a, nil
	}, q, args...)
	if err != nil {
		return nil, fmt.Errorf("conversation/sqlite: %w", err)
	}
	return out, nil
}
