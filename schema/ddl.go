package schema

import (
	"cmp"
	"strings"

	text2sql "github.com/text2sql-go/text2sql"
)

// reserved holds SQL keywords (SQLite, PostgreSQL and MySQL reserved words
// in common use) that must be quoted when used as identifiers.
var reserved = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`abort action add after all alter always analyze and array as asc attach
	autoincrement before begin between both by cascade case cast check collate column commit conflict constraint
	create cross current current_date current_time current_timestamp current_user database default deferrable
	deferred delete desc detach distinct do drop each else end escape except exclude exclusive exists explain
	fetch filter first following for foreign from full generated glob group groups having if ignore immediate in
	index indexed initially inner insert instead intersect into is isnull join key last lateral leading left like
	limit match materialized natural no not nothing notnull null nulls of offset on only or order others outer
	over partition plan pragma preceding primary query raise range recursive references regexp reindex release
	rename replace restrict returning right rollback row rows savepoint select session_user set some table temp
	temporary then ties to trailing transaction trigger true false unbounded union unique update user using vacuum
	values view virtual when where window with without analyse any asymmetric both grant ilike interval limit
	localtime localtimestamp overlaps placing similar symmetric tablesample verbose freeze binary authorization
	concurrently div mod key keys schema schemas show use usage window`) {
		m[w] = true
	}
	return m
}()

// Quote returns name as an identifier of dialect d, quoted when it is not a
// plain lower-case identifier or is a reserved word: "order", "Line Items",
// "FirstName" in SQLite and PostgreSQL (PostgreSQL folds unquoted names to
// lower case), with backticks in MySQL. Quote characters inside the name are
// doubled.
func Quote(d text2sql.Dialect, name string) string {
	if plain(name) {
		return name
	}
	if d == text2sql.DialectMySQL {
		return "`" + strings.ReplaceAll(name, "`", "``") + "`"
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

func plain(name string) bool {
	if name == "" || reserved[name] {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c == '_' || (c >= 'a' && c <= 'z') || (i > 0 && c >= '0' && c <= '9') {
			continue
		}
		return false
	}
	return true
}

// QuoteTable returns t's name, schema-qualified when it has a schema, quoted
// for d.
func QuoteTable(d text2sql.Dialect, t *Table) string {
	if t.Schema == "" {
		return Quote(d, t.Name)
	}
	return Quote(d, t.Schema) + "." + Quote(d, t.Name)
}

// DDL renders tables as CREATE TABLE / CREATE VIEW statements for a prompt:
// every column with its type and NOT NULL, the primary key, foreign keys
// and comments (as SQL comments), every identifier quoted for the dialect.
// Views are shown with their columns, after a "-- view" line.
func (d *Database) DDL(tables []*Table) string {
	var b strings.Builder
	for i, t := range tables {
		if i > 0 {
			b.WriteString("\n")
		}
		d.writeTable(&b, t)
	}
	return b.String()
}

func (d *Database) writeTable(b *strings.Builder, t *Table) {
	dialect := cmp.Or(t.Dialect, d.Dialect)
	q := func(s string) string { return Quote(dialect, s) }
	list := func(cols []string) string {
		qs := make([]string, len(cols))
		for i, c := range cols {
			qs[i] = q(c)
		}
		return strings.Join(qs, ", ")
	}
	refName := func(fk ForeignKey) string {
		if fk.RefSchema != "" && fk.RefSchema != t.Schema {
			return q(fk.RefSchema) + "." + q(fk.RefTable)
		}
		return q(fk.RefTable)
	}
	if t.Comment != "" {
		b.WriteString("-- " + oneLine(t.Comment) + "\n")
	}
	// Inferred keys are comments before the statement, so that a reader
	// splitting the DDL by statement keeps them with their table.
	for _, fk := range t.ForeignKeys {
		if fk.Inferred {
			b.WriteString("-- inferred join, not declared: " + QuoteTable(dialect, t) + "." + list(fk.Columns) + " = " + refName(fk) + "." + list(fk.RefColumns) + "\n")
		}
	}
	kw := "TABLE"
	if t.Kind != KindTable && t.Kind != "" {
		b.WriteString("-- " + string(t.Kind) + "\n")
		kw = "VIEW"
		if t.Kind == KindMaterializedView {
			kw = "MATERIALIZED VIEW"
		}
	}
	b.WriteString("CREATE " + kw + " " + QuoteTable(dialect, t) + " (\n")
	var lines []string
	for _, c := range t.Columns {
		l := "  " + q(c.Name)
		if c.Type != "" {
			l += " " + c.Type
		}
		if c.NotNull {
			l += " NOT NULL"
		}
		if c.Comment != "" {
			l += " -- " + oneLine(c.Comment)
		}
		lines = append(lines, l)
	}
	if len(t.PrimaryKey) > 0 {
		lines = append(lines, "  PRIMARY KEY ("+list(t.PrimaryKey)+")")
	}
	for _, fk := range t.ForeignKeys {
		if fk.Inferred {
			continue // written before CREATE, with the table's comment
		}
		l := "  FOREIGN KEY (" + list(fk.Columns) + ") REFERENCES " + refName(fk)
		if len(fk.RefColumns) > 0 {
			l += " (" + list(fk.RefColumns) + ")"
		}
		lines = append(lines, l)
	}
	// A comment must not swallow the comma that separates definitions.
	for i, l := range lines {
		if i < len(lines)-1 {
			if j := strings.Index(l, " -- "); j >= 0 {
				l = l[:j] + "," + l[j:]
			} else {
				l += ","
			}
		}
		b.WriteString(l + "\n")
	}
	b.WriteString(");\n")
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
