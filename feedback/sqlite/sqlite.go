// Package sqlite is the default feedback.Store: one SQLite file holding
// the examples made from feedback and the log of votes, bounded in size.
package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/feedback"
	"github.com/text2sql-go/text2sql/internal/defaults"
	"github.com/text2sql-go/text2sql/internal/storefile"
)

// Defaults of Options.
const (
	// DefaultMaxExamples bounds the examples: ten thousand verified
	// questions is more than any team reviews, and few enough that the
	// examples stay a small part of the index.
	DefaultMaxExamples = 10_000
	// DefaultMaxVotes bounds the vote log; the oldest votes go first. With
	// feedback's text limits a vote is at most 24 KB, so the log stays
	// under half a gigabyte even when every vote is at the limit.
	DefaultMaxVotes = 20_000
	// DefaultRetention is how long votes are kept: a year of history.
	DefaultRetention = 365 * 24 * time.Hour
)

// ErrFull is returned by Save when MaxExamples examples are stored and the
// example is new.
var ErrFull = errors.New("feedback/sqlite: the example store is full")

// Options bound a Store. Zero values mean the defaults.
type Options struct {
	MaxExamples int           // most examples; Save of a new one past it fails with ErrFull
	MaxVotes    int           // most votes kept; older ones are deleted on Record
	Retention   time.Duration // votes older than this are deleted on Record
}

// Store is a feedback.Store in one SQLite file. It is safe for concurrent
// use, also by several processes (SQLite's locking, a 5 s busy timeout).
type Store struct {
	db   *sql.DB
	opts Options
}

var _ feedback.Store = (*Store)(nil)

const schemaSQL = `
CREATE TABLE IF NOT EXISTS examples (
  id TEXT PRIMARY KEY,
  question TEXT NOT NULL,
  sql TEXT NOT NULL,
  note TEXT NOT NULL DEFAULT '',
  principal TEXT NOT NULL DEFAULT '',
  created TEXT NOT NULL,
  updated TEXT NOT NULL,
  up INTEGER NOT NULL DEFAULT 0,
  down INTEGER NOT NULL DEFAULT 0,
  review INTEGER NOT NULL DEFAULT 0,
  sql_key TEXT NOT NULL DEFAULT '',
  status TEXT NOT NULL DEFAULT 'pending',
  reviewer TEXT NOT NULL DEFAULT '',
  reviewed TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS votes (
  n INTEGER PRIMARY KEY AUTOINCREMENT,
  time TEXT NOT NULL,
  principal TEXT NOT NULL,
  question TEXT NOT NULL,
  sql TEXT NOT NULL,
  verdict TEXT NOT NULL,
  note TEXT NOT NULL,
  example TEXT NOT NULL,
  flagged TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
INSERT OR IGNORE INTO meta VALUES ('version', 0);
`

// Open opens or creates the store at path (its directory is created).
// Errors: the file cannot be created or is not a store's database.
func Open(path string, opts Options) (*Store, error) {
	defaults.Positive(&opts.MaxExamples, DefaultMaxExamples)
	defaults.Positive(&opts.MaxVotes, DefaultMaxVotes)
	defaults.Positive(&opts.Retention, DefaultRetention)
	db, err := storefile.Open(path, schemaSQL)
	if err == nil {
		err = migrate(db)
	}
	if err != nil {
		if db != nil {
			db.Close()
		}
		return nil, fmt.Errorf("feedback/sqlite: %s: %w", path, err)
	}
	return &Store{db: db, opts: opts}, nil
}

// migrate brings a store written by an earlier version up to this one:
// the statement key column (down-votes look examples up by it), filled
// in, the review columns, and the indexes.
func migrate(db *sql.DB) error {
	has := func(column string) (bool, error) {
		var n int
		err := db.QueryRow("SELECT COUNT(*) FROM pragma_table_info('examples') WHERE name = ?", column).Scan(&n)
		return n > 0, err
	}
	if err := migrateKeys(db, has); err != nil {
		return err
	}
	if err := migrateStatus(db, has); err != nil {
		return err
	}
	_, err := db.Exec(`CREATE INDEX IF NOT EXISTS examples_sql_key ON examples (sql_key);
CREATE INDEX IF NOT EXISTS examples_principal ON examples (principal, status);
CREATE INDEX IF NOT EXISTS votes_principal ON votes (principal, time)`)
	return err
}

