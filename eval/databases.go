package eval

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"time"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/accuracy"
	"github.com/text2sql-go/text2sql/executor/sqlite"
	"github.com/text2sql-go/text2sql/internal/birdschema"
	"github.com/text2sql-go/text2sql/internal/defaults"
	"github.com/text2sql-go/text2sql/schema"
)

// Defaults of Options.
const (
	// DefaultTimeout bounds one query (BIRD's evaluator uses 30 s).
	DefaultTimeout = 30 * time.Second
	// DefaultMaxRows caps the rows read of one query. A gold result
	// beyond it cannot be compared and is reported as a gold error of
	// kind too_large.
	DefaultMaxRows = accuracy.MaxRows
	// DefaultMaxOpenConns is the connection pool size per database.
	DefaultMaxOpenConns = 4
)

// ErrNotComparable is wrapped by errors saying that nothing could be
// scored: every question is excluded (for instance, BIRD questions
// without the BIRD databases).
var ErrNotComparable = errors.New("eval: results cannot be compared")

// Databases opens one guarded SQLite executor per database of a dataset,
// on first use, and shares it between goroutines (each executor pools up
// to MaxOpenConns read-only connections). It is safe for concurrent use.
type Databases struct {
	ds          *Dataset
	opts        sqlite.Options
	materialize bool

	mu      sync.Mutex
	entries map[string]*dbEntry
	tmp     string
}

type dbEntry struct {
	once  sync.Once
	ex    *sqlite.Executor
	err   error
	empty bool   // the database has tables but no rows at all
	note  string // "tables.json" when materialised
}

// DatabaseOptions configure OpenDatabases. Zero values mean the defaults.
type DatabaseOptions struct {
	MaxRows      int           // default DefaultMaxRows
	Timeout      time.Duration // default DefaultTimeout
	MaxOpenConns int           // default DefaultMaxOpenConns
	// Materialize opens, for a database whose file is missing but whose
	// schema is in the dataset's tables.json, an empty SQLite database
	// built from that schema (internal/birdschema) in a temporary folder
	// removed by Close. It serves schema-only work (retrieval recall); such
	// a database has no rows, so its results are never compared.
	Materialize bool
}

// OpenDatabases returns the executors of ds's databases, opened lazily.
// Close releases them.
func OpenDatabases(ds *Dataset, o DatabaseOptions) *Databases {
	defaults.Positive(&o.MaxRows, DefaultMaxRows)
	defaults.Positive(&o.Timeout, DefaultTimeout)
	defaults.Positive(&o.MaxOpenConns, DefaultMaxOpenConns)
	return &Databases{ds: ds, opts: sqlite.Options{MaxRows: o.MaxRows, Timeout: o.Timeout, MaxOpenConns: o.MaxOpenConns},
		materialize: o.Materialize, entries: map[string]*dbEntry{}}
}

func (d *Databases) entry(id string) *dbEntry {
	d.mu.Lock()
	defer d.mu.Unlock()
	e, ok := d.entries[id]
	if !ok {
		e = &dbEntry{}
		d.entries[id] = e
	}
	return e
}

// Executor returns the guarded executor of database id, opening it on the
// first call. It fails when the database is unknown, missing (and not
// materialised) or cannot be opened.
func (d *Databases) Executor(ctx context.Context, id string) (*sqlite.Executor, error) {
	e := d.entry(id)
	e.once.Do(func() { e.ex, e.empty, e.note, e.err = d.open(ctx, id) })
	return e.ex, e.err
}

// Schema returns the schema of database id (see Executor).
func (d *Databases) Schema(ctx context.Context, id string) (*schema.Database, error) {
	ex, err := d.Executor(ctx, id)
	if err != nil {
		return nil, err
	}
	return ex.Schema(), nil
}

// Empty reports whether database id has tables but not a single row: a
// schema-only database on which results cannot be compared. It opens the
// database if needed.
func (d *Databases) Empty(ctx context.Context, id string) (bool, error) {
	if _, err := d.Executor(ctx, id); err != nil {
		return false, err
	}
	return d.entry(id).empty, nil
}

// materialized returns the IDs of the databases opened so far that were
// built empty from tables.json, sorted.
func (d *Databases) materialized() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []string
	for id, e := range d.entries {
		if e.note != "" {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

func (d *Databases) open(ctx context.Context, id string) (*sqlite.Executor, bool, string, error) {
	db := d.ds.Databases[id]
	if db == nil {
		return nil, false, "", fmt.Errorf("%w: unknown database %q", ErrDataset, id)
	}
	path, note := db.Path, ""
	if db.Missing != "" {
		var sch *birdschema.Schema
		if d.materialize {
			var err error
			if sch, err = d.ds.TableSchema(id); err != nil {
				return nil, false, "", err
			}
		}
		if sch == nil {
			return nil, false, "", fmt.Errorf("%w: %s", ErrDataset, db.Missing)
		}
		dir, err := d.tempDir()
		if err != nil {
			return nil, false, "", err
		}
		path = filepath.Join(dir, strconv.Itoa(len(id))+"_"+filepath.Base(id)+".sqlite")
		if err := birdschema.Create(path, sch); err != nil {
			return nil, false, "", fmt.Errorf("eval: materialise %s from %s: %w", id, d.ds.Tables, err)
		}
		note = "tables.json"
	}
	ex, err := sqlite.Open(path, d.opts)
	if err != nil {
		return nil, false, "", err
	}
	empty, err := noRows(ctx, ex)
	if err != nil {
		ex.Close()
		return nil, false, "", err
	}
	return ex, empty, note, nil
}

// noRows reports whether every table of ex's database is empty (and there
// is at least one table).
func noRows(ctx context.Context, ex *sqlite.Executor) (bool, error) {
	tables := ex.Schema().Tables
	if len(tables) == 0 {
		return false, nil
	}
	for _, t := range tables {
		if t.Kind != schema.KindTable {
			continue
		}
		q := "SELECT 1 FROM " + quoteIdent(t.Name) + " LIMIT 1"
		res, err := ex.Execute(ctx, text2sql.ExecuteRequest{SQL: q, MaxRows: 1})
		if err != nil {
			return false, err
		}
		if res.Error != nil || len(res.Rows) > 0 {
			return false, nil
		}
	}
	return true, nil
}

func quoteIdent(s string) string {
	out := []byte{'"'}
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			out = append(out, '"')
		}
		out = append(out, s[i])
	}
	return string(append(out, '"'))
}

func (d *Databases) tempDir() (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.tmp == "" {
		dir, err := os.MkdirTemp("", "text2sql-eval-schemas-")
		if err != nil {
			return "", err
		}
		d.tmp = dir
	}
	return d.tmp, nil
}

// Close closes every executor opened and removes materialised databases.
func (d *Databases) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	var errs []error
	for _, e := range d.entries {
		if e.ex != nil {
			errs = append(errs, e.ex.Close())
		}
	}
	d.entries = map[string]*dbEntry{}
	if d.tmp != "" {
		errs = append(errs, os.RemoveAll(d.tmp))
		d.tmp = ""
	}
	return errors.Join(errs...)
}
