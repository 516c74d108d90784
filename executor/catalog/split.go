package catalog

import (
	"maps"
	"slices"
	"sort"
	"strings"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/sqlparse"
	"github.com/text2sql-go/text2sql/internal/sqltext"
	"github.com/text2sql-go/text2sql/internal/stagekit"
	"github.com/text2sql-go/text2sql/schema"
)

// program is a statement split by database: steps to run on members and,
// for a query across databases, the final statement over their rows.
type program struct {
	steps []step
	// final is the statement run on the merge database, reading the
	// steps' rows as tables named after their CTEs; "" when the one step
	// is the whole statement.
	final string
	// reads: the statement names a table of the catalog.
	reads bool
}

// step is a statement for one member.
type step struct {
	db      int
	name    string   // the CTE whose rows it gives; "" for a whole statement
	columns []string // the CTE's column list, if written
	sql     string   // as the member knows its tables
	raw     string   // the same before its names were written back
}

// edit replaces source bytes [pos, end) with text.
type edit struct {
	pos, end int
	text     string
}

// segment is what one part of a statement reads: a top-level CTE, or the
// rest of the statement.
type segment struct {
	dbs   map[int]bool
	ctes  map[string]bool // top-level CTEs it reads, lower case
	edits []edit
}

func newSegment() *segment { return &segment{dbs: map[int]bool{}, ctes: map[string]bool{}} }

// split splits sql into a program, or says why it cannot be run.
//
// In a catalog of several dialects a statement is read by each member
// dialect's lexical rules in turn: one that, so read, reads tables of
// databases of that dialect only, one database, runs there as read. Any
// other is read as SQLite reads it (the final statement of a merge runs
// there), and each step for a member of another dialect is read again by
// that dialect's rules, its names written back from that reading.
func (c *Catalog) split(sql string) (*program, *text2sql.SQLError) {
	src := strings.TrimSpace(sql)
	if !c.mixed {
		return c.splitAs(src, c.schema.Dialect)
	}
	tried := map[text2sql.Dialect]bool{c.schema.Dialect: true}
	for _, m := range c.dbs {
		d := m.Executor.Schema().Dialect
		if tried[d] {
			continue
		}
		tried[d] = true
		if p, se := c.splitAs(src, d); se == nil && p.final == "" && p.reads && c.dialectOf(p.steps[0].db) == d {
			return p, nil
		}
	}
	p, se := c.splitAs(src, c.schema.Dialect)
	if se != nil {
		return p, se
	}
	for i, st := range p.steps {
		d := c.dialectOf(st.db)
		if d == c.schema.Dialect {
			continue
		}
		again, se := c.splitAs(st.raw, d)
		if se != nil {
			return nil, se
		}
		if again.final != "" || again.steps[0].db != st.db {
			return nil, &text2sql.SQLError{Kind: text2sql.KindCrossDatabase, Hint: c.Rule(),
				Message: "read by " + stagekit.DialectName(d) + "'s rules, the part for " + c.dbs[st.db].Name + " reads other databases"}
		}
		p.steps[i].sql = again.steps[0].sql
	}
	return p, nil
}

// dialectOf is the dialect of member db.
func (c *Catalog) dialectOf(db int) text2sql.Dialect { return c.dbs[db].Executor.Schema().Dialect }

// splitAs is split with src read by dialect's lexical rules.
func (c *Catalog) splitAs(src string, dialect text2sql.Dialect) (*program, *text2sql.SQLError) {
	src = trimmed(src, dialect)
	sc := sqlparse.Parse(src, dialect)
	var q *sqlparse.Query
	if len(sc.Stmts) == 1 {
		q, _ = sc.Stmts[0].(*sqlparse.Query)
	}
	g := c.newSegmenter(sc, q)
	sqlparse.Inspect(sc, func(n sqlparse.Node) bool {
		switch v := n.(type) {
		case *sqlparse.TableName:
			g.name(v.Parts, true)
		case *sqlparse.ColumnRef:
			if len(v.Parts) >= 3 {
				g.name(v.Parts[:len(v.Parts)-1], false)
			}
		case *sqlparse.Star:
			if len(v.Table) >= 2 {
				g.name(v.Table, false)
			}
		}
		return true
	})
	if g.bad != nil {
		return nil, g.bad
	}
	all := map[int]bool{}
	for _, s := range g.segs {
		for db := range s.dbs {
			all[db] = true
		}
	}
	if len(all) <= 1 {
		db := 0
		for d := range all {
			db = d
		}
		var edits []edit
		for _, s := range g.segs {
			edits = append(edits, s.edits...)
		}
		return &program{steps: []step{{db: db, sql: apply(src, 0, len(src), edits), raw: src}}, reads: len(all) > 0}, nil
	}
	return c.across(src, sc.Tokens, q, g.top, g.segs)
}