// migrateStatus adds the review columns. Before them every example was
// reused for everyone; now only the host's unflagged ones (principal "")
// stay trusted: a principal's vote waits for a reviewer.
func migrateStatus(db *sql.DB, has func(string) (bool, error)) error {
	ok, err := has("status")
	if err != nil || ok {
		return err
	}
	_, err = db.Exec(`ALTER TABLE examples ADD COLUMN status TEXT NOT NULL DEFAULT 'pending';
ALTER TABLE examples ADD COLUMN reviewer TEXT NOT NULL DEFAULT '';
ALTER TABLE examples ADD COLUMN reviewed TEXT NOT NULL DEFAULT '';
UPDATE examples SET status = 'trusted' WHERE principal = '' AND review = 0`)
	return err
}

// migrateKeys adds and fills the statement key column.
func migrateKeys(db *sql.DB, has func(string) (bool, error)) error {
	ok, err := has("sql_key")
	if err != nil {
		return err
	}
	if !ok {
		if _, err := db.Exec("ALTER TABLE examples ADD COLUMN sql_key TEXT NOT NULL DEFAULT ''"); err != nil {
			return err
		}
		rows, err := db.Query("SELECT id, sql FROM examples")
		if err != nil {
			return err
		}
		keys := map[string]string{}
		for rows.Next() {
			var id, q string
			if err := rows.Scan(&id, &q); err != nil {
				rows.Close()
				return err
			}
			keys[id] = feedback.StatementKey(q)
		}
		rows.Close()
		for id, k := range keys {
			if _, err := db.Exec("UPDATE examples SET sql_key = ? WHERE id = ?", k, id); err != nil {
				return err
			}
		}
	}
	return nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

const exampleColumns = "id, question, sql, note, principal, created, updated, up, down, review, status, reviewer, reviewed"

func scanExample(sc interface{ Scan(...any) error }) (feedback.Example, error) {
	var ex feedback.Example
	var created, updated, reviewed string
	err := sc.Scan(&ex.ID, &ex.Question, &ex.SQL, &ex.Note, &ex.By, &created, &updated, &ex.Up, &ex.Down, &ex.Review, &ex.Status, &ex.Reviewer, &reviewed)
	if err == nil {
		ex.Created, err = time.Parse(time.RFC3339Nano, created)
	}
	if err == nil {
		ex.Updated, err = time.Parse(time.RFC3339Nano, updated)
	}
	if err == nil && reviewed != "" {
		ex.Reviewed, err = time.Parse(time.RFC3339Nano, reviewed)
	}
	return ex, err
}

// timeText is t as stored: RFC 3339 in UTC, "" for the zero time.
func timeText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// Examples returns every example, ordered by ID.
func (s *Store) Examples(ctx context.Context) ([]feedback.Example, error) {
	return s.examples(ctx, "SELECT "+exampleColumns+" FROM examples ORDER BY id")
}

// ExamplesOf returns the examples whose SQL has that feedback.StatementKey
// (an indexed lookup), ordered by ID.
func (s *Store) ExamplesOf(ctx context.Context, statementKey string) ([]feedback.Example, error) {
	return s.examples(ctx, "SELECT "+exampleColumns+" FROM examples WHERE sql_key = ? ORDER BY id", statementKey)
}

func (s *Store) examples(ctx context.Context, query string, args ...any) ([]feedback.Example, error) {
	out, err := storefile.Query(ctx, s.db, func(rows *sql.Rows) (feedback.Example, error) { return scanExample(rows) }, query, args...)
	if err != nil {
		return nil, fmt.Errorf("feedback/sqlite: %w", err)
	}
	return out, nil
}

// Example returns the example with that ID, or nil.
func (s *Store) Example(ctx context.Context, id string) (*feedback.Example, error) {
	ex, err := scanExample(s.db.QueryRowContext(ctx, "SELECT "+exampleColumns+" FROM examples WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("feedback/sqlite: %w", err)
	}
	return &ex, nil
}

// Save inserts ex or replaces the example with its ID (an empty Status is
// stored as pending). Errors: ErrFull
// for a new example past MaxExamples; text2sql.ErrInvalidConfig for an
// empty ID.
func (s *Store) Save(ctx context.Context, ex feedback.Example) error {
	if ex.ID == "" {
		return fmt.Errorf("%w: feedback/sqlite: an example needs an ID", text2sql.ErrInvalidConfig)
	}
	return s.write(ctx, func(tx *sql.Tx) error {
		var n, exists int
		if err := tx.QueryRowContext(ctx, "SELECT COUNT(*), COUNT(*) FILTER (WHERE id = ?) FROM examples", ex.ID).Scan(&n, &exists); err != nil {
			return err
		}
		if exists == 0 && n >= s.opts.MaxExamples {
			return fmt.Errorf("%w (%d examples)", ErrFull, n)
		}
		_, err := tx.ExecContext(ctx, "INSERT OR REPLACE INTO examples ("+exampleColumns+", sql_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			ex.ID, ex.Question, ex.SQL, ex.Note, ex.By, ex.Created.UTC().Format(time.RFC3339Nano), ex.Updated.UTC().Format(time.RFC3339Nano),
			ex.Up, ex.Down, ex.Review, string(cmp.Or(ex.Status, feedback.StatusPending)), ex.Reviewer, timeText(ex.Reviewed), feedback.StatementKey(ex.SQL))
		return err
	})
}

// Remove deletes the example with that ID and reports whether there was one.
func (s *Store) Remove(ctx context.Context, id string) (bool, error) {
	var removed bool
	err := s.write(ctx, func(tx *sql.Tx) error {
		r, err := tx.ExecContext(ctx, "DELETE FROM examples WHERE id = ?", id)
		if err == nil {
			n, _ := r.RowsAffected()
			removed = n > 0
		}
		return err
	})
	return removed, err
}

// Record appends v to the vote log, then deletes votes past Retention and
// past MaxVotes.
func (s *Store) Record(ctx context.Context, v feedback.Vote) error {
	flagged, err := json.Marshal(v.Flagged)
	if err != nil {
		return fmt.Errorf("feedback/sqlite: %w", err)
	}
	return s.write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, "INSERT INTO votes (time, principal, question, sql, verdict, note, example, flagged) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
			v.Time.UTC().Format(time.RFC3339Nano), v.Principal, v.Question, v.SQL, string(v.Verdict), v.Note, v.Example, string(flagged)); err != nil {
			return err
		}
		cutoff := v.Time.Add(-s.opts.Retention).UTC().Format(time.RFC3339Nano)
		if _, err := tx.ExecContext(ctx, "DELETE FROM votes WHERE time < ?", cutoff); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, "DELETE FROM votes WHERE n <= (SELECT MAX(n) FROM votes) - ?", s.opts.MaxVotes)
		return err
	})
}

