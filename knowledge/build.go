package knowledge

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/sqlparse"
	"github.com/text2sql-go/text2sql/internal/sqltext"
	"github.com/text2sql-go/text2sql/schema"
)

// Problem is one fault found in a knowledge base.
type Problem struct {
	// Item names the faulty item by the ID of its document:
	// "table:students", "column:students.gpa", "rule:r1", "example:q3",
	// "value:students.major"; or by its position ("examples[4]") when it
	// has no usable ID. A draft's item starts with "drafts."
	// ("drafts.column:students.gpa", "drafts.examples[0]").
	Item string
	// Msg says what is wrong, in words.
	Msg string
	// Err is the underlying error where there is one, e.g. the
	// *text2sql.SQLError of a guard refusing an example's SQL.
	Err error
}

// String renders the problem as "item: message: underlying error".
func (p Problem) String() string {
	s := p.Item + ": " + p.Msg
	if p.Err != nil {
		s += ": " + p.Err.Error()
	}
	return s
}

// ValidationError lists every problem found in a knowledge base or in an
// item being added. It unwraps to the underlying errors of its problems, so
// errors.Is(err, text2sql.ErrRefused) holds when a guard refused an example
// and errors.As finds the *text2sql.SQLError.
type ValidationError struct {
	// Problems are in the order of the base (tables, columns, rules,
	// examples, values): structural problems first, then those found
	// against the schema and the guard.
	Problems []Problem
}

// Error lists every problem on one line, separated by "; ".
func (e *ValidationError) Error() string {
	var b strings.Builder
	if len(e.Problems) == 1 {
		b.WriteString("knowledge: invalid item: ")
	} else {
		fmt.Fprintf(&b, "knowledge: %d problems: ", len(e.Problems))
	}
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p.String())
	}
	return b.String()
}

// Unwrap returns the underlying errors of the problems that have one.
func (e *ValidationError) Unwrap() []error {
	var errs []error
	for _, p := range e.Problems {
		if p.Err != nil {
			errs = append(errs, p.Err)
		}
	}
	return errs
}

// problems collects Problems; err returns nil when there are none.
type problems []Problem

// flagDuplicate adds a problem (item, format, args) to ps when an entry
// of list is a duplicate, as dup reports.
func flagDuplicate[T any](ps *problems, list []T, dup func(T) bool, item, format string, args ...any) {
	if slices.ContainsFunc(list, dup) {
		ps.add(item, format, args...)
	}
}

// add is how an entry enters the base: check reports its problems under
// item, an entry of *list for which dup holds is refused (format and args
// say why), and v is appended only when there is no problem; else the
// problems are the error and list is left as it was.
func add[T any](list *[]T, v T, item string, check func(*problems, string, T), dup func(T) bool, format string, args ...any) error {
	var ps problems
	check(&ps, item, v)
	flagDuplicate(&ps, *list, dup, item, format, args...)
	return appendChecked(list, v, ps)
}

// sameColumn reports whether table.column and otherTable.otherColumn name
// one column: identifiers compare case-insensitively.
func sameColumn(table, column, otherTable, otherColumn string) bool {
	return strings.EqualFold(table, otherTable) && strings.EqualFold(column, otherColumn)
}

// appendChecked appends v to *list when ps holds no problem, else
// returns ps as the error and leaves list as it was.
func appendChecked[T any](list *[]T, v T, ps problems) error {
	if err := ps.err(); err != nil {
		return err
	}
	*list = append(*list, v)
	return nil
}

func (ps *problems) add(item, format string, args ...any) {
	*ps = append(*ps, Problem{Item: item, Msg: fmt.Sprintf(format, args...)})
}

func (ps problems) err() error {
	if len(ps) == 0 {
		return nil
	}
	return &ValidationError{Problems: ps}
}

// AutoID returns the ID given to a rule or example that has none: prefix,
// "-" and the first 8 hex digits of the SHA-256 of its text (the rule's text
// or the example's question, white space collapsed). It depends only on the
// text, so it is stable across loads and insertions.
func AutoID(prefix, text string) string {
	sum := sha256.Sum256([]byte(collapse(text)))
	return prefix + "-" + hex.EncodeToString(sum[:4])
}

// collapse trims s and collapses runs of white space into one space.
func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// validID reports whether id is usable in a document ID: letters, digits,
// '_', '-' and '.', at most 64 bytes.
func validID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// AddTable adds a table note. Table is required; a second note for the same
// table (case-insensitive) is refused. Errors are *ValidationError.
func (b *Base) AddTable(n TableNote) error {
	n.Table = strings.TrimSpace(n.Table)
	return add(&b.Tables, n, "table:"+n.Table, checkTable, func(t TableNote) bool { return strings.EqualFold(t.Table, n.Table) }, "duplicate note for table %q", n.Table)
}