// segmenter records the table names of a statement in segments: one per
// top-level CTE, the last one for the rest.
type segmenter struct {
	c       *Catalog
	top     []*sqlparse.CTE // the top-level CTEs
	segs    []*segment
	topName map[string]bool // lower-cased names of top
	// cteName holds the lower-cased names of the CTEs at any depth: any
	// may stand unqualified for a table.
	cteName map[string]bool
	bad     *text2sql.SQLError // the first name that cannot be resolved
}

// newSegmenter returns the segmenter of statements sc, whose one query
// (q, nil if none) may have top-level CTEs.
func (c *Catalog) newSegmenter(sc *sqlparse.Script, q *sqlparse.Query) *segmenter {
	g := &segmenter{c: c, topName: map[string]bool{}, cteName: map[string]bool{}}
	if q != nil && q.With != nil {
		g.top = q.With.CTEs
	}
	for _, cte := range g.top {
		if cte.Name != nil {
			g.topName[strings.ToLower(cte.Name.Name)] = true
		}
	}
	sqlparse.Inspect(sc, func(n sqlparse.Node) bool {
		if cte, ok := n.(*sqlparse.CTE); ok && cte.Name != nil {
			g.cteName[strings.ToLower(cte.Name.Name)] = true
		}
		return true
	})
	g.segs = make([]*segment, len(g.top)+1)
	for i := range g.segs {
		g.segs[i] = newSegment()
	}
	return g
}

// at returns the segment of source position pos.
func (g *segmenter) at(pos int) *segment {
	for i, cte := range g.top {
		if pos >= cte.Pos && pos < cte.End {
			return g.segs[i]
		}
	}
	return g.segs[len(g.top)]
}

// name resolves a table name's parts (table: of a table, not the
// qualifier of a column or star) and records it in its segment.
func (g *segmenter) name(parts []*sqlparse.Ident, table bool) {
	if len(parts) == 0 || g.bad != nil {
		return
	}
	seg := g.at(parts[0].Pos)
	if len(parts) > 1 {
		g.qualified(seg, parts)
		return
	}
	if !table {
		return // t.c: t is a table or an alias of this statement
	}
	key := strings.ToLower(parts[0].Name)
	if g.cteName[key] {
		if g.topName[key] {
			seg.ctes[key] = true
		}
		return
	}
	if o, ok := g.c.unqualified(parts[0].Name); ok {
		seg.dbs[o.db] = true
	} else if dbs := g.c.holders(parts[0].Name); len(dbs) > 1 {
		g.bad = &text2sql.SQLError{Kind: text2sql.KindUnknownTable,
			Message: "table " + parts[0].Name + " is in several databases",
			Hint:    "write one of " + strings.Join(dbs, ", ")}
	}
}

// qualified records a qualified catalog table name in seg, with the edit
// that writes it as its member database names it.
func (g *segmenter) qualified(seg *segment, parts []*sqlparse.Ident) {
	names := make([]string, len(parts))
	for i, p := range parts {
		names[i] = p.Name
	}
	t := g.c.index.Lookup(strings.Join(names, "."))
	if t == nil {
		return // not a catalog name: the database reports it
	}
	o := g.c.origin[t]
	seg.dbs[o.db] = true
	seg.edits = append(seg.edits, edit{parts[0].Pos, parts[len(parts)-1].End, schema.QuoteTable(g.c.dialectOf(o.db), o.table)})
}

