package knowledge

import (
	"cmp"
	"strings"
	"unicode"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/sqlparse"
	"github.com/text2sql-go/text2sql/schema"
)

// Documents chunks the base into the documents a retriever indexes, in this
// order, each kind in a deterministic order:
//
//   - one "table" document per table and view of db, in schema order: its
//     name and the name split into words, the note's description (else the
//     table comment), synonyms, joins, questions, the tables it references
//     and is referenced by (foreign keys), and its columns (names split into
//     words). A table without a note still gets one, so a search by name or
//     column finds it;
//   - one "column" document per column note, in note order: table, column,
//     type, description, units and range;
//   - one "rule" document per rule, in order: its text and tables;
//   - one "example" document per example, in order: Text is the question
//     only, the SQL is in Document.SQL and the tables it reads in Tables;
//   - one "value" document per value list, in order: table, column and its
//     values, each written as an SQL string literal. Values are data to
//     match literals in questions, never instructions.
//
// With a schema, table and column names are the schema's (so IDs are the
// same however a note spells them), and notes, rules' tables and value
// lists about tables or columns db does not have are left out (Validate
// reports them). With a nil db, one table document is made per table note
// and names are used as written. When two items would share an ID, the
// first wins. A nil base gives the table documents of db alone.
func (b *Base) Documents(db *schema.Database) []Document {
	if b == nil {
		b = &Base{}
	}
	d := &chunker{db: db, seen: map[string]bool{}}
	d.tables(b.Tables)
	d.columns(b.Columns)
	d.rules(b.Rules)
	d.examples(b.Examples)
	d.values(b.Values)
	return d.docs
}

// chunker collects the documents of Documents.
type chunker struct {
	db   *schema.Database // nil: names as written
	docs []Document
	seen map[string]bool // IDs added
}

// add appends d unless a document of its ID was added first.
func (c *chunker) add(d Document) {
	if c.seen[d.ID] {
		return
	}
	c.seen[d.ID] = true
	if d.Kind != text2sql.ItemTable {
		d.Note = d.Text
	}
	c.docs = append(c.docs, d)
}

// resolve maps a table name to the schema's; ok is false when the schema
// has no such table.
func (c *chunker) resolve(name string) (*schema.Table, string, bool) {
	if c.db == nil {
		return nil, name, name != ""
	}
	t := c.db.Lookup(name)
	if t == nil {
		return nil, "", false
	}
	return t, t.QualifiedName(), true
}

// tables adds the table documents: one per schema table with its note,
// or one per note without a schema.
func (c *chunker) tables(notes []TableNote) {
	byName := map[string]*TableNote{}
	for i := range notes {
		n := &notes[i]
		if _, name, ok := c.resolve(n.Table); ok {
			key := strings.ToLower(name)
			if byName[key] == nil {
				byName[key] = n
			}
		}
	}
	if c.db == nil {
		for i := range notes {
			if n := &notes[i]; n.Table != "" {
				c.add(tableDocument(nil, n.Table, n, nil))
			}
		}
		return
	}
	back := referencedBy(c.db)
	for _, t := range c.db.Tables {
		c.add(tableDocument(t, t.QualifiedName(), byName[strings.ToLower(t.QualifiedName())], back[tableKey(t.Schema, t.Name)]))
	}
}

// columns adds a document per column note.
func (c *chunker) columns(notes []ColumnNote) {
	for _, n := range notes {
		t, tname, ok := c.resolve(n.Table)
		if !ok || n.Column == "" {
			continue
		}
		cname, ctype := n.Column, ""
		if t != nil {
			col := t.Column(n.Column)
			if col == nil {
				continue
			}
			cname, ctype = col.Name, col.Type
		}
		var s strings.Builder
		s.WriteString("Column " + tname + "." + cname)
		if w := words(cname); w != strings.ToLower(cname) {
			s.WriteString(" (" + w + ")")
		}
		s.WriteString(" of table " + tname)
		if ctype != "" {
			s.WriteString(", type " + ctype)
		}
		s.WriteString(".")
		sentence(&s, "", n.Description)
		sentence(&s, "Units: ", n.Units)
		sentence(&s, "Range: ", n.Range)
		c.add(Document{ID: "column:" + tname + "." + cname, Kind: text2sql.ItemColumn, Text: s.String(), Table: tname, Column: cname})
	}
}

