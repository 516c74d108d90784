package knowledge

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/schema"
)

// InitOptions tunes Init. The zero value means the defaults, without a
// model.
type InitOptions struct {
	// Values bounds the value lists as it bounds CollectValues: a text
	// column is listed only when it has at most Values.MaxDistinct distinct
	// values (0: DefaultMaxDistinct).
	Values ValueOptions
	// Model, when set, drafts notes and candidate examples: one call per
	// table and view (see Init).
	Model text2sql.Model
	// Checker runs the deterministic checks on drafted examples; nil means
	// none beyond the guard and the run (package lint provides one:
	// lint.New(sch, sch.Dialect)).
	Checker text2sql.Checker
	// DraftExamples is the most candidate examples kept per table; 0 means
	// DefaultDraftExamples.
	DraftExamples int
}

// Guarded is what Init needs of the database: an executor to read values
// and run drafted examples, and its guard to check them first. The SQLite,
// PostgreSQL and MySQL executors are Guarded.
type Guarded interface {
	text2sql.Executor
	text2sql.Guard
}

// inferredMark ends an inferred join in a table note's Joins, so a reviewer
// (and a model reading the note) can tell it from a declared foreign key.
const inferredMark = " (inferred from the column names, no foreign key declared: check it)"

// Init writes a starter knowledge base for the database whose schema is sch,
// reading its values through ex, the database's guarded executor, for a
// person to review:
//
//   - Drafts.Tables: one note per table and view, in schema order, its
//     description the table's comment (else empty, to fill in), its Joins
//     the declared foreign keys ("a.x = b.y") and the inferred ones, marked
//     as such: a column named like another table's one-column primary key
//     ("singer_id" and singer.singer_id), or "<table>_id" / "<table>id" for
//     a table with a one-column primary key, when no foreign key covers it;
//   - Drafts.Columns: one note per column, its description the column's
//     comment (else empty, to fill in); EncodeStarter shows each column's
//     type and key role beside it;
//   - Values: the distinct values of the low-cardinality text columns, the
//     columns CollectValues would read (text types, not keys, identifiers,
//     secrets or contact details) that hold no inferred key, with at most opts.Values.MaxDistinct
//     distinct values, each read with one "SELECT DISTINCT c FROM t WHERE c
//     IS NOT NULL LIMIT MaxDistinct+1" through ex (so under its guard, row
//     cap and time limit), identifiers quoted for sch.Dialect.
//
// With opts.Model set, Init then asks the model about each table and view
// in turn (its DDL, the tables it references, its value lists as quoted
// literals; one call each) and adds to the drafts what it answers: the
// table's description (where the note has none) and synonyms, the meaning
// of each column whose note is empty, and up to opts.DraftExamples
// candidate examples (question and SQL). Every candidate is checked before
// it is kept: well-formed, passed by ex's guard (ex.Check), by
// opts.Checker, and run once through ex (one row read); a candidate that
// fails, or repeats a question, is left out and reported in the returned
// problems ("drafts.example:<id>", its question and why). A table whose
// answer holds no JSON object is reported ("drafts.table:<table>") and
// keeps its stubs. Everything the model wrote stays in the drafts until a
// person accepts it (Accept).
//
// The drafts are ignored by retrieval until Accept; the result passes
// Validate against sch with ex's guard. A column whose values cannot be read
// (the executor refuses the query or it times out) is left out and reported
// in the returned problems, "value:<table>.<column>" each; Init goes on.
//
// Errors: an error wrapping text2sql.ErrInvalidConfig when ex or sch is nil;
// ctx.Err() when ctx ends; an error of ex.Execute other than a refusal; the
// model's error (the table is named), which ends Init.
func Init(ctx context.Context, ex Guarded, sch *schema.Database, opts InitOptions) (*Base, []Problem, error) {
	if ex == nil || sch == nil {
		return nil, nil, fmt.Errorf("%w: knowledge: Init needs the database's executor and its schema", text2sql.ErrInvalidConfig)
	}
	vopts := opts.Values.withDefaults()
	b := &Base{Drafts: &Drafts{}}
	for _, t := range sch.Tables {
		b.Drafts.Tables = append(b.Drafts.Tables, TableNote{
			Table:       t.QualifiedName(),
			Description: t.Comment,
			Joins:       joinsOf(sch, t),
		})
		for _, c := range t.Columns {
			b.Drafts.Columns = append(b.Drafts.Columns, ColumnNote{Table: t.QualifiedName(), Column: c.Name, Description: c.Comment})
		}
	}
	tables, err := valueTables(sch, vopts)
	if err != nil {
		return nil, nil, err
	}
	var skipped []Problem
	for _, t := range tables {
		for i := range t.Columns {
			c := &t.Columns[i]
			if ref, _ := inferRef(sch, t, c.Name); ref != nil || !valueColumn(t, c, vopts) {
				continue
			}
			vals, err := executeDistinct(ctx, ex, sch.Dialect, t, c.Name, vopts)
			var se *text2sql.SQLError
			switch {
			case errors.As(err, &se):
				skipped = append(skipped, Problem{Item: "value:" + t.QualifiedName() + "." + c.Name, Msg: "values not read", Err: se})
				continue
			case err != nil:
				return nil, nil, err
			}
			if len(vals) > 0 {
				b.Values = append(b.Values, ValueList{Table: t.QualifiedName(), Column: c.Name, Values: vals})
			}
		}
	}
	if opts.Model == nil {
		return b, skipped, nil
	}
	if opts.DraftExamples <= 0 {
		opts.DraftExamples = DefaultDraftExamples
	}
	vet := vetter(ctx, ex, opts.Checker, map[string]bool{})
	for _, t := range sch.Tables {
		left, err := draftTable(ctx, sch, t, b, opts, vet)
		if err != nil {
			return nil, nil, err
		}
		skipped = append(skipped, left...)
	}
	return b, skipped, nil
}

