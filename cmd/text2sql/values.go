package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/text2sql-go/text2sql/retriever"
	"github.com/text2sql-go/text2sql/retriever/valueindex"
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
	if o.noValues {
		return nil, nil
	}
	if o.caller.decides() {
		if o.errOut != nil {
			fmt.Fprintln(o.errOut, "text2sql: note: the value index is off: it is read with the host's login, "+
				"and --run-as, --rls-claims and --login-map let each caller read only its own rows")
		}
		return nil, nil
	}
	dbx, ok := ex.(interface{ DB() *sql.DB })
	if !ok {
		return nil, nil
	}
	sch := ex.Schema()
	opts := valueindex.Options{Progress: o.valueProgress()}
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
	ix, err := valueindex.Build(ctx, dbx.DB(), sch, opts)
	if err != nil {
		return nil, fmt.Errorf("value index: %w", err)
	}
	if file != "" {
		if err := ix.Save(file, key); err != nil && o.errOut != nil {
			fmt.Fprintf(o.errOut, "text2sql: warning: %v; the value index is rebuilt next time\n", err)
		}
	}
	return ix, nil
}

// valueProgress returns the progress callback of a value-index build: after
// progressAfter, one line on standard error rewritten in place ("values:
// 120/400 columns"), ended when the build ends; nil without standard
// error.
func (o *options) valueProgress() func(done, total int) {
	if o.errOut == nil {
		return nil
	}
	start, shown := time.Now(), false
	return func(done, total int) {
		if !shown && time.Since(start) < progressAfter {
			return
		}
		shown = true
		fmt.Fprintf(o.errOut, "\rtext2sql: indexing cell values: %d/%d columns", done, total)
		if done == total {
			fmt.Fprintln(o.errOut)
		}
	}
}
