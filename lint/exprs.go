package lint

import (
	"sort"
	"strings"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/sqlparse"
	"github.com/text2sql-go/text2sql/internal/sqltext"
	"github.com/text2sql-go/text2sql/schema"
)

// exprs checks the names in the expression tokens [a, b) against sc:
// the tree's expressions there (resolve), and, by their tokens, the text
// between them — keywords, and what the tree skipped. Subqueries are
// checked as queries with sc as their parent scope.
func (p *parser) exprs(a, b int, sc *scope, env *cteEnv) {
	// fns are the functions whose parentheses the scan is in ("" for
	// other parentheses), innermost last.
	var fns []string
	fn := func() string {
		if len(fns) == 0 {
			return ""
		}
		return fns[len(fns)-1]
	}
	for k := a; k < b; k++ {
		// A name the tree ended before a "." is read by its tokens.
		if x := p.exprAt[k]; x != nil && x.Extent().To <= b && !isError(x) && !p.punct(x.Extent().To, ".") {
			p.resolve(x, fn(), sc, env)
			k = x.Extent().To - 1
			continue
		}
		t := p.toks[k]
		switch {
		case p.punct(k, "("):
			if p.startsQuery(k + 1) {
				j := p.close(k, b)
				p.subquery(k+1, j, sc, env)
				k = j
				continue
			}
			f := ""
			if k > a && p.toks[k-1].Kind == sqltext.Word {
				f = strings.ToLower(p.toks[k-1].Text)
			}
			fns = append(fns, f)
		case p.punct(k, ")"):
			if len(fns) > 0 {
				fns = fns[:len(fns)-1]
			}
		case p.punct(k, "[") && p.tok(k+1).Kind == sqltext.Word:
			// [a b]: a name quoted as SQL Server does, which the dialect
			// check reports; its words name no column.
			j := k + 1
			for j < b && p.toks[j].Kind == sqltext.Word {
				j++
			}
			if p.punct(j, "]") {
				k = j
			}
		case t.Is("collate"):
			k++
		case t.Is("over") && !p.punct(k+1, "("):
			k++ // a window name
		case t.Is("at") && p.word(k+1, "time") && p.word(k+2, "zone"):
			k += 2
		case fn() == "against":
			// MATCH (…) AGAINST ('text' IN NATURAL LANGUAGE MODE): modifiers
		default:
			if _, ok := p.ident(t); ok {
				k = p.reference(k, b, fn(), sc, env) - 1
			}
		}
	}
}

// resolve checks the names in the tree node x against sc. fn is the
// function x is a direct argument of (lower case; "" if none), for the
// date-part units of unitContext.
func (p *parser) resolve(x sqlparse.Node, fn string, sc *scope, env *cteEnv) {
	switch v := x.(type) {
	case *sqlparse.Ident:
		p.idRef(v.Span, []*sqlparse.Ident{v}, fn, sc, env)
	case *sqlparse.ColumnRef:
		p.idRef(v.Span, v.Parts, fn, sc, env)
	case *sqlparse.Star:
		if v.Table != nil && !p.punct(v.From-1, ".") {
			var parts []string
			for _, id := range v.Table {
				n, ok := p.name(id)
				if !ok {
					return
				}
				parts = append(parts, n)
			}
			p.resolveParts(v.From, p.toks[v.From], append(parts, "*"), sc, env)
		}
	case *sqlparse.Call:
		name := strings.ToLower(v.Name[len(v.Name)-1].Name)
		args := v.Args
		switch {
		case name == "convert" && len(args) > 1:
			args = args[:1] // CONVERT(x, type), CONVERT(x USING charset)
		case name == "against":
			args = nil // MATCH (…) AGAINST ('text' IN … MODE)
		}
		cs := make([]sqlparse.Node, len(args))
		for i, a := range args {
			cs[i] = a
		}
		p.resolveAll(v, cs, name, sc, env)
		for _, t := range v.OrderBy {
			p.resolve(t.Expr, "", sc, env)
		}
		if v.Filter != nil {
			p.resolve(v.Filter, "", sc, env)
		}
		if v.Over != nil {
			p.resolve(v.Over, "", sc, env)
		}
	case *sqlparse.WindowSpec:
		for _, e := range v.PartitionBy {
			p.resolve(e, "", sc, env)
		}
		for _, t := range v.OrderBy {
			p.resolve(t.Expr, "", sc, env)
		}
	case *sqlparse.Cast:
		p.resolve(v.X, "", sc, env)
	case *sqlparse.Collate:
		p.resolve(v.X, fn, sc, env)
	case *sqlparse.Interval:
		if _, ok := v.Value.(*sqlparse.Ident); !ok { // INTERVAL n DAY: n is a unit's count
			p.resolve(v.Value, "", sc, env)
		}
	case *sqlparse.Query:
		p.subqueryNode(v, sc, env)
	case *sqlparse.Error:
		p.exprs(v.From, v.To, sc, env) // by its tokens
	default:
		p.resolveAll(x, sqlparse.Children(x), "", sc, env)
	}
}