// executeDistinct reads the kept distinct values of one column through ex,
// or nil when it has more than opts.MaxDistinct. A refusal or failed query
// is returned as its *text2sql.SQLError.
func executeDistinct(ctx context.Context, ex text2sql.Executor, d text2sql.Dialect, t *schema.Table, col string, opts ValueOptions) ([]string, error) {
	q := fmt.Sprintf("SELECT DISTINCT %s FROM %s WHERE %s IS NOT NULL LIMIT %d",
		schema.Quote(d, col), schema.QuoteTable(d, t), schema.Quote(d, col), opts.MaxDistinct+1)
	res, err := ex.Execute(ctx, text2sql.ExecuteRequest{SQL: q, MaxRows: opts.MaxDistinct + 1})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("knowledge: Init: %s.%s: %w", t.QualifiedName(), col, err)
	}
	if res.Error != nil {
		return nil, res.Error
	}
	if len(res.Rows) > opts.MaxDistinct || res.Truncated {
		return nil, nil
	}
	var vals []string
	for _, row := range res.Rows {
		if len(row) == 0 {
			continue
		}
		if v, ok := row[0].(string); ok && keepValue(v, opts.MaxLength) {
			vals = append(vals, v)
		}
	}
	slices.Sort(vals)
	return slices.Compact(vals), nil
}

// joinsOf returns t's declared foreign keys as join conditions, then the
// joins inferred from its column names (see Init), each marked inferredMark.
func joinsOf(sch *schema.Database, t *schema.Table) []string {
	var joins []string
	covered := map[string]bool{}
	for _, fk := range t.ForeignKeys {
		ref := sch.Lookup(refName(fk))
		refCols := fk.RefColumns
		if len(refCols) == 0 && ref != nil {
			refCols = ref.PrimaryKey
		}
		if len(refCols) != len(fk.Columns) {
			continue
		}
		refTable := refName(fk)
		if ref != nil {
			refTable = ref.QualifiedName()
		}
		var conds []string
		for i, c := range fk.Columns {
			covered[strings.ToLower(c)] = true
			conds = append(conds, t.QualifiedName()+"."+c+" = "+refTable+"."+refCols[i])
		}
		joins = append(joins, strings.Join(conds, " AND "))
	}
	for _, c := range t.Columns {
		if covered[strings.ToLower(c.Name)] {
			continue
		}
		if ref, key := inferRef(sch, t, c.Name); ref != nil {
			joins = append(joins, t.QualifiedName()+"."+c.Name+" = "+ref.QualifiedName()+"."+key+inferredMark)
		}
	}
	return joins
}

// refName is the referenced table of fk as Lookup takes it.
func refName(fk schema.ForeignKey) string {
	if fk.RefSchema == "" {
		return fk.RefTable
	}
	return fk.RefSchema + "." + fk.RefTable
}

// inferRef returns the table column col of t probably references, and that
// table's key column: another table whose one-column primary key has the
// same name as col, or whose name followed by "_id" or "id" is col
// (case-insensitive). A same-named col must look like an identifier (see
// idLike); col must be more than a bare "id", and must not be t's own one-column primary key (two tables
// keyed by the same name are peers, not a reference). The first match in
// schema order wins; nil when there is none.
func inferRef(sch *schema.Database, t *schema.Table, col string) (*schema.Table, string) {
	lc := strings.ToLower(col)
	if lc == "id" || len(t.PrimaryKey) == 1 && strings.EqualFold(t.PrimaryKey[0], col) {
		return nil, ""
	}
	for _, u := range sch.Tables {
		if u == t || len(u.PrimaryKey) != 1 {
			continue
		}
		key, name := u.PrimaryKey[0], strings.ToLower(u.Name)
		if idLike(col) && strings.EqualFold(key, col) || lc == name+"_id" || lc == name+"id" {
			return u, key
		}
	}
	return nil, ""
}