// rules adds a document per rule.
func (c *chunker) rules(rules []Rule) {
	for _, r := range rules {
		id := r.ID
		if id == "" {
			id = AutoID("rule", r.Text)
		}
		var tables []string
		for _, tn := range r.Tables {
			if _, name, ok := c.resolve(tn); ok {
				tables = appendUnique(tables, name)
			}
		}
		text := collapse(r.Text)
		if len(tables) > 0 {
			text += "\nTables: " + strings.Join(tables, ", ") + "."
		}
		c.add(Document{ID: "rule:" + id, Kind: text2sql.ItemRule, Text: text, Tables: tables})
	}
}

// examples adds a document per example: only the question is indexed.
func (c *chunker) examples(examples []Example) {
	for _, ex := range examples {
		id := ex.ID
		if id == "" {
			id = AutoID("ex", ex.Question)
		}
		var tables []string
		if c.db != nil {
			for _, ref := range sqlparse.Tables(sqlparse.Parse(ex.SQL, c.db.Dialect)) {
				if _, canon, ok := c.resolve(ref.QualifiedName()); ok {
					tables = appendUnique(tables, canon)
				}
			}
		}
		c.add(Document{ID: "example:" + id, Kind: text2sql.ItemExample, Text: collapse(ex.Question), SQL: ex.SQL, Tables: tables})
	}
}

// values adds a document per value list.
func (c *chunker) values(lists []ValueList) {
	for _, v := range lists {
		t, tname, ok := c.resolve(v.Table)
		if !ok || v.Column == "" || len(v.Values) == 0 {
			continue
		}
		cname := v.Column
		if t != nil {
			col := t.Column(v.Column)
			if col == nil {
				continue
			}
			cname = col.Name
		}
		var s strings.Builder
		s.WriteString("Values of " + tname + "." + cname)
		if w := words(cname); w != strings.ToLower(cname) {
			s.WriteString(" (" + w + ")")
		}
		s.WriteString(": ")
		for i, val := range v.Values {
			if i > 0 {
				s.WriteString(", ")
			}
			s.WriteString(Literal(val))
		}
		s.WriteString(".")
		c.add(Document{ID: "value:" + tname + "." + cname, Kind: text2sql.ItemValue, Text: s.String(), Table: tname, Column: cname})
	}
}

// tableKey is the key of referencedBy: a table's namespace and name,
// lower-cased.
func tableKey(namespace, name string) string {
	return strings.ToLower(namespace) + "\x00" + strings.ToLower(name)
}

// referencedBy returns, by tableKey, the tables whose foreign keys
// reference each table, as "orders (by customer_id)", in schema order:
// built once, so a schema of n tables costs O(n), not O(n²).
func referencedBy(db *schema.Database) map[string][]string {
	out := map[string][]string{}
	for _, o := range db.Tables {
		for _, fk := range o.ForeignKeys {
			k := tableKey(cmp.Or(fk.RefSchema, o.Schema), fk.RefTable)
			out[k] = appendUnique(out[k], o.QualifiedName()+" (by "+strings.Join(fk.Columns, ", ")+")")
		}
	}
	return out
}