// AddColumn adds a column note. Table, Column and at least one of
// Description, Units and Range are required; a second note for the same
// column is refused. Errors are *ValidationError.
func (b *Base) AddColumn(n ColumnNote) error {
	n.Table, n.Column = strings.TrimSpace(n.Table), strings.TrimSpace(n.Column)
	return add(&b.Columns, n, "column:"+n.Table+"."+n.Column, checkColumn, func(c ColumnNote) bool { return sameColumn(c.Table, c.Column, n.Table, n.Column) },
		"duplicate note for column %s.%s", n.Table, n.Column)
}

// AddRule adds a business rule. Text is required. A rule without an ID gets
// AutoID("rule", Text); a duplicate ID is refused. Errors are
// *ValidationError.
func (b *Base) AddRule(r Rule) error {
	r.ID = strings.TrimSpace(r.ID)
	if r.ID == "" {
		r.ID = AutoID("rule", r.Text)
	}
	return add(&b.Rules, r, "rule:"+r.ID, checkRule, func(o Rule) bool { return o.ID == r.ID }, "duplicate rule id %q", r.ID)
}

// AddExample adds a verified example after guard has checked its SQL, the
// way an executor would check it before running it: an example whose SQL the
// guard refuses (a write, COPY, several statements…) never enters the base.
// The guard only checks; nothing is executed. Question and SQL are required;
// the SQL is stored without trailing semicolons and comments. An example
// without an ID gets AutoID("ex", Question); a duplicate ID is refused.
//
// Errors: a *ValidationError whose problem wraps the guard's
// *text2sql.SQLError (so errors.Is(err, text2sql.ErrRefused) holds for a
// refusal); an error wrapping text2sql.ErrInvalidConfig when guard is nil;
// ctx.Err() when the context ends.
func (b *Base) AddExample(ctx context.Context, guard text2sql.Guard, ex Example) error {
	if guard == nil {
		return fmt.Errorf("%w: knowledge: AddExample needs a guard to check the example's SQL", text2sql.ErrInvalidConfig)
	}
	ex.ID = strings.TrimSpace(ex.ID)
	ex.SQL = sqltext.TrimTerminators(ex.SQL)
	if ex.ID == "" {
		ex.ID = AutoID("ex", ex.Question)
	}
	item := "example:" + ex.ID
	var ps problems
	checkExample(&ps, item, ex)
	flagDuplicate(&ps, b.Examples, func(o Example) bool { return o.ID == ex.ID }, item, "duplicate example id %q", ex.ID)
	if len(ps) == 0 {
		if err := checkSQL(ctx, guard, &ps, item, ex.SQL); err != nil {
			return err
		}
	}
	return appendChecked(&b.Examples, ex, ps)
}

// AddValues adds the distinct values of one column. Table, Column and at
// least one value are required; a second list for the same column is
// refused. Errors are *ValidationError.
func (b *Base) AddValues(v ValueList) error {
	v.Table, v.Column = strings.TrimSpace(v.Table), strings.TrimSpace(v.Column)
	return add(&b.Values, v, "value:"+v.Table+"."+v.Column, checkValues, func(o ValueList) bool { return sameColumn(o.Table, o.Column, v.Table, v.Column) },
		"duplicate value list for column %s.%s", v.Table, v.Column)
}

func checkTable(ps *problems, item string, n TableNote) {
	if n.Table == "" {
		ps.add(item, "table is required")
	}
}

func checkColumn(ps *problems, item string, n ColumnNote) {
	if n.Table == "" || n.Column == "" {
		ps.add(item, "table and column are required")
	}
	if strings.TrimSpace(n.Description+n.Units+n.Range) == "" {
		ps.add(item, "a description, units or a range is required")
	}
}

func checkRule(ps *problems, item string, r Rule) {
	if !validID(r.ID) {
		ps.add(item, "id %q must be 1–64 letters, digits, '_', '-' or '.'", r.ID)
	}
	if strings.TrimSpace(r.Text) == "" {
		ps.add(item, "text is required")
	}
}

func checkExample(ps *problems, item string, ex Example) {
	if !validID(ex.ID) {
		ps.add(item, "id %q must be 1–64 letters, digits, '_', '-' or '.'", ex.ID)
	}
	if strings.TrimSpace(ex.Question) == "" {
		ps.add(item, "question is required")
	}
	if strings.TrimSpace(ex.SQL) == "" {
		ps.add(item, "sql is required")
	}
}

