package valueindex

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/defaults"
	"github.com/text2sql-go/text2sql/knowledge"
	"github.com/text2sql-go/text2sql/schema"
)

// Options bound and scope Build. The zero value means the defaults.
type Options struct {
	// MaxPerColumn is the most values read from one column, the most
	// frequent first; 0 means DefaultMaxPerColumn.
	MaxPerColumn int
	// MaxValues is the most values of the index; 0 means
	// DefaultMaxValues. Columns are read in schema order until it is
	// reached.
	MaxValues int
	// MaxBytes bounds the bytes of the distinct values kept; 0 means
	// DefaultMaxBytes.
	MaxBytes int
	// MaxLength is the longest value kept, in runes; 0 means
	// knowledge.DefaultMaxLength (80): longer values are prose.
	MaxLength int
	// Tables limits the index to these tables (names as
	// schema.Database.Lookup takes them); empty means every table and
	// view.
	Tables []string
	// Skip reports whether a column must not be read, on top of
	// knowledge.ValueColumn's rules; nil means none.
	Skip func(t *schema.Table, c *schema.Column) bool
	// Progress, when set, is called after each column read with the
	// columns done and the columns to read.
	Progress func(done, total int)
}

func (o Options) withDefaults() Options {
	defaults.Positive(&o.MaxPerColumn, DefaultMaxPerColumn)
	defaults.Positive(&o.MaxValues, DefaultMaxValues)
	defaults.Positive(&o.MaxBytes, DefaultMaxBytes)
	defaults.Positive(&o.MaxLength, knowledge.DefaultMaxLength)
	return o
}

// Columns returns the columns of sch that Build reads, in schema order
// (tables, then columns): those knowledge.ValueColumn accepts and
// opts.Skip does not reject, of opts.Tables when given. Errors: an
// unknown name in opts.Tables (wrapping text2sql.ErrInvalidConfig).
func Columns(sch *schema.Database, opts Options) ([]*schema.Table, [][]*schema.Column, error) {
	if sch == nil {
		return nil, nil, fmt.Errorf("%w: valueindex: no schema", text2sql.ErrInvalidConfig)
	}
	tables := sch.Tables
	if len(opts.Tables) > 0 {
		tables = nil
		for _, name := range opts.Tables {
			t := sch.Lookup(name)
			if t == nil {
				return nil, nil, fmt.Errorf("%w: valueindex: unknown table %q in Options.Tables", text2sql.ErrInvalidConfig, name)
			}
			if !slices.Contains(tables, t) {
				tables = append(tables, t)
			}
		}
	}
	var (
		outT []*schema.Table
		outC [][]*schema.Column
	)
	for _, t := range tables {
		if t == nil {
			continue
		}
		var cs []*schema.Column
		for i := range t.Columns {
			c := &t.Columns[i]
			if knowledge.ValueColumn(t, c) && (opts.Skip == nil || !opts.Skip(t, c)) {
				cs = append(cs, c)
			}
		}
		if len(cs) > 0 {
			outT, outC = append(outT, t), append(outC, cs)
		}
	}
	return outT, outC, nil
}

// Build reads the values of the text columns of sch from db and indexes
// them: NewBuilder(opts), Builder.Read, Builder.Index. Errors as theirs.
func Build(ctx context.Context, db *sql.DB, sch *schema.Database, opts Options) (*Index, error) {
	b, err := NewBuilder(opts)
	if err != nil {
		return nil, err
	}
	if err := b.Read(ctx, db, sch, ""); err != nil {
		return nil, err
	}
	return b.Index(), nil
}

// Read adds the values of the text columns of sch (see Columns, with the
// builder's Options) read from db, each table named prefix +
// Table.QualifiedName() ("concert_singer." for one database of a catalog;
// "" for none). Each column costs one query, run with ctx:
//
//	SELECT c, COUNT(*) FROM t WHERE c IS NOT NULL GROUP BY c ORDER BY 2 DESC, 1 LIMIT MaxPerColumn+1
//
// with identifiers quoted for sch.Dialect (schema.Quote, schema.QuoteTable),
// so a column keeps its most frequent values; on a table of n rows it is
// one scan and a sort of the distinct values. Reading stops when the
// index is full (MaxValues, MaxBytes). A column with more values than
// MaxPerColumn is listed in Stats.Truncated. Options.Progress is called
// after each column.
//
// A column whose query fails is left out and listed in Stats.Skipped; when
// every column fails, the first error is returned (the database is
// unreachable or the login reads nothing). Errors: a nil db or sch, or an
// unknown table in Options.Tables, wrapping text2sql.ErrInvalidConfig;
// ctx.Err() when ctx ends.
func (b *Builder) Read(ctx context.Context, db *sql.DB, sch *schema.Database, prefix string) error {
	if db == nil || sch == nil {
		return fmt.Errorf("%w: valueindex: Read needs a database and its schema", text2sql.ErrInvalidConfig)
	}
	b.init()
	tables, cols, err := Columns(sch, b.opts)
	if err != nil {
		return err
	}
	total := 0
	for _, cs := range cols {
		total += len(cs)
	}
	var first error
	done, failed := 0, 0
	for i, t := range tables {
		for _, c := range cols[i] {
			// One more than the bound, so that Add marks a cut column.
			vals, err := topValues(ctx, db, sch.Dialect, t, c.Name, b.opts.MaxPerColumn+1)
			if ctx.Err() != nil {
				return ctx.Err()
			}
			name := prefix + t.QualifiedName()
			if err != nil {
				failed++
				if first == nil {
					first = err
				}
				b.skip = append(b.skip, name+"."+c.Name+": "+err.Error())
			} else if !b.Add(name, c.Name, vals...) {
				return nil
			}
			done++
			if b.opts.Progress != nil {
				b.opts.Progress(done, total)
			}
		}
	}
	if failed > 0 && failed == total {
		return first
	}
	return nil
}

// topValues returns up to limit non-NULL values of t.col, the most
// frequent first, ties in value order.
func topValues(ctx context.Context, db *sql.DB, d text2sql.Dialect, t *schema.Table, col string, limit int) ([]string, error) {
	qc := schema.Quote(d, col)
	q := fmt.Sprintf("SELECT %s, COUNT(*) FROM %s WHERE %s IS NOT NULL GROUP BY %s ORDER BY 2 DESC, 1 LIMIT %d",
		qc, schema.QuoteTable(d, t), qc, qc, limit)
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("valueindex: %s.%s: %w", t.QualifiedName(), col, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var (
			v sql.NullString
			n int64
		)
		if err := rows.Scan(&v, &n); err != nil {
			return nil, fmt.Errorf("valueindex: %s.%s: %w", t.QualifiedName(), col, err)
		}
		if v.Valid {
			out = append(out, v.String)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("valueindex: %s.%s: %w", t.QualifiedName(), col, err)
	}
	return out, nil
}