// tableDocument renders the document of one table; t is nil without a
// schema, n is nil for a table without a note, back lists the tables
// referencing it (referencedBy).
func tableDocument(t *schema.Table, name string, n *TableNote, back []string) Document {
	var s strings.Builder
	kind := "Table"
	if t != nil && t.Kind != "" && t.Kind != schema.KindTable {
		kind = "View"
		if t.Kind == schema.KindMaterializedView {
			kind = "Materialized view"
		}
	}
	s.WriteString(kind + " " + name)
	base := name
	if t != nil {
		base = t.Name
	}
	if w := words(base); w != strings.ToLower(base) {
		s.WriteString(" (" + w + ")")
	}
	s.WriteString(".")
	head := s.Len()
	if n != nil {
		sentence(&s, "", n.Description)
		list(&s, "Also called: ", n.Synonyms, ", ")
		list(&s, "Joins: ", n.Joins, "; ")
		list(&s, "Answers questions such as: ", n.Questions, " ")
	}
	// The note is what the DDL does not say: the schema's own comment and
	// what follows (keys, columns) are in the DDL a prompt shows.
	note := ""
	if s.Len() > head || t == nil {
		note = s.String()
	}
	if (n == nil || strings.TrimSpace(n.Description) == "") && t != nil {
		sentence(&s, "", t.Comment)
	}
	if t != nil {
		var refs []string
		for _, fk := range t.ForeignKeys {
			ref := fk.RefTable
			if fk.RefSchema != "" && fk.RefSchema != t.Schema {
				ref = fk.RefSchema + "." + ref
			}
			refs = appendUnique(refs, ref+" (by "+strings.Join(fk.Columns, ", ")+")")
		}
		list(&s, "References: ", refs, ", ")
		list(&s, "Referenced by: ", back, ", ")
		cols := make([]string, len(t.Columns))
		for i, c := range t.Columns {
			cols[i] = c.Name
			if w := words(c.Name); w != strings.ToLower(c.Name) {
				cols[i] += " (" + w + ")"
			}
		}
		list(&s, "Columns: ", cols, ", ")
	}
	return Document{ID: "table:" + name, Kind: text2sql.ItemTable, Text: s.String(), Note: note, Table: name}
}

// sentence appends "\n" + prefix + text, ending with a full stop, when text
// is not blank.
func sentence(s *strings.Builder, prefix, text string) {
	text = collapse(text)
	if text == "" {
		return
	}
	s.WriteString("\n" + prefix + text)
	if !strings.HasSuffix(text, ".") && !strings.HasSuffix(text, "?") && !strings.HasSuffix(text, "!") {
		s.WriteString(".")
	}
}

// list appends a sentence made of the non-blank items joined by sep.
func list(s *strings.Builder, prefix string, items []string, sep string) {
	var keep []string
	for _, it := range items {
		if it = collapse(it); it != "" {
			keep = append(keep, it)
		}
	}
	if len(keep) > 0 {
		sentence(s, prefix, strings.Join(keep, sep))
	}
}

func appendUnique(list []string, s string) []string {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return list
		}
	}
	return append(list, s)
}

// words splits an identifier into lower-case words: snake_case, camelCase,
// PascalCase, dotted.names, kebab-case and digit runs. "Song_release_year"
// gives "song release year", "HTTPServerID" gives "http server id".
func words(ident string) string {
	rs := []rune(ident)
	var (
		out []string
		cur []rune
	)
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush()
			continue
		}
		if len(cur) > 0 {
			prev := cur[len(cur)-1]
			switch {
			case unicode.IsUpper(r) && unicode.IsLower(prev),
				unicode.IsDigit(r) != unicode.IsDigit(prev):
				flush()
			case unicode.IsUpper(r) && unicode.IsUpper(prev) && i+1 < len(rs) && unicode.IsLower(rs[i+1]):
				flush() // "HTTPServer": the S starts a new word
			}
		}
		cur = append(cur, r)
	}
	flush()
	return strings.Join(out, " ")
}

// Literal writes a value as an SQL string literal: in single quotes, quotes
// doubled, control characters (line breaks, tabs…) replaced by spaces so a
// value stays on one line. It is how values are shown to a model: as data.
func Literal(v string) string {
	v = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, v)
	return "'" + strings.ReplaceAll(v, "'", "''") + "'"
}