func checkValues(ps *problems, item string, v ValueList) {
	if v.Table == "" || v.Column == "" {
		ps.add(item, "table and column are required")
	}
	if len(v.Values) == 0 {
		ps.add(item, "at least one value is required")
	}
}

// checkSQL asks guard about sql and records a refusal or failure as a
// problem. It returns an error only when the check itself could not be
// made: the context ended.
func checkSQL(ctx context.Context, guard text2sql.Guard, ps *problems, item, sql string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := guard.Check(ctx, sql)
	if err == nil {
		return nil
	}
	if cerr := ctx.Err(); cerr != nil && errors.Is(err, cerr) {
		return err
	}
	*ps = append(*ps, Problem{Item: item, Msg: "sql does not pass the guard", Err: err})
	return nil
}

// normalize fills in missing IDs, trims names and checks the structure of a
// base that was decoded rather than built with the Add methods.
func (b *Base) normalize() error {
	trimNotes(b.Tables, b.Columns)
	for i := range b.Rules {
		r := &b.Rules[i]
		if r.ID = strings.TrimSpace(r.ID); r.ID == "" {
			r.ID = AutoID("rule", r.Text)
		}
	}
	trimExamples(b.Examples)
	for i := range b.Values {
		v := &b.Values[i]
		v.Table, v.Column = strings.TrimSpace(v.Table), strings.TrimSpace(v.Column)
	}
	if d := b.Drafts; d != nil {
		trimNotes(d.Tables, d.Columns)
		trimExamples(d.Examples)
	}
	var ps problems
	b.structure(&ps)
	return ps.err()
}

// trimNotes trims the names of table and column notes.
func trimNotes(tables []TableNote, columns []ColumnNote) {
	for i := range tables {
		tables[i].Table = strings.TrimSpace(tables[i].Table)
	}
	for i := range columns {
		c := &columns[i]
		c.Table, c.Column = strings.TrimSpace(c.Table), strings.TrimSpace(c.Column)
	}
}

// trimExamples trims examples' SQL and fills in missing IDs.
func trimExamples(examples []Example) {
	for i := range examples {
		ex := &examples[i]
		ex.SQL = sqltext.TrimTerminators(ex.SQL)
		if ex.ID = strings.TrimSpace(ex.ID); ex.ID == "" {
			ex.ID = AutoID("ex", ex.Question)
		}
	}
}

// draftPrefix starts the Problem.Item of a draft ("drafts.column:t.c"), so
// a problem in the drafts section is not mistaken for one in the base.
const draftPrefix = "drafts."

// structure checks required fields and duplicates, without a schema: the
// base's items, then its drafts' (where a column note may be empty).
func (b *Base) structure(ps *problems) {
	structureOf(ps, "", b.Tables, b.Columns, b.Rules, b.Examples, b.Values)
	if d := b.Drafts; d != nil {
		structureOf(ps, draftPrefix, d.Tables, d.Columns, nil, d.Examples, nil)
	}
}

// structureOf checks one section's items; prefix is "" for the base and
// draftPrefix for the drafts, whose column notes need no text yet.
func structureOf(ps *problems, prefix string, tables []TableNote, columns []ColumnNote, rules []Rule, examples []Example, values []ValueList) {
	seen := map[string]bool{}
	dup := func(key string) bool {
		key = strings.ToLower(key)
		if seen[key] {
			return true
		}
		seen[key] = true
		return false
	}
	for i, n := range tables {
		item := prefix + itemOr("table:"+n.Table, n.Table != "", "tables", i)
		checkTable(ps, item, n)
		if n.Table != "" && dup("table:"+n.Table) {
			ps.add(item, "duplicate note for table %q", n.Table)
		}
	}
	for i, n := range columns {
		item := prefix + itemOr("column:"+n.Table+"."+n.Column, n.Table != "" && n.Column != "", "columns", i)
		if prefix == "" {
			checkColumn(ps, item, n)
		} else if n.Table == "" || n.Column == "" {
			ps.add(item, "table and column are required")
		}
		if n.Table != "" && n.Column != "" && dup("column:"+n.Table+"."+n.Column) {
			ps.add(item, "duplicate note for column %s.%s", n.Table, n.Column)
		}
	}
	for i, r := range rules {
		item := prefix + itemOr("rule:"+r.ID, validID(r.ID), "rules", i)
		checkRule(ps, item, r)
		if seen["rule:"+r.ID] { // IDs are case-sensitive
			ps.add(item, "duplicate rule id %q", r.ID)
		}
		seen["rule:"+r.ID] = true
	}
	for i, ex := range examples {
		item := prefix + itemOr("example:"+ex.ID, validID(ex.ID), "examples", i)
		checkExample(ps, item, ex)
		if seen["example:"+ex.ID] {
			ps.add(item, "duplicate example id %q", ex.ID)
		}
		seen["example:"+ex.ID] = true
	}
	for i, v := range values {
		item := prefix + itemOr("value:"+v.Table+"."+v.Column, v.Table != "" && v.Column != "", "values", i)
		checkValues(ps, item, v)
		if v.Table != "" && v.Column != "" && dup("value:"+v.Table+"."+v.Column) {
			ps.add(item, "duplicate value list for column %s.%s", v.Table, v.Column)
		}
	}
}