// across is the program of a query that reads several databases.
func (c *Catalog) across(src string, toks []sqltext.Token, q *sqlparse.Query, top []*sqlparse.CTE, segs []*segment) (*program, *text2sql.SQLError) {
	refuse := func(msg string) *text2sql.SQLError {
		return &text2sql.SQLError{Kind: text2sql.KindCrossDatabase, Message: msg, Hint: c.Rule()}
	}
	if len(top) == 0 {
		return nil, refuse("the query reads tables of " + c.listOf(segs[0].dbs) + " outside a WITH clause")
	}
	rest := segs[len(top)]
	if len(rest.dbs) > 0 {
		return nil, refuse("the final SELECT reads tables of " + c.listOf(rest.dbs) + "; it may read only the CTEs")
	}
	// A step's rows become a table of the merge database named after its
	// CTE: two CTEs of one name (in any case) or a name SQLite reserves
	// cannot be one, and the engine would have refused the former anyway.
	named := map[string]bool{}
	for i, cte := range top {
		if cte.Name == nil {
			continue
		}
		key := strings.ToLower(cte.Name.Name)
		switch {
		case named[key]:
			return nil, refuse("two CTEs are named " + cte.Name.Name + "; give each CTE its own name")
		case len(segs[i].dbs) > 0 && strings.HasPrefix(key, "sqlite_"):
			return nil, refuse("CTE " + cte.Name.Name + ": a name beginning with sqlite_ is reserved; rename the CTE")
		}
		named[key] = true
	}
	p := &program{}
	var kept []string
	for i, cte := range top {
		s := segs[i]
		if len(s.dbs) == 0 {
			kept = append(kept, src[cte.Pos:cte.End])
			continue
		}
		nm := ""
		if cte.Name != nil {
			nm = cte.Name.Name
		}
		self := strings.ToLower(nm)
		delete(s.ctes, self)
		switch {
		case len(s.dbs) > 1:
			return nil, refuse("CTE " + nm + " reads tables of " + c.listOf(s.dbs) + "; a CTE may read one database")
		case len(s.ctes) > 0:
			return nil, refuse("CTE " + nm + " reads tables of " + c.listOf(s.dbs) + " and the CTEs " + strings.Join(slices.Sorted(maps.Keys(s.ctes)), ", ") + "; a CTE that reads a database reads no other CTE")
		case cte.Query == nil:
			return nil, refuse("CTE " + nm + " has no query")
		}
		// The query up to the CTE's ")": what this reading takes for a
		// comment before it may be code to the member.
		end := cte.Query.End
		if cte.To > cte.From && cte.To <= len(toks) {
			if t := toks[cte.To-1]; t.Kind == sqltext.Punct && t.Text == ")" && t.Pos >= end {
				end = t.Pos
			}
		}
		st := step{name: nm, sql: apply(src, cte.Query.Pos, end, s.edits), raw: src[cte.Query.Pos:end]}
		for db := range s.dbs {
			st.db = db
		}
		for _, col := range cte.Columns {
			st.columns = append(st.columns, col.Name)
		}
		if q.With.Recursive && readsItself(cte, self) {
			tail := " SELECT * FROM " + schema.Quote(c.dialectOf(st.db), nm)
			st.sql = "WITH RECURSIVE " + apply(src, cte.Pos, cte.End, s.edits) + tail
			st.raw = "WITH RECURSIVE " + src[cte.Pos:cte.End] + tail
		}
		p.steps = append(p.steps, st)
	}
	// The rest of the text, not only up to the query's last token as this
	// reading sees it: what follows it is trivia to this reading (src is
	// trimmed), maybe not to SQLite, whose guard decides.
	tail := strings.TrimSpace(src[q.With.End:])
	if len(kept) == 0 {
		p.final = tail
	} else {
		head := "WITH "
		if q.With.Recursive {
			head = "WITH RECURSIVE "
		}
		p.final = head + strings.Join(kept, ", ") + " " + tail
	}
	return p, nil
}

// trimmed returns src without the trailing white space, comments and
// semicolons that dialect's lexical rules read as such. The readings of
// sqlparse are PostgreSQL's for SQLite too, where block comments do not
// nest: a tail that SQLite would read otherwise is kept, for its guard.
func trimmed(src string, dialect text2sql.Dialect) string {
	var toks []sqltext.Token
	if dialect == text2sql.DialectMySQL {
		toks = sqltext.LexMySQL(src, sqltext.MySQLMode{})
	} else {
		toks = sqltext.Lex(src)
	}
	end := 0
	for _, t := range toks {
		if !t.Trivia() && !(t.Kind == sqltext.Punct && t.Text == ";") {
			end = t.Pos + len(t.Text)
		}
	}
	if dialect == text2sql.DialectSQLite && !sqliteTrivia(src[end:]) {
		return strings.TrimSpace(src)
	}
	return strings.TrimSpace(src[:end])
}

