package postgres

import (
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/executor/internal/execkit"
	"github.com/text2sql-go/text2sql/internal/sqltext"
	"github.com/text2sql-go/text2sql/schema"
)

// scope is what a Guard knows of the session its statements run in: the
// search path the executor pins (SET LOCAL search_path) and the
// relations the host exposed. A Guard without a scope (NewGuard alone,
// for checks without a server) takes every schema for one on the path
// and leaves relations to the server.
type scope struct {
	path    []string
	exposed map[string]*schema.Table // "schema\x00name"
	db      *schema.Database
}

// Scoped returns a copy of the Guard that decides, besides what the Guard
// decides, on the terms of a session whose search_path is searchPath
// (pg_catalog first, as PostgreSQL does) and which may read only the
// relations of db:
//
//   - a name that may resolve to an untrusted function or operator, or a
//     tainted type, is refused only when it is on searchPath (or
//     pg_catalog);
//   - every relation the statement reads (a WITH query's name excepted,
//     by PostgreSQL's scoping rules) must be one of db's tables or views:
//     a relation written with a schema must be exactly that (else
//     KindForbiddenTable), and one written without is looked up along
//     searchPath (else KindUnknownTable, SQLSTATE 42P01); both with the
//     hints of a 42P01 error;
//   - Prepare returns the statement with each relation qualified with its
//     schema, so the server reads exactly the relation the check decided
//     on, whatever its own search path holds.
//
// The session that runs the prepared text must set search_path to
// searchPath (Executor and Function do).
func (c *Guard) Scoped(searchPath []string, db *schema.Database) *Guard {
	s := &scope{path: slices.Clone(searchPath), exposed: map[string]*schema.Table{}, db: db}
	if db != nil {
		for _, t := range db.Tables {
			s.exposed[t.Schema+"\x00"+t.Name] = t
		}
	}
	g := *c
	g.scope = s
	g.passed = execkit.NewPassed[checked]() // the scope changes what the check gives
	return &g
}

// SearchPath returns the search path the Guard decides names on (see
// Scoped), nil when it is not scoped.
func (c *Guard) SearchPath() []string {
	if c.scope == nil {
		return nil
	}
	return slices.Clone(c.scope.path)
}

// onPath reports whether names in schema s resolve without qualification.
func (c *Guard) onPath(s string) bool {
	return c.scope == nil || s == "pg_catalog" || slices.Contains(c.scope.path, s)
}

// Prepare checks query (see Guard and Scoped) and returns the text to
// send: the statement up to its last token, with every relation
// qualified with its schema when the Guard is scoped. A refusal is the
// *text2sql.SQLError.
func (c *Guard) Prepare(query string) (string, *text2sql.SQLError) {
	ch, se := c.prepare(query)
	return ch.text, se
}

// relationRef is a relation a statement reads, resolved: where its name
// starts in the text, and the schema to qualify it with ("" when it was
// written qualified).
type relationRef struct {
	pos    int
	schema string
	table  *schema.Table
	alias  string
	// renamed says an alias renames its columns (t AS a(x, y)).
	renamed bool
}

// relations resolves every relation the statement top reads that is not
// a WITH query, as PostgreSQL scopes them: a WITH query's name is
// visible in the query that owns the WITH clause (all of it, set
// operations and sublinks included) and in the WITH queries after it —
// in every one of them, itself included, when the clause is RECURSIVE.
func (c *Guard) relations(top protoreflect.Message, res *resolution) *text2sql.SQLError {
	var found *text2sql.SQLError
	var visit func(m protoreflect.Message, ctes []string)
	visit = func(m protoreflect.Message, ctes []string) {
		if found != nil {
			return
		}
		switch n := m.Interface().(type) {
		case *pg_query.SelectStmt:
			if wc := n.GetWithClause(); wc != nil {
				names := make([]string, 0, len(wc.Ctes))
				for _, node := range wc.Ctes {
					names = append(names, node.GetCommonTableExpr().GetCtename())
				}
				for i, node := range wc.Ctes {
					seen := names[:i]
					if wc.Recursive {
						seen = names
					}
					if q := node.GetCommonTableExpr().GetCtequery(); q != nil {
						visit(q.ProtoReflect(), append(slices.Clone(ctes), seen...))
					}
				}
				ctes = append(slices.Clone(ctes), names...)
			}
		case *pg_query.WithClause:
			return // visited with its query
		case *pg_query.RangeVar:
			if n.Schemaname == "" && n.Catalogname == "" && slices.Contains(ctes, n.Relname) {
				return
			}
			found = c.relation(n, res)
			return
		}
		children(m, func(child protoreflect.Message) { visit(child, ctes) })
	}
	visit(top, nil)
	return found
}

// nodeOneof is the oneof of a parse-tree Node: one of its hundreds of
// fields is set, found without testing each.
// Looked up on first use: the look-up builds the descriptors of the
// whole parse-tree protocol (about 1 MB), which a program that never
// checks a PostgreSQL statement need not pay for at start-up.
var nodeOneof = sync.OnceValue(func() protoreflect.OneofDescriptor {
	return (&pg_query.Node{}).ProtoReflect().Descriptor().Oneofs().ByName("node")
})

