package knowledge

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/defaults"
	"github.com/text2sql-go/text2sql/schema"
)

// Defaults of ValueOptions.
const (
	// DefaultMaxDistinct is the most distinct values a column may have for
	// its values to be listed: enough for a status, category, country or
	// genre column, few enough that the list fits one retrieved document
	// (about 50 × DefaultMaxLength characters at worst) and that a column
	// of names or free text, with many more, is left out.
	DefaultMaxDistinct = 50
	// DefaultMaxLength is the longest value kept, in runes: longer values
	// are prose, not literals a question would quote.
	DefaultMaxLength = 80
)

// ValueOptions tunes CollectValues and Init. The zero value means the defaults.
type ValueOptions struct {
	// MaxDistinct is the most distinct values a column may have to be
	// collected; columns with more are skipped. 0 means DefaultMaxDistinct.
	MaxDistinct int
	// MaxLength is the longest value kept, in characters (runes); longer
	// values are dropped, not cut, since a cut value is no literal. 0 means
	// DefaultMaxLength.
	MaxLength int
	// Tables limits collection to these tables (names as db.Lookup takes
	// them); empty means every table and view of the schema.
	Tables []string
	// Skip reports whether a column must not be collected, on top of the
	// built-in rules; nil means none.
	Skip func(t *schema.Table, c *schema.Column) bool
}

// CollectValues reads the distinct values of the low-cardinality text
// columns of sch from db, one ValueList per column that has at least one
// value, in schema order (tables, then columns), each list's values sorted.
//
// A column is read when its declared type is a text type (one containing
// CHAR, TEXT, CLOB or STRING, or an ENUM; columns of undeclared type are
// skipped) and it is not a key: not in the primary key or a foreign key, and
// not named like an identifier or key ("id", "student_id", "StudentID",
// "uuid", "…_key"), a secret ("password", "token", "hash"…) or contact
// details ("email", "phone"…). A column with
// more than MaxDistinct distinct non-NULL values is skipped. Values that are
// empty, longer than MaxLength, not valid UTF-8 or holding control
// characters (line breaks, tabs) are dropped.
//
// Values are data: they are kept verbatim within these bounds and are
// shown to a model quoted as SQL literals (see Literal), never as
// instructions. Identifiers are quoted for sch.Dialect (schema.QuoteTable,
// schema.Quote); each column costs one SELECT DISTINCT … LIMIT query, run
// with ctx.
//
// Errors: an unknown table in opts.Tables, or a query that fails (the table
// and column are named); ctx.Err() when ctx ends. Collected lists are not
// returned with an error.
func CollectValues(ctx context.Context, db *sql.DB, sch *schema.Database, opts ValueOptions) ([]ValueList, error) {
	if db == nil || sch == nil {
		return nil, fmt.Errorf("%w: knowledge: CollectValues needs a database and its schema", text2sql.ErrInvalidConfig)
	}
	opts = opts.withDefaults()
	tables, err := valueTables(sch, opts)
	if err != nil {
		return nil, err
	}
	var out []ValueList
	for _, t := range tables {
		for i := range t.Columns {
			c := &t.Columns[i]
			if !valueColumn(t, c, opts) {
				continue
			}
			vals, err := distinct(ctx, db, sch.Dialect, t, c.Name, opts)
			if err != nil {
				return nil, err
			}
			if len(vals) > 0 {
				out = append(out, ValueList{Table: t.QualifiedName(), Column: c.Name, Values: vals})
			}
		}
	}
	return out, nil
}

// withDefaults fills in the zero fields of opts.
func (opts ValueOptions) withDefaults() ValueOptions {
	defaults.Positive(&opts.MaxDistinct, DefaultMaxDistinct)
	defaults.Positive(&opts.MaxLength, DefaultMaxLength)
	return opts
}

// valueTables returns the tables whose values are collected: opts.Tables,
// else all of sch's. An unknown name is an error.
func valueTables(sch *schema.Database, opts ValueOptions) ([]*schema.Table, error) {
	if len(opts.Tables) == 0 {
		return sch.Tables, nil
	}
	var tables []*schema.Table
	for _, name := range opts.Tables {
		t := sch.Lookup(name)
		if t == nil {
			return nil, fmt.Errorf("knowledge: unknown table %q in ValueOptions.Tables", name)
		}
		if !slices.Contains(tables, t) {
			tables = append(tables, t)
		}
	}
	return tables, nil
}