// resolveAll resolves the children cs of x in source order, with the
// text the tree skipped inside x (as its tokens); fn is as for resolve.
func (p *parser) resolveAll(x sqlparse.Node, cs []sqlparse.Node, fn string, sc *scope, env *cteEnv) {
	e := x.Extent()
	for _, o := range p.orphansIn(e.From, e.To) {
		inChild := false
		for _, c := range sqlparse.Children(x) {
			ce := c.Extent()
			_, query := c.(*sqlparse.Query)
			// Text skipped after a subquery, before its ")", is the
			// subquery's (see query).
			if o.From >= ce.From && (o.To <= ce.To || query) {
				inChild = true
			}
		}
		if !inChild {
			cs = append(cs, o)
		}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].Extent().From < cs[j].Extent().From })
	for _, c := range cs {
		p.resolve(c, fn, sc, env)
	}
}

func isError(x sqlparse.Node) bool {
	_, ok := x.(*sqlparse.Error)
	return ok
}

// orphansIn returns the orphans within tokens [from, to).
func (p *parser) orphansIn(from, to int) []*sqlparse.Error {
	i := sort.Search(len(p.orphans), func(i int) bool { return p.orphans[i].From >= from })
	j := i
	for j < len(p.orphans) && p.orphans[j].To <= to {
		j++
	}
	return p.orphans[i:j]
}

// subqueryNode checks the parenthesised query q of an expression.
func (p *parser) subqueryNode(q *sqlparse.Query, sc *scope, env *cteEnv) {
	if q == nil || !p.punct(q.From-1, "(") {
		return
	}
	p.query(q, p.close(q.From-1, len(p.toks)), sc, env)
}

// nameRef resolves the (qualified) name parts written in tokens [k,
// end), unless it is a function, a named argument, a typed literal, a
// date-part unit (fn is the function it is an argument of) or a charset
// name.
func (p *parser) nameRef(k, end int, parts []string, fn string, sc *scope, env *cteEnv) {
	first, prev := p.toks[k], p.tok(k-1)
	one := len(parts) == 1 && first.Kind == sqltext.Word
	switch {
	case p.punct(end, "("):
		return // a function
	case prev.Is("using") || prev.Is("collate") || prev.Is("over"):
		return // CHAR(x USING utf8mb4), a collation, a window name
	case one && unitWords[strings.ToLower(first.Text)] && p.unitContext(k, fn):
		return
	case len(parts) == 1 && (p.punct(end, "=>") || p.punct(end, "=") && p.punct(end+1, ">") && p.toks[end+1].Pos == p.toks[end].Pos+1):
		return // a named argument: name => value (one token in PostgreSQL's lexer)
	case one && fn == "extract" && p.punct(k-1, "(") && p.word(end, "from"):
		return // EXTRACT(field FROM x): a field (century, isoyear, …), whatever its name
	case one && p.tok(end).Kind == sqltext.String:
		return // a typed literal: DATE '2024-01-01', INTERVAL '1 day'
	case one && prev.Is("interval"):
		return
	}
	p.resolveParts(k, first, parts, sc, env)
}

