package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/eval"
	"github.com/text2sql-go/text2sql/executor/catalog"
	"github.com/text2sql-go/text2sql/executor/sqlite"
	"github.com/text2sql-go/text2sql/retriever"
	"github.com/text2sql-go/text2sql/retriever/valueindex"
	"github.com/text2sql-go/text2sql/schema"
)

// valuesFile is the value index's cache file in the index directory.
const valuesFile = "values.gob"

// progressAfter is how long a value-index build runs before its progress
// is shown: a build that ends sooner (every Spider database: tens of
// milliseconds) prints nothing.
const progressAfter = 2 * time.Second

// valueIndex returns the value index of the database at path (ex's data),
// or nil with --no-values, when callers decide what they may read (the
// index is read with the host's login and would show every caller the
// same values), or when the executor offers no database/sql handle. The
// index is cached in the index directory under a key of the schema, the
// executor's data version and the bounds, and rebuilt when one changes;
// a build that takes long shows its progress on standard error.
func (o *options) valueIndex(ctx context.Context, ex guarded, path string) (*valueindex.Index, error) {
	if o.models.noValues {
		return nil, nil
	}
	if o.caller.decides() {
		if o.errOut != nil {
			fmt.Fprintln(o.errOut, "text2sql: note: the value index is off: it is read with the host's login, "+
				"and --run-as, --rls-claims and --login-map let each caller read only its own rows")
		}
		return nil, nil
	}
	read := readValues(ex)
	if read == nil {
		return nil, nil
	}
	sch := ex.Schema()
	opts := valueindex.Options{Progress: o.valueProgress(progressAfter)}
	file, key := "", ""
	if v, ok := ex.(interface {
		DataVersion(context.Context) (string, error)
	}); ok {
		dir, err := o.indexPath(path)
		if err != nil {
			return nil, err
		}
		version, err := v.DataVersion(ctx)
		if err != nil {
			return nil, fmt.Errorf("value index: %w", err)
		}
		if dir != "" {
			file, key = filepath.Join(dir, valuesFile), valueindex.CacheKey(retriever.SchemaFingerprint(sch), version, opts)
			ix, err := valueindex.Load(file, key)
			if err == nil {
				return ix, nil
			}
			if !errors.Is(err, valueindex.ErrCacheMiss) && o.errOut != nil {
				fmt.Fprintf(o.errOut, "text2sql: warning: %v; the value index is rebuilt\n", err)
			}
		}
	}
	b, err := valueindex.NewBuilder(opts)
	if err != nil {
		return nil, fmt.Errorf("value index: %w", err)
	}
	if err := read(ctx, b); err != nil {
		return nil, fmt.Errorf("value index: %w", err)
	}
	ix := b.Index()
	if file != "" {
		if err := ix.Save(file, key); err != nil && o.errOut != nil {
			fmt.Fprintf(o.errOut, "text2sql: warning: %v; the value index is rebuilt next time\n", err)
		}
	}
	return ix, nil
}

// readValues returns how the value index reads the cell values of ex:
// through its database/sql handle, or, for a catalog, each member's with
// its tables named <database>.<table>; nil when there is no handle.
func readValues(ex guarded) func(context.Context, *valueindex.Builder) error {
	type handle interface{ DB() *sql.DB }
	if c, ok := ex.(*catalog.Catalog); ok {
		return func(ctx context.Context, b *valueindex.Builder) error {
			for _, m := range c.Members() {
				if h, ok := m.Executor.(handle); ok {
					if err := b.Read(ctx, h.DB(), m.Executor.Schema(), m.Name+"."); err != nil {
						return fmt.Errorf("database %s: %w", m.Name, err)
					}
				}
			}
			return nil
		}
	}
	h, ok := ex.(handle)
	if !ok {
		return nil
	}
	return func(ctx context.Context, b *valueindex.Builder) error { return b.Read(ctx, h.DB(), ex.Schema(), "") }
}

// valueProgress returns the progress callback of a value-index build: from
// after on, one line on standard error rewritten in place ("text2sql:
// indexing cell values: 120/400 columns"), ended when the build ends; nil
// without standard error.
func (o *options) valueProgress(after time.Duration) func(done, total int) {
	if o.errOut == nil {
		return nil
	}
	start, shown := time.Now(), false
	return func(done, total int) {
		if !shown && time.Since(start) < after {
			return
		}
		shown = true
		fmt.Fprintf(o.errOut, "\rtext2sql: indexing cell values: %d/%d columns", done, total)
		if done == total {
			fmt.Fprintln(o.errOut)
		}
	}
}

// evalRetrieverFor is eval.DefaultRetriever with the retriever flags and
// the value index of each database of ds (its SQLite file), or of every
// database file for the catalog of eval --recall --catalog, tables named
// "db_id.table" as the catalog names them. Databases without a file (materialised from
// tables.json: no data) get none; --no-values turns it off. separate
// retrieves over the catalog as over separate databases
// (HybridOptions.Catalog).
func (o *options) evalRetrieverFor(ds *eval.Dataset, separate bool) eval.RetrieverFunc {
	return func(ctx context.Context, db string, sch *schema.Database) (text2sql.Retriever, error) {
		opts := o.hybrid(sch, nil, nil)
		opts.Catalog = separate && db == "catalog"
		if !o.models.noValues {
			var err error
			if opts.Values, err = evalValues(ctx, ds, db); err != nil {
				return nil, err
			}
		}
		return retriever.NewHybrid(ctx, opts)
	}
}

// evalValues builds the value index of dataset database db, or of all of
// ds's database files when db is "catalog" (eval.Recall's catalog name);
// nil when there is no file.
func evalValues(ctx context.Context, ds *eval.Dataset, db string) (*valueindex.Index, error) {
	ids := []string{db}
	prefix := ""
	if _, ok := ds.Databases[db]; !ok && db == "catalog" {
		ids, prefix = nil, "."
		for id := range ds.Databases {
			ids = append(ids, id)
		}
		slices.Sort(ids)
	}
	b, err := valueindex.NewBuilder(valueindex.Options{})
	if err != nil {
		return nil, err
	}
	read := false
	for _, id := range ids {
		d := ds.Databases[id]
		if d == nil || d.Missing != "" {
			continue
		}
		if _, err := os.Stat(d.Path); err != nil {
			continue
		}
		ex, err := sqlite.Open(d.Path, sqlite.Options{})
		if err != nil {
			return nil, fmt.Errorf("value index of %s: %w", id, err)
		}
		p := ""
		if prefix != "" {
			p = id + prefix
		}
		err = b.Read(ctx, ex.DB(), ex.Schema(), p)
		ex.Close()
		if err != nil {
			return nil, fmt.Errorf("value index of %s: %w", id, err)
		}
		read = true
	}
	if !read {
		return nil, nil
	}
	return b.Index(), nil
}