// ValueColumn reports whether the values of column c of table t may be
// read and shown under the built-in rules of CollectValues, whatever its
// number of distinct values: a text type (one containing CHAR, TEXT, CLOB
// or STRING, or an ENUM), not in the primary key or a foreign key, and not
// named like an identifier or key ("id", "student_id", "uuid", "…_key"), a
// secret ("password", "token", "hash"…) or contact details ("email",
// "phone"…). A nil table or column is no value column. The value index
// (retriever/valueindex) reads the same columns.
func ValueColumn(t *schema.Table, c *schema.Column) bool {
	return t != nil && c != nil && valueColumn(t, c, ValueOptions{})
}

// KeepValue reports whether a cell value is worth showing as a literal:
// not blank, at most maxRunes runes (0 means DefaultMaxLength), valid
// UTF-8, and on one line without control characters. CollectValues and
// the value index keep only such values.
func KeepValue(v string, maxRunes int) bool {
	defaults.Positive(&maxRunes, DefaultMaxLength)
	return keepValue(v, maxRunes)
}

// valueColumn reports whether c of t is a column whose values are
// collected: a text type, not a key, not named like an identifier, a secret
// or contact details, and not skipped by opts.Skip.
func valueColumn(t *schema.Table, c *schema.Column, opts ValueOptions) bool {
	if !textType(c.Type) || idLike(c.Name) || sensitiveLike(c.Name) {
		return false
	}
	for _, k := range t.PrimaryKey {
		if strings.EqualFold(k, c.Name) {
			return false
		}
	}
	for _, fk := range t.ForeignKeys {
		for _, k := range fk.Columns {
			if strings.EqualFold(k, c.Name) {
				return false
			}
		}
	}
	return opts.Skip == nil || !opts.Skip(t, c)
}

// distinct returns the kept distinct values of one column, or nil when the
// column has more than opts.MaxDistinct of them.
func distinct(ctx context.Context, db *sql.DB, d text2sql.Dialect, t *schema.Table, col string, opts ValueOptions) ([]string, error) {
	q := fmt.Sprintf("SELECT DISTINCT %s FROM %s WHERE %s IS NOT NULL LIMIT %d",
		schema.Quote(d, col), schema.QuoteTable(d, t), schema.Quote(d, col), opts.MaxDistinct+1)
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("knowledge: CollectValues: %s.%s: %w", t.QualifiedName(), col, err)
	}
	defer rows.Close()
	var (
		vals []string
		n    int
	)
	for rows.Next() {
		n++
		if n > opts.MaxDistinct {
			return nil, nil
		}
		var v sql.NullString
		if err := rows.Scan(&v); err != nil {
			return nil, fmt.Errorf("knowledge: CollectValues: %s.%s: %w", t.QualifiedName(), col, err)
		}
		if keepValue(v.String, opts.MaxLength) {
			vals = append(vals, v.String)
		}
	}
	if err := rows.Err(); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("knowledge: CollectValues: %s.%s: %w", t.QualifiedName(), col, err)
	}
	slices.Sort(vals)
	return slices.Compact(vals), nil
}

// keepValue reports whether a value is worth showing: not blank, at most
// max runes, valid UTF-8, and on one line without control characters.
func keepValue(v string, max int) bool {
	if strings.TrimSpace(v) == "" || !utf8.ValidString(v) || utf8.RuneCountInString(v) > max {
		return false
	}
	for _, r := range v {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}

// textType reports whether a declared column type holds text.
func textType(typ string) bool {
	t := strings.ToLower(typ)
	for _, s := range []string{"char", "text", "clob", "string"} {
		if strings.Contains(t, s) {
			return true
		}
	}
	return strings.HasPrefix(t, "enum")
}

// idLike reports whether a column name looks like an identifier or key.
func idLike(name string) bool {
	w := strings.Fields(words(name))
	if len(w) == 0 {
		return true
	}
	switch w[len(w)-1] {
	case "id", "ids", "uuid", "guid", "key", "pk", "fk":
		return true
	}
	return false
}

// sensitiveLike reports whether a column name suggests a secret or contact
// details.
func sensitiveLike(name string) bool {
	for _, w := range strings.Fields(words(name)) {
		switch w {
		case "password", "passwd", "pwd", "secret", "token", "hash", "salt", "apikey", "credential", "credentials",
			"email", "mail", "phone", "mobile", "fax", "ssn", "iban":
			return true
		}
	}
	return false
}
