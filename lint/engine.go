package lint

import (
	"context"
	"strings"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/sqlparse"
	"github.com/text2sql-go/text2sql/internal/sqltext"
	"github.com/text2sql-go/text2sql/schema"
)

// Classify maps an engine error message to an error kind, best effort, from
// the wording of SQLite, PostgreSQL and MySQL messages. It is the fallback
// for errors that carry no code an executor knows (EngineError); an
// engine's own code says more, where there is one. By the wording: "no such table",
// `relation "x" does not exist` and "Table 'x' doesn't exist" give
// KindUnknownTable; "no such column", `column "x" does not exist` and
// "Unknown column" give KindUnknownColumn; syntax and incomplete-input
// errors give KindSyntax; interrupts, statement timeouts and cancellations
// give KindTimeout; "string or blob too big" and similar length errors give
// KindTooLarge; writes refused by a read-only database or transaction give
// KindNotReadOnly; authorization failures (PostgreSQL's "permission
// denied", MySQL's "command denied", SQLite's "not authorized") give
// KindForbiddenStatement. Anything else is KindRuntime.
//
// A leading "ERROR: " (pgx's rendering of a PostgreSQL error through
// database/sql: `ERROR: relation "x" does not exist (SQLSTATE 42P01)`) is
// ignored.
func Classify(msg string) text2sql.ErrorKind {
	m := strings.TrimPrefix(strings.ToLower(msg), "error: ")
	has := func(subs ...string) bool {
		for _, s := range subs {
			if strings.Contains(m, s) {
				return true
			}
		}
		return false
	}
	switch {
	case has("no such table", "no such view") ||
		strings.HasPrefix(m, "relation ") && has("does not exist") ||
		has("table '", "table \"") && has("doesn't exist", "does not exist"):
		return text2sql.KindUnknownTable
	case has("no such column", "unknown column") || has("column ") && has("does not exist"):
		return text2sql.KindUnknownColumn
	case has("syntax error", "incomplete input", "unrecognized token", "you have an error in your sql syntax"):
		return text2sql.KindSyntax
	case has("interrupted", "statement timeout", "canceling statement due to", "query execution was interrupted",
		"maximum statement execution time exceeded", context.DeadlineExceeded.Error()):
		return text2sql.KindTimeout
	case has("string or blob too big", "too big", "too large", "too long", "exceeds the maximum", "out of memory"):
		return text2sql.KindTooLarge
	case has("readonly database", "read-only transaction", "read only transaction", "read-only mode",
		"cannot execute statement in a read only", "read only mode"):
		return text2sql.KindNotReadOnly
	case has("not authorized", "authorization denied", "is prohibited", "permission denied", "access denied", "command denied",
		"too many attached databases"):
		return text2sql.KindForbiddenStatement
	}
	return text2sql.KindRuntime
}