// children calls f on each message directly below m, in field order.
func children(m protoreflect.Message, f func(protoreflect.Message)) {
	if node := nodeOneof(); m.Descriptor() == node.Parent() {
		if fd := m.WhichOneof(node); fd != nil {
			f(m.Get(fd).Message())
		}
		return
	}
	fds := m.Descriptor().Fields()
	for i := 0; i < fds.Len(); i++ {
		fd := fds.Get(i)
		if fd.Message() == nil || fd.IsMap() || !m.Has(fd) {
			continue
		}
		v := m.Get(fd)
		if !fd.IsList() {
			f(v.Message())
			continue
		}
		for l, j := v.List(), 0; j < l.Len(); j++ {
			f(l.Get(j).Message())
		}
	}
}

// relation resolves one relation reference against the exposed tables.
func (c *Guard) relation(rv *pg_query.RangeVar, res *resolution) *text2sql.SQLError {
	if c.scope == nil {
		return nil
	}
	s := c.scope
	ref := relationRef{pos: int(rv.Location)}
	if rv.Alias != nil {
		ref.alias = rv.Alias.Aliasname
	}
	if rv.Schemaname != "" {
		ref.table = s.exposed[rv.Schemaname+"\x00"+rv.Relname]
		if ref.table == nil && rv.Catalogname == "" {
			return &text2sql.SQLError{Kind: text2sql.KindForbiddenTable,
				Message: "relation " + relationName(rv) + " is not one of the relations this executor exposes",
				Hint:    tableHint(s.db, s.path, relationName(rv), "")}
		}
	} else {
		for _, sch := range s.path {
			if t := s.exposed[sch+"\x00"+rv.Relname]; t != nil {
				ref.table, ref.schema = t, sch
				break
			}
		}
	}
	if ref.table == nil || rv.Catalogname != "" {
		return &text2sql.SQLError{Kind: text2sql.KindUnknownTable, SQLState: "42P01",
			Message: "relation " + strconv.Quote(relationName(rv)) + " does not exist among the exposed relations",
			Hint:    tableHint(s.db, s.path, relationName(rv), "")}
	}
	if c.cat.trust.relations[ref.table.Schema+"."+ref.table.Name] {
		return &text2sql.SQLError{Kind: text2sql.KindForbiddenTable,
			Message: "relation " + schema.QuoteTable(text2sql.DialectPostgres, ref.table) + " has an index, statistics or generated-column expression that calls this database's own code, which the server runs for any query on it",
			Hint:    "query other relations"}
	}
	if se := c.badViews[ref.table.Schema+"."+ref.table.Name]; se != nil {
		return &text2sql.SQLError{Kind: text2sql.KindForbiddenTable,
			Message: "view " + schema.QuoteTable(text2sql.DialectPostgres, ref.table) + " runs what a statement may not: " + se.Message,
			Hint:    "query other relations"}
	}
	ref.renamed = rv.Alias != nil && len(rv.Alias.Colnames) > 0
	res.relations = append(res.relations, ref)
	return nil
}

// taintedColumns refuses a statement that may read a column of a tainted
// type (see Guard) of a relation it reads — by name, through *, a NATURAL
// join or an alias that renames the columns — or, when the relation's row
// type is tainted (by its columns or by code hung on the row type itself),
// its whole row.
func (c *Guard) taintedColumns(res *resolution) *text2sql.SQLError {
	for _, r := range res.relations {
		bad := c.cat.trust.columns[r.table.Schema+"."+r.table.Name]
		if len(bad) == 0 && !c.rowTainted(r.table) {
			continue
		}
		why := ""
		switch {
		case res.fields[r.table.Name] || r.alias != "" && res.fields[r.alias]:
			why = "may read its whole row"
		case len(bad) == 0:
		case res.wholeRow:
			why = "reads all its columns (*, NATURAL JOIN)"
		case r.renamed:
			why = "renames its columns"
		default:
			for _, col := range bad {
				if res.fields[col] {
					why = "reads column " + strconv.Quote(col)
				}
			}
		}
		if why != "" {
			return &text2sql.SQLError{Kind: text2sql.KindForbiddenFunction,
				Message: "the statement " + why + " of " + schema.QuoteTable(text2sql.DialectPostgres, r.table) +
					", whose row type or columns (" + strings.Join(bad, ", ") + ") this database attaches its own code to (a domain CHECK, a cast, an operator, an operator class or I/O function), which the statement check cannot see",
				Hint: "leave out those columns and the whole row"}
		}
	}
	return nil
}

// rowTainted reports whether the row type of relation t is tainted.
func (c *Guard) rowTainted(t *schema.Table) bool {
	for _, e := range c.cat.trust.types[t.Name] {
		if e.schema == t.Schema {
			return e.tainted
		}
	}
	return false
}

// text returns the statement to send: query up to the end of its last
// token by PostgreSQL's scanner (the whole text when it could not scan
// it), with the relations resolved without a schema qualified with
// theirs.
func (r resolution) text(query string) string {
	end := r.end
	if end <= 0 || end > len(query) {
		return sqltext.StripTrailing(query)
	}
	refs := slices.Clone(r.relations)
	sort.Slice(refs, func(i, j int) bool { return refs[i].pos < refs[j].pos })
	var b strings.Builder
	at := 0
	for _, ref := range refs {
		if ref.schema == "" || ref.pos < at || ref.pos > end {
			continue
		}
		b.WriteString(query[at:ref.pos])
		b.WriteString(pgx.Identifier{ref.schema}.Sanitize())
		b.WriteByte('.')
		at = ref.pos
	}
	b.WriteString(query[at:end])
	return strings.TrimSpace(b.String())
}