// idRef resolves the name of the tree whose parts are ids and span s.
func (p *parser) idRef(s sqlparse.Span, ids []*sqlparse.Ident, fn string, sc *scope, env *cteEnv) {
	if p.punct(s.From-1, ".") {
		return // a field of something that is not a plain name: (x).f
	}
	var parts []string
	for _, id := range ids {
		n, ok := p.name(id)
		if !ok {
			return
		}
		parts = append(parts, n)
	}
	p.nameRef(s.From, s.To, parts, fn, sc, env)
}

// resolveParts resolves a name of parts whose first token, at k, is
// first.
func (p *parser) resolveParts(k int, first sqltext.Token, parts []string, sc *scope, env *cteEnv) {
	switch len(parts) {
	case 1:
		p.unqualified(parts[0], first, k, sc, env)
	case 2:
		p.qualified(parts[0], parts[1], k, sc, env)
	case 3:
		if src := sc.findQualified(parts[0], parts[1]); src != nil {
			p.checkColumn(src, parts[0]+"."+parts[1], parts[2], k, sc)
		}
	}
}

// unitFunctions take a date-part unit as their first argument.
var unitFunctions = wordSet(`extract timestampdiff timestampadd datediff dateadd datepart date_part datetrunc
date_trunc datename date_bucket`)

// unitWords are date-part units that are also common column names; they
// are read as units only in a unit's place (see unitContext).
var unitWords = wordSet(`year month day hour minute second week quarter years months days hours minutes seconds
weeks microsecond millisecond`)

// unitContext reports whether the unit word at k stands in a unit's
// place: after a literal (INTERVAL '1' DAY, INTERVAL 1 DAY), after
// INTERVAL x, as the first argument of a unit function (fn is the
// innermost call), or in YEAR TO MONTH.
func (p *parser) unitContext(k int, fn string) bool {
	prev := p.tok(k - 1)
	switch {
	case prev.Kind == sqltext.Number || prev.Kind == sqltext.String:
		return true
	case p.word(k-2, "interval"):
		return true
	case p.punct(k-1, "(") && unitFunctions[fn] && (p.punct(k+1, ",") || p.word(k+1, "from")):
		return true
	case p.word(k+1, "to") && unitWords[strings.ToLower(p.tok(k+2).Text)]:
		return true
	case prev.Is("to") && unitWords[strings.ToLower(p.tok(k-2).Text)]:
		return true
	}
	return false
}

// reference reads the name (possibly dotted) at k, resolves it (see
// nameRef) and returns the index after it.
func (p *parser) reference(k, b int, fn string, sc *scope, env *cteEnv) int {
	if p.punct(k-1, ".") {
		return k + 1 // a field of something that is not a plain name: (x).f
	}
	name, _ := p.ident(p.toks[k])
	parts := []string{name}
	j := k + 1
	for j+1 < b && p.punct(j, ".") {
		if p.punct(j+1, "*") {
			parts = append(parts, "*")
			j += 2
			break
		}
		n, ok := p.ident(p.toks[j+1])
		if !ok {
			break
		}
		parts = append(parts, n)
		j += 2
	}
	p.nameRef(k, j, parts, fn, sc, env)
	return j
}

// unqualified resolves a bare name: a column of a source in scope (or an
// enclosing scope), a select-list alias, a source itself (PostgreSQL
// whole-row reference), an implicit column, a keyword.
func (p *parser) unqualified(name string, tok sqltext.Token, k int, sc *scope, env *cteEnv) {
	for s := sc; s != nil; s = s.parent {
		if s.open {
			return
		}
		for _, a := range s.aliases {
			if strings.EqualFold(a, name) {
				return
			}
		}
		for _, src := range s.sources {
			if src.pending {
				continue
			}
			if src.open {
				return
			}
			if src.has(name) {
				if c := src.column(name); c != nil {
					p.refs[k] = colRef{table: src.table, column: c}
				}
				return
			}
			if p.c.dialect == text2sql.DialectPostgres && (strings.EqualFold(src.alias, name) || (src.alias == "" && strings.EqualFold(src.name, name))) {
				return // a whole-row reference
			}
		}
	}
	lname := strings.ToLower(name)
	if implicitColumns[string(p.c.dialect)][lname] {
		return
	}
	if tok.Kind == sqltext.Word && notColumn[lname] {
		return
	}
	if tok.Kind == sqltext.QuotedIdent && strings.HasPrefix(tok.Text, `"`) && p.c.dialect != text2sql.DialectPostgres {
		return // SQLite and MySQL read an unresolved "x" as a string
	}
	if p.word(k-1, "in") && (env.lookup(name) != nil || p.tableExists(name)) {
		return // SQLite's "x IN table"
	}
	hint := p.columnHint(name, nil, sc)
	if hint == "" && tok.Kind == sqltext.QuotedIdent && strings.HasPrefix(tok.Text, `"`) {
		hint = "string literals take single quotes: '" + strings.ReplaceAll(name, "'", "''") + "'"
	}
	p.fail(text2sql.KindUnknownColumn, "no such column: "+name, hint)
}