func itemOr(item string, ok bool, list string, i int) string {
	if ok {
		return item
	}
	return fmt.Sprintf("%s[%d]", list, i)
}

// Validate checks the whole base against a schema and a guard and returns
// every problem in one *ValidationError, each naming its item:
//
//   - required fields, ID syntax and duplicate IDs (as the Add methods);
//   - every table note, column note, value list and rule refers to a table
//     (db.Lookup) and column of db;
//   - every example's SQL passes guard.Check (nothing is executed) and,
//     when it does, reads only tables of db, as the syntax tree of internal/sqlparse
//     places them (names of common table expressions are not tables);
//   - the same for the drafts (see Base.Drafts), whose problems are named
//     "drafts.<item>"; a draft column note may still be empty.
//
// A nil db skips the schema checks. guard is required: without one,
// Validate returns an error wrapping text2sql.ErrInvalidConfig. When ctx
// ends, Validate returns ctx.Err().
func (b *Base) Validate(ctx context.Context, db *schema.Database, guard text2sql.Guard) error {
	if guard == nil {
		return fmt.Errorf("%w: knowledge: Validate needs a guard to check the examples' SQL", text2sql.ErrInvalidConfig)
	}
	if b == nil {
		return nil
	}
	var ps problems
	b.structure(&ps)
	if err := validateOf(ctx, db, guard, &ps, "", b.Tables, b.Columns, b.Rules, b.Examples, b.Values); err != nil {
		return err
	}
	if d := b.Drafts; d != nil {
		if err := validateOf(ctx, db, guard, &ps, draftPrefix, d.Tables, d.Columns, nil, d.Examples, nil); err != nil {
			return err
		}
	}
	return ps.err()
}

// validateOf checks one section's references to db and its examples' SQL
// against guard, adding to ps; prefix is "" or draftPrefix. It returns an
// error only when ctx ends.
func validateOf(ctx context.Context, db *schema.Database, guard text2sql.Guard, ps *problems, prefix string,
	tables []TableNote, columns []ColumnNote, rules []Rule, examples []Example, values []ValueList) error {
	table := func(item, name string) *schema.Table {
		if db == nil || name == "" {
			return nil
		}
		t := db.Lookup(name)
		if t == nil {
			ps.add(item, "unknown table %q", name)
		}
		return t
	}
	column := func(item, tname, cname string) {
		if t := table(item, tname); t != nil && cname != "" && t.Column(cname) == nil {
			ps.add(item, "unknown column %q in table %s", cname, t.QualifiedName())
		}
	}
	for _, n := range tables {
		table(prefix+"table:"+n.Table, n.Table)
	}
	for _, n := range columns {
		column(prefix+"column:"+n.Table+"."+n.Column, n.Table, n.Column)
	}
	for _, r := range rules {
		for _, tn := range r.Tables {
			table(prefix+"rule:"+r.ID, tn)
		}
	}
	for i, ex := range examples {
		item := prefix + itemOr("example:"+ex.ID, validID(ex.ID), "examples", i)
		if strings.TrimSpace(ex.SQL) == "" {
			continue
		}
		n := len(*ps)
		if err := checkSQL(ctx, guard, ps, item, ex.SQL); err != nil {
			return err
		}
		if db == nil || len(*ps) > n {
			continue // the guard's report is the more precise one
		}
		for _, ref := range sqlparse.Tables(sqlparse.Parse(ex.SQL, db.Dialect)) {
			if name := ref.QualifiedName(); db.Lookup(name) == nil {
				ps.add(item, "sql reads unknown table %q", name)
			}
		}
	}
	for _, v := range values {
		column(prefix+"value:"+v.Table+"."+v.Column, v.Table, v.Column)
	}
	return nil
}