// sqliteTrivia reports whether s is only white space, semicolons and
// comments by SQLite's rules: "--" to the end of the line, "/*" to the
// first "*/" or the end of the text.
func sqliteTrivia(s string) bool {
	for i := 0; i < len(s); {
		switch {
		case s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r' || s[i] == '\f' || s[i] == ';':
			i++
		case strings.HasPrefix(s[i:], "--"):
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				return true
			}
			i += j
		case strings.HasPrefix(s[i:], "/*"):
			j := strings.Index(s[i+2:], "*/")
			if j < 0 {
				return true
			}
			i += 2 + j + 2
		default:
			return false
		}
	}
	return true
}

// readsItself reports whether a CTE's query reads the CTE (lower-case
// name self) unqualified: a recursive CTE.
func readsItself(cte *sqlparse.CTE, self string) bool {
	found := false
	sqlparse.Inspect(cte.Query, func(n sqlparse.Node) bool {
		if t, ok := n.(*sqlparse.TableName); ok && len(t.Parts) == 1 && strings.ToLower(t.Parts[0].Name) == self {
			found = true
		}
		return !found
	})
	return found
}

// apply returns src[from:to] with the edits inside it made.
func apply(src string, from, to int, edits []edit) string {
	sort.Slice(edits, func(i, j int) bool { return edits[i].pos < edits[j].pos })
	var b strings.Builder
	at := from
	for _, e := range edits {
		if e.pos < at || e.end > to {
			continue
		}
		b.WriteString(src[at:e.pos])
		b.WriteString(e.text)
		at = e.end
	}
	b.WriteString(src[at:to])
	return b.String()
}

// unqualified resolves an unqualified table name that exactly one member
// holds.
func (c *Catalog) unqualified(name string) (origin, bool) {
	if t := c.index.Lookup(name); t != nil {
		return c.origin[t], true
	}
	return origin{}, false
}

// holders returns the catalog names of the tables called name (any case)
// in every member.
func (c *Catalog) holders(name string) []string {
	var out []string
	for _, t := range c.schema.Tables {
		if strings.EqualFold(t.Name, name) {
			out = append(out, t.QualifiedName())
		}
	}
	return out
}

// listOf names the databases of set, sorted.
func (c *Catalog) listOf(set map[int]bool) string {
	names := map[string]bool{}
	for db := range set {
		names[c.dbs[db].Name] = true
	}
	return strings.Join(slices.Sorted(maps.Keys(names)), " and ")
}

// qualifySQL rewrites a member's statement (an example's SQL) with its
// tables named as in the catalog; a text that is not one query is kept.
func (c *Catalog) qualifySQL(member int, sql string) string {
	db := c.dbs[member].Executor.Schema()
	ix := db.Index()
	sc := sqlparse.Parse(sql, db.Dialect)
	if len(sc.Stmts) != 1 {
		return sql
	}
	ctes := map[string]bool{}
	sqlparse.Inspect(sc, func(n sqlparse.Node) bool {
		if cte, ok := n.(*sqlparse.CTE); ok && cte.Name != nil {
			ctes[strings.ToLower(cte.Name.Name)] = true
		}
		return true
	})
	var edits []edit
	sqlparse.Inspect(sc, func(n sqlparse.Node) bool {
		t, ok := n.(*sqlparse.TableName)
		if !ok || len(t.Parts) == 1 && ctes[strings.ToLower(t.Parts[0].Name)] {
			return true
		}
		names := make([]string, len(t.Parts))
		for i, p := range t.Parts {
			names[i] = p.Name
		}
		if mt := ix.Lookup(strings.Join(names, ".")); mt != nil {
			ct := c.qualify(member, mt)
			edits = append(edits, edit{t.Parts[0].Pos, t.Parts[len(t.Parts)-1].End, schema.QuoteTable(db.Dialect, ct)})
		}
		return true
	})
	return apply(sql, 0, len(sql), edits)
}