// qualified resolves q.col.
func (p *parser) qualified(q, col string, k int, sc *scope, env *cteEnv) {
	src := sc.find(q)
	if src == nil {
		if sc.anyOpen() || p.c.db == nil || p.schemaKnown(q) {
			return
		}
		msg := "no such column: " + q + "." + col + " (no table or alias " + q + " in the FROM clause)"
		hint := p.aliasHint(sc)
		if env.lookup(q) != nil || p.tableExists(q) {
			msg = "no such column: " + q + "." + col + " (" + q + " is not in the FROM clause, or has an alias there)"
			hint = "join " + q + " in the FROM clause; " + hint
		}
		p.fail(text2sql.KindUnknownColumn, msg, strings.TrimSuffix(hint, "; "))
		return
	}
	p.checkColumn(src, q, col, k, sc)
}

// checkColumn checks that src, named qual in the query, has col.
func (p *parser) checkColumn(src *source, qual, col string, k int, sc *scope) {
	if src.open || col == "*" {
		return
	}
	if src.has(col) {
		if c := src.column(col); c != nil {
			p.refs[k] = colRef{table: src.table, column: c}
		}
		return
	}
	if implicitColumns[string(p.c.dialect)][strings.ToLower(col)] && src.table != nil {
		return
	}
	msg := "no such column: " + qual + "." + col
	if !strings.EqualFold(qual, src.name) || src.table == nil {
		msg += " (" + qual + " is " + src.label() + ", which has no column " + col + ")"
	}
	p.fail(text2sql.KindUnknownColumn, msg, p.columnHint(col, src, sc))
}

// columnHint suggests where col is: the tables of the schema model that
// have a column of exactly that name (those the query reads first), else
// the closest column of the source (or of every source in scope).
func (p *parser) columnHint(col string, src *source, sc *scope) string {
	db := p.c.db
	if db == nil {
		return ""
	}
	var read []*schema.Table
	for s := sc; s != nil; s = s.parent {
		for _, x := range s.sources {
			if x.table != nil {
				read = append(read, x.table)
			}
		}
	}
	var except *schema.Table
	if src != nil {
		except = src.table
	}
	if hint := ColumnElsewhere(db, col, read, except); hint != "" {
		return hint
	}
	var cands []string
	owner := map[string]string{}
	addCols := func(x *source) {
		for _, c := range x.cols {
			if _, ok := owner[c]; !ok {
				owner[c] = x.label()
				cands = append(cands, c)
			}
		}
	}
	if src != nil {
		addCols(src)
	} else {
		for s := sc; s != nil; s = s.parent {
			for _, x := range s.sources {
				addCols(x)
			}
			for _, a := range s.aliases {
				if _, ok := owner[a]; !ok {
					owner[a] = "a select-list alias"
					cands = append(cands, a)
				}
			}
		}
	}
	if best := sqltext.Closest(col, cands); best != "" {
		return `did you mean "` + best + `" (` + owner[best] + `)?`
	}
	return ""
}

// aliasHint lists the tables and aliases a query can qualify columns with.
func (p *parser) aliasHint(sc *scope) string {
	var names []string
	for s := sc; s != nil; s = s.parent {
		for _, src := range s.sources {
			switch {
			case src.alias != "" && src.name != "":
				names = append(names, src.alias+" ("+src.name+")")
			case src.alias != "":
				names = append(names, src.alias)
			case src.name != "":
				names = append(names, src.name)
			}
		}
	}
	if len(names) == 0 {
		return ""
	}
	return "qualify columns with one of: " + strings.Join(names, ", ")
}