// UnknownName returns the table or column name an "unknown table/column"
// message is about, as written in the query (possibly qualified:
// "ck.cell_name"), or "" when the message names none.
func UnknownName(msg string) string {
	for _, p := range []string{"no such table: ", "no such column: ", "no such view: "} {
		if i := strings.Index(msg, p); i >= 0 {
			return strings.TrimSpace(firstLine(msg[i+len(p):]))
		}
	}
	// PostgreSQL: relation "x" does not exist / column "x" does not exist /
	// column t.x does not exist.
	for _, p := range []string{"relation ", "column "} {
		if i := strings.Index(msg, p); i >= 0 {
			rest := msg[i+len(p):]
			if j := strings.Index(rest, " does not exist"); j >= 0 {
				return strings.Trim(rest[:j], `"`)
			}
		}
	}
	// MySQL: Table 'db.x' doesn't exist / Unknown column 'x' in 'field list'.
	for _, p := range []string{"Table '", "Unknown column '"} {
		if i := strings.Index(msg, p); i >= 0 {
			rest := msg[i+len(p):]
			if j := strings.IndexByte(rest, '\''); j >= 0 {
				name := rest[:j]
				if p == "Table '" {
					if k := strings.LastIndexByte(name, '.'); k >= 0 {
						name = name[k+1:]
					}
				}
				return name
			}
		}
	}
	return ""
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// Suggest returns a hint for an unknown table or column, or "" when it has
// none. name is the unknown name as the error message gives it (see
// UnknownName); query is the failing SQL, used to resolve aliases and to
// prefer the tables the query reads.
//
// For a table, the hint names the closest real table or view by edit
// distance (case-insensitive): `did you mean "topics"?`. For a column, it
// names the tables of db that have a column of exactly that name, preferring
// tables the query reads (`column "cell_name" is in table cell_kpi_4g`), or
// else the closest column of the tables the query reads. A name is offered
// only when its edit distance is at most max(1, len/3), capped at 3.
func Suggest(db *schema.Database, kind text2sql.ErrorKind, name, query string) string {
	if db == nil || name == "" {
		return ""
	}
	switch kind {
	case text2sql.KindUnknownTable:
		if i := strings.LastIndexByte(name, '.'); i >= 0 && !strings.EqualFold(name[:i], "main") {
			// A qualified name: try the whole name against qualified tables too.
			if t := db.Lookup(name); t != nil {
				return `did you mean "` + t.QualifiedName() + `"?`
			}
		}
		base := name
		if i := strings.LastIndexByte(name, '.'); i >= 0 {
			base = name[i+1:]
		}
		var cands []string
		for _, t := range db.Tables {
			cands = append(cands, t.Name)
		}
		// A table of that name in another schema (PostgreSQL search_path).
		var qualified []string
		for _, t := range db.Tables {
			if strings.EqualFold(t.Name, base) && t.Schema != "" {
				qualified = append(qualified, t.QualifiedName())
			}
		}
		if len(qualified) > 0 {
			return `did you mean "` + strings.Join(qualified, `" or "`) + `"?`
		}
		if best := sqltext.Closest(base, cands); best != "" {
			return `did you mean "` + best + `"?`
		}
	case text2sql.KindUnknownColumn:
		qual, col := "", name
		if i := strings.LastIndexByte(name, '.'); i >= 0 {
			qual, col = name[:i], name[i+1:]
		}
		read := queryTables(db, query)
		// The alias or table the column was qualified with.
		var qualTable *schema.Table
		if qual != "" {
			for _, r := range sqlparse.Tables(sqlparse.Parse(query, db.Dialect)) {
				if strings.EqualFold(r.Alias, qual) || strings.EqualFold(r.Name, qual) {
					qualTable = db.Lookup(r.QualifiedName())
					break
				}
			}
		}
		if hint := ColumnElsewhere(db, col, read, qualTable); hint != "" {
			return hint
		}
		var cands []string
		owner := map[string]string{}
		scope := read
		if qualTable != nil {
			scope = []*schema.Table{qualTable}
		}
		for _, t := range scope {
			for _, c := range t.Columns {
				if _, ok := owner[c.Name]; !ok {
					owner[c.Name] = t.QualifiedName()
					cands = append(cands, c.Name)
				}
			}
		}
		if best := sqltext.Closest(col, cands); best != "" {
			return `did you mean "` + best + `" (table ` + owner[best] + `)?`
		}
	}
	return ""
}

// ColumnElsewhere is the hint for an unknown column col that other tables
// have: `column "col" is in table a, b` naming at most three tables of db
// with a column of exactly that name (schema.Table.Column), those of read
// (the tables the query reads) first, then the rest of db.Tables in order,
// never except (the table the column was looked for in; nil for none).
// It returns "" when db is nil or no other table has the column.
func ColumnElsewhere(db *schema.Database, col string, read []*schema.Table, except *schema.Table) string {
	if db == nil {
		return ""
	}
	var having []string
	seen := map[*schema.Table]bool{}
	for _, t := range append(append([]*schema.Table(nil), read...), db.Tables...) {
		if t == nil || seen[t] || t == except {
			continue
		}
		seen[t] = true
		if t.Column(col) != nil {
			having = append(having, t.QualifiedName())
		}
		if len(having) == 3 {
			break
		}
	}
	if len(having) == 0 {
		return ""
	}
	return `column "` + col + `" is in table ` + strings.Join(having, ", ")
}

// queryTables returns the tables of db that query reads, in order.
func queryTables(db *schema.Database, query string) []*schema.Table {
	var out []*schema.Table
	for _, r := range sqlparse.Tables(sqlparse.Parse(query, db.Dialect)) {
		if t := db.Lookup(r.QualifiedName()); t != nil {
			out = append(out, t)
		}
	}
	return out
}

// EngineError turns an engine error into a *text2sql.SQLError: its Kind
// kind, what the engine's error code says (the executors read their
// engine's codes: PostgreSQL's SQLSTATE, MySQL's error number, SQLite's
// result code), or Classify(msg) when kind is "" (the error carries no
// code the executor knows); its Message msg; and for unknown tables and
// columns a Hint from Suggest (none when db is nil). It never returns nil.
func EngineError(kind text2sql.ErrorKind, msg string, db *schema.Database, query string) *text2sql.SQLError {
	if kind == "" {
		kind = Classify(msg)
	}
	se := &text2sql.SQLError{Kind: kind, Message: msg}
	if se.Kind == text2sql.KindUnknownTable || se.Kind == text2sql.KindUnknownColumn {
		se.Hint = Suggest(db, se.Kind, UnknownName(msg), query)
	}
	return se
}
