// Package schema is the schema model — tables, views, columns, types, keys,
// comments — with introspection per dialect and rendering of a subset as DDL
// for a prompt. The schema model, not a vector store, is the source of truth
// for what a prompt shows.
package schema

import (
	"strings"

	text2sql "github.com/text2sql-go/text2sql"
)

// Database is the schema of one database.
type Database struct {
	Name    string
	Dialect text2sql.Dialect
	Tables  []*Table // in introspection order (sorted by schema, then name)
}

// Table is a table or view.
type Table struct {
	// Schema is the namespace ("public", "sales"); empty for SQLite main.
	Schema      string
	Name        string
	Kind        TableKind
	Columns     []Column
	PrimaryKey  []string // column names, in key order
	ForeignKeys []ForeignKey
	Comment     string // COMMENT ON text, where the engine has one
	// Dialect is the dialect of the database holding the table when it
	// is not the schema's (a catalog of databases of several dialects,
	// executor/catalog); "" means Database.Dialect. DDL quotes the
	// table's names for it.
	Dialect text2sql.Dialect
}

// TableKind says what sort of relation a Table is.
type TableKind string

// The table kinds.
// AuditTable is the table the service appends its audit log to
// (server.NewPostgresAuditor's default name). It is the service's own,
// never data a question is about: InspectPostgres leaves it out, so a log
// kept in the data's database is not shown to the model.
const AuditTable = "text2sql_audit"

const (
	KindTable            TableKind = "table"
	KindView             TableKind = "view"
	KindMaterializedView TableKind = "materialized view"
)

// Column is one column of a table or view.
type Column struct {
	Name    string
	Type    string // as declared; may be empty in SQLite
	NotNull bool
	Comment string
}

// ForeignKey is a reference from Columns of a table to RefColumns of RefTable.
type ForeignKey struct {
	Columns    []string
	RefSchema  string
	RefTable   string
	RefColumns []string // may be empty in SQLite: the referenced primary key
	// Inferred marks a key the schema does not declare, implied by column
	// names (InferForeignKeys). DDL shows it as a comment, never as a
	// constraint.
	Inferred bool
}

// QualifiedName is the table's name as a query would write it without
// quoting: "schema.name" when Schema is set, else "name".
func (t *Table) QualifiedName() string {
	if t.Schema == "" {
		return t.Name
	}
	return t.Schema + "." + t.Name
}

// Column returns the column named name (exact match first, then
// case-insensitive), or nil.
func (t *Table) Column(name string) *Column {
	for i := range t.Columns {
		if t.Columns[i].Name == name {
			return &t.Columns[i]
		}
	}
	for i := range t.Columns {
		if strings.EqualFold(t.Columns[i].Name, name) {
			return &t.Columns[i]
		}
	}
	return nil
}

// Lookup finds a table by "name" or "schema.name": an exact match first,
// then a case-insensitive one. An unqualified name matches a table in any
// schema only when exactly one table has that name. It returns nil when no
// table matches.
func (d *Database) Lookup(name string) *Table { return lookup(d.Tables, name) }

// Index finds tables by name as Lookup does, in constant time on average:
// for callers that look up many names (building a retrieval index over
// thousands of tables). It holds d.Tables as they are when Index is
// called. Names are grouped by their lower-case form, so two names that
// only Unicode case folding equates, not lower-casing (rare letters such
// as the Kelvin sign), are not found as the same.
type Index struct {
	byName map[string][]*Table // lower-case table name → tables
}

// Index returns an index of d's tables.
func (d *Database) Index() *Index {
	x := &Index{byName: make(map[string][]*Table, len(d.Tables))}
	for _, t := range d.Tables {
		k := strings.ToLower(t.Name)
		x.byName[k] = append(x.byName[k], t)
	}
	return x
}

// Lookup is Database.Lookup over the indexed tables.
func (x *Index) Lookup(name string) *Table {
	base := name[strings.LastIndexByte(name, '.')+1:]
	return lookup(x.byName[strings.ToLower(base)], name)
}

// lookup is Lookup over tables.
func lookup(tables []*Table, name string) *Table {
	sch, base := "", name
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		sch, base = name[:i], name[i+1:]
	}
	for _, eq := range []func(a, b string) bool{func(a, b string) bool { return a == b }, strings.EqualFold} {
		var found *Table
		n := 0
		for _, t := range tables {
			if !eq(t.Name, base) {
				continue
			}
			if sch != "" && !eq(t.Schema, sch) {
				continue
			}
			found = t
			n++
		}
		if n == 1 || (n > 1 && sch != "") {
			return found
		}
	}
	return nil
}