// keyRole describes c's type and part in keys for a reviewer: "INTEGER, NOT
// NULL, part of the primary key (Singer_ID, concert_ID), references
// singer.Singer_ID (declared)".
func keyRole(sch *schema.Database, t *schema.Table, c *schema.Column) string {
	var parts []string
	if c.Type != "" {
		parts = append(parts, c.Type)
	} else {
		parts = append(parts, "no declared type")
	}
	if c.NotNull {
		parts = append(parts, "NOT NULL")
	}
	for _, k := range t.PrimaryKey {
		switch {
		case !strings.EqualFold(k, c.Name):
		case len(t.PrimaryKey) == 1:
			parts = append(parts, "primary key")
		default:
			parts = append(parts, "part of the primary key ("+strings.Join(t.PrimaryKey, ", ")+")")
		}
	}
	declared := false
	for _, fk := range t.ForeignKeys {
		for i, fc := range fk.Columns {
			if !strings.EqualFold(fc, c.Name) {
				continue
			}
			declared = true
			ref := refName(fk)
			if i < len(fk.RefColumns) {
				ref += "." + fk.RefColumns[i]
			}
			parts = append(parts, "references "+ref+" (declared)")
		}
	}
	if !declared {
		if ref, key := inferRef(sch, t, c.Name); ref != nil {
			parts = append(parts, "probably references "+ref.QualifiedName()+"."+key+" (inferred)")
		}
	}
	return strings.Join(parts, ", ")
}

// starterHeader opens the file EncodeStarter writes.
const starterHeader = ` Starter knowledge file written by "text2sql knowledge init": review it.
 Everything under drafts is ignored by retrieval until accepted: fill in
 the empty descriptions (or delete the notes you do not need), check the
 joins marked "inferred" and any drafted examples, then run
   text2sql knowledge accept FILE
 which moves the drafts into the base and drops notes left empty.
 values lists the text columns with few distinct values, read from the data.`

// EncodeStarter returns b as YAML, like Encode(FormatYAML), with comments
// for a reviewer: a header saying what to do, and beside each draft column
// note the column's type and key role in sch (see keyRole). The comments
// are lost when the file is decoded; the data is what Parse reads back.
func (b *Base) EncodeStarter(sch *schema.Database) ([]byte, error) {
	comments := yaml.CommentMap{"$": {yaml.HeadComment(strings.Split(starterHeader, "\n")...)}}
	if b.Drafts != nil && sch != nil {
		for i, n := range b.Drafts.Columns {
			t := sch.Lookup(n.Table)
			if t == nil {
				continue
			}
			if c := t.Column(n.Column); c != nil {
				comments[fmt.Sprintf("$.drafts.columns[%d].column", i)] = []*yaml.Comment{yaml.LineComment(" " + keyRole(sch, t, c))}
			}
		}
	}
	return yaml.MarshalWithOptions(b, yaml.UseLiteralStyleIfMultiline(true), yaml.IndentSequence(true), yaml.WithComment(comments))
}

// AcceptStats counts what Accept did.
type AcceptStats struct {
	Tables, Columns, Examples int // drafts moved into the base
	Dropped                   int // notes dropped because they were still empty
}

// Accept moves the drafts into the base, as a person does once they have
// reviewed them: draft table notes with nothing but the table's name and
// draft column notes without a description, units or range are dropped
// (they say nothing); the rest are appended to Tables, Columns and Examples
// and Drafts becomes nil. A base without drafts is left as it is.
//
// Errors: a *ValidationError when the merged base is not well-formed (a
// draft note for a table or column the base already has a note for, a
// duplicate example ID); the base is then unchanged.
func (b *Base) Accept() (AcceptStats, error) {
	var st AcceptStats
	d := b.Drafts
	if d == nil {
		return st, nil
	}
	merged := *b
	merged.Drafts = nil
	merged.Tables = slices.Clone(b.Tables)
	merged.Columns = slices.Clone(b.Columns)
	merged.Examples = slices.Clone(b.Examples)
	for _, n := range d.Tables {
		if strings.TrimSpace(n.Description) == "" && len(n.Joins)+len(n.Questions)+len(n.Synonyms) == 0 {
			st.Dropped++
			continue
		}
		merged.Tables = append(merged.Tables, n)
		st.Tables++
	}
	for _, n := range d.Columns {
		if strings.TrimSpace(n.Description+n.Units+n.Range) == "" {
			st.Dropped++
			continue
		}
		merged.Columns = append(merged.Columns, n)
		st.Columns++
	}
	merged.Examples = append(merged.Examples, d.Examples...)
	st.Examples = len(d.Examples)
	var ps problems
	merged.structure(&ps)
	if err := ps.err(); err != nil {
		return AcceptStats{}, err
	}
	*b = merged
	return st, nil
}
