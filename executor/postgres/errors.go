package postgres

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgconn"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/sqlparse"
	"github.com/text2sql-go/text2sql/lint"
	"github.com/text2sql-go/text2sql/schema"
)

// sqlError turns a server error into a *text2sql.SQLError with its
// SQLSTATE, and for unknown tables and columns a hint that knows
// PostgreSQL's case folding and schemas.
// maxMessage bounds the server's message and detail in a SQLError, in
// bytes: a message quotes the offending value (invalid input syntax for
// type integer: "…"), which a statement can make megabytes long.
const maxMessage = 2048

// cutMessage cuts s to maxMessage bytes at a rune boundary, saying how
// long it was.
func cutMessage(s string) string {
	if len(s) <= maxMessage {
		return s
	}
	i := maxMessage
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "… (" + strconv.Itoa(len(s)) + " bytes)"
}

func (e *Executor) sqlError(pe *pgconn.PgError, query string) *text2sql.SQLError {
	msg := cutMessage(pe.Message)
	if pe.Detail != "" {
		msg += " (" + cutMessage(pe.Detail) + ")"
	}
	if pe.Position > 0 {
		msg += " (at character " + strconv.Itoa(int(pe.Position)) + ")"
	}
	se := &text2sql.SQLError{Kind: lint.ClassifySQLState(pe.Code, pe.Message), Message: msg, SQLState: pe.Code}
	switch se.Kind {
	case text2sql.KindUnknownTable:
		se.Hint = tableHint(e.schema, e.searchPath, lint.UnknownName(pe.Message), query)
	case text2sql.KindUnknownColumn:
		se.Hint = columnHint(e.schema, lint.UnknownName(pe.Message), query)
		if se.Hint == "" && pe.Hint != "" {
			se.Hint = pe.Hint
		}
		if se.Hint == "" {
			se.Hint = lint.Suggest(e.schema, se.Kind, lint.UnknownName(pe.Message), query)
		}
	default:
		se.Hint = pe.Hint
	}
	return se
}

// foldNote explains a hint that only differs from the query by case.
const foldNote = " (PostgreSQL folds unquoted names to lower case: write a mixed-case name in double quotes)"

// tableHint suggests the table a query meant by name, the relation name
// PostgreSQL reports (already case-folded; "schema.name" when qualified).
// In order:
//
//  1. Tables of exactly that name in schemas not on the search path
//     (or in another schema than the one named): "did you mean
//     sales.orders?" — one, or up to three joined by "or". The query
//     is not rewritten: the hint lets the repair loop qualify the name.
//  2. Tables whose name differs only by case: `did you mean "Riskitems"?`
//     with a note on case folding.
//  3. The closest name by edit distance (lint.Suggest).
//
// Names in hints are written as SQL: quoted where PostgreSQL needs it,
// schema-qualified when the schema is not on the search path.
func tableHint(db *schema.Database, searchPath []string, name, query string) string {
	if db == nil || name == "" {
		return ""
	}
	sch, base := "", name
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		sch, base = name[:i], name[i+1:]
	}
	onPath := map[string]bool{}
	for _, s := range searchPath {
		onPath[s] = true
	}
	show := func(t *schema.Table) string {
		if sch == "" && onPath[t.Schema] {
			return schema.Quote(text2sql.DialectPostgres, t.Name)
		}
		return schema.QuoteTable(text2sql.DialectPostgres, t)
	}
	var exact, folded []string
	for _, t := range db.Tables {
		switch {
		case t.Name == base && (sch != "" && t.Schema != sch || sch == "" && !onPath[t.Schema]):
			exact = append(exact, schema.QuoteTable(text2sql.DialectPostgres, t))
		case t.Name != base && strings.EqualFold(t.Name, base) && (sch == "" || strings.EqualFold(t.Schema, sch)):
			folded = append(folded, show(t))
		}
	}
	if len(exact) > 3 {
		exact = exact[:3]
	}
	if len(exact) > 0 {
		return "did you mean " + strings.Join(exact, " or ") + "?"
	}
	if len(folded) > 0 {
		return "did you mean " + strings.Join(folded, " or ") + "?" + foldNote
	}
	return lint.Suggest(db, text2sql.KindUnknownTable, name, query)
}

// columnHint suggests a column whose name differs from the (case-folded)
// unknown one only by case, in the tables the query reads: `did you
// mean "FirstName"?` with a note on case folding. It returns "" when
// there is none.
func columnHint(db *schema.Database, name, query string) string {
	if db == nil || name == "" {
		return ""
	}
	col := name
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		col = name[i+1:]
	}
	seen := map[string]bool{}
	var found []string
	for _, r := range sqlparse.Tables(sqlparse.Parse(query, text2sql.DialectPostgres)) {
		t := db.Lookup(r.QualifiedName())
		if t == nil {
			continue
		}
		for _, c := range t.Columns {
			if c.Name != col && strings.EqualFold(c.Name, col) && !seen[c.Name] {
				seen[c.Name] = true
				found = append(found, schema.Quote(text2sql.DialectPostgres, c.Name))
			}
		}
	}
	if len(found) == 0 {
		return ""
	}
	return "did you mean " + strings.Join(found, " or ") + "?" + foldNote
}