// Votes returns the logged votes, oldest first.
func (s *Store) Votes(ctx context.Context) ([]feedback.Vote, error) {
	out, err := storefile.Query(ctx, s.db, func(rows *sql.Rows) (feedback.Vote, error) {
		var v feedback.Vote
		var t, verdict, flagged string
		err := rows.Scan(&t, &v.Principal, &v.Question, &v.SQL, &verdict, &v.Note, &v.Example, &flagged)
		if err != nil {
			return v, err
		}
		v.Verdict = feedback.Verdict(verdict)
		if v.Time, err = time.Parse(time.RFC3339Nano, t); err == nil {
			err = json.Unmarshal([]byte(flagged), &v.Flagged)
		}
		return v, err
	}, "SELECT time, principal, question, sql, verdict, note, example, flagged FROM votes ORDER BY n")
	if err != nil {
		return nil, fmt.Errorf("feedback/sqlite: %w", err)
	}
	return out, nil
}

// CountBy returns how many votes principal logged at or after since, and
// how many pending examples it proposed (indexed lookups).
func (s *Store) CountBy(ctx context.Context, principal string, since time.Time) (votes, pending int, err error) {
	err = s.db.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM votes WHERE principal = ?1 AND time >= ?2),
  (SELECT COUNT(*) FROM examples WHERE principal = ?1 AND status = 'pending')`, principal, timeText(since)).Scan(&votes, &pending)
	if err != nil {
		return 0, 0, fmt.Errorf("feedback/sqlite: %w", err)
	}
	return votes, pending, nil
}

// Version is the number of writes so far, as text.
func (s *Store) Version(ctx context.Context) (string, error) {
	var v int64
	if err := s.db.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = 'version'").Scan(&v); err != nil {
		return "", fmt.Errorf("feedback/sqlite: %w", err)
	}
	return strconv.FormatInt(v, 10), nil
}

// write runs f in a transaction that also bumps the version.
func (s *Store) write(ctx context.Context, f func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("feedback/sqlite: %w", err)
	}
	defer tx.Rollback()
	if err := f(tx); err != nil {
		if errors.Is(err, ErrFull) {
			return err
		}
		return fmt.Errorf("feedback/sqlite: %w", err)
	}
	if _, err := tx.ExecContext(ctx, "UPDATE meta SET value = value + 1 WHERE key = 'version'"); err != nil {
		return fmt.Errorf("feedback/sqlite: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("feedback/sqlite: %w", err)
	}
	return nil
}
