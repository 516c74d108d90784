package sqlparse

import (
	"strings"

	"github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/sqltext"
)

// MaxDepth bounds how deep the tree nests (parentheses, subqueries,
// operator chains, joins, set operations). Past it the rest of the
// construct becomes one *Error node, so that walks over the tree recurse
// no deeper than this.
const MaxDepth = 200

// Parse parses sql, split into tokens by the rules of dialect d
// (LexMySQL with the default sql_mode for MySQL, LexPostgres for
// PostgreSQL, Lex otherwise). It never fails: see the package
// documentation.
//
// Lex is PostgreSQL's convention for comments and strings, not exactly
// SQLite's: it nests /* */ comments and reads $tag$…$tag$ as a string,
// where SQLite does neither.
func Parse(sql string, d text2sql.Dialect) *Script {
	var toks []sqltext.Token
	switch d {
	case text2sql.DialectMySQL:
		toks = sqltext.Significant(sqltext.LexMySQL(sql, sqltext.MySQLMode{}))
	case text2sql.DialectPostgres:
		toks = sqltext.Significant(sqltext.LexPostgres(sql))
	default:
		toks = sqltext.Significant(sqltext.Lex(sql))
	}
	p := &parser{src: sql, toks: toks, dialect: d}
	s := &Script{Tokens: toks, dialect: d}
	for {
		for p.punct(";") {
			p.i++
		}
		if p.eof() {
			break
		}
		s.Stmts = append(s.Stmts, p.stmt())
		s.Stmts = append(s.Stmts, p.pending...)
		p.pending = p.pending[:0]
	}
	s.Span = Span{From: 0, To: len(toks), Pos: 0, End: len(sql), src: sql}
	s.Errors = p.errs
	return s
}

type parser struct {
	src     string
	toks    []sqltext.Token
	i       int
	depth   int
	dialect text2sql.Dialect
	errs    []*Error
	pending []Stmt // statements stmt found after the one it returns
	// match and encl (see parens) are built on the first missing ")".
	match, encl []int32
	// sink collects the errors skipped inside a FROM list, for the
	// Select it belongs to.
	sink *[]*Error
}

var eofTok = sqltext.Token{Kind: -1}

func (p *parser) eof() bool { return p.i >= len(p.toks) }

func (p *parser) peek(k int) sqltext.Token {
	if p.i+k < len(p.toks) {
		return p.toks[p.i+k]
	}
	return eofTok
}

func (p *parser) tok() sqltext.Token { return p.peek(0) }

// word reports whether the current token is one of the words ws.
func (p *parser) word(ws ...string) bool {
	t := p.tok()
	if t.Kind != sqltext.Word {
		return false
	}
	for _, w := range ws {
		if strings.EqualFold(t.Text, w) {
			return true
		}
	}
	return false
}

func (p *parser) wordAt(k int, w string) bool { return p.peek(k).Is(w) }

func (p *parser) punct(s string) bool {
	t := p.tok()
	return t.Kind == sqltext.Punct && t.Text == s
}

func (p *parser) punctAt(k int, s string) bool {
	t := p.peek(k)
	return t.Kind == sqltext.Punct && t.Text == s
}

// accept consumes the word w if it is next.
func (p *parser) accept(w string) bool {
	if p.word(w) {
		p.i++
		return true
	}
	return false
}

func (p *parser) acceptPunct(s string) bool {
	if p.punct(s) {
		p.i++
		return true
	}
	return false
}

// span returns the span of tokens [from, p.i).
func (p *parser) span(from int) Span {
	s := Span{From: from, To: p.i, src: p.src}
	switch {
	case from < p.i && from < len(p.toks):
		s.Pos = p.toks[from].Pos
		last := p.toks[p.i-1]
		s.End = last.Pos + len(last.Text)
	case from < len(p.toks):
		s.Pos, s.End = p.toks[from].Pos, p.toks[from].Pos
	default:
		s.Pos, s.End = len(p.src), len(p.src)
	}
	return s
}

// errAt records a missing part at the current token.
func (p *parser) errAt(reason string) *Error {
	e := &Error{Span: p.span(p.i), Reason: reason}
	p.errs = append(p.errs, e)
	return e
}

// skip consumes tokens up to (not including) a ")" that closes the
// current level, a ";" or the end, keeping parentheses balanced, and
// returns them as an Error. stop, if set, also ends the skip at level 0.
func (p *parser) skip(reason string, stop func() bool) *Error {
	from := p.i
	level := 0
	for !p.eof() {
		if p.punct(";") {
			break
		}
		if level == 0 && (p.punct(")") || stop != nil && stop()) {
			break
		}
		if p.punct("(") {
			level++
		} else if p.punct(")") {
			level--
		}
		p.i++
	}
	e := &Error{Span: p.span(from), Reason: reason}
	p.errs = append(p.errs, e)
	return e
}

// closeParen consumes the ")" that closes a construct, skipping what
// stands before it as an Error.
func (p *parser) closeParen() {
	if p.acceptPunct(")") {
		return
	}
	if p.encl == nil {
		p.parens()
	}
	if !p.eof() {
		if o := p.encl[p.i]; o >= 0 && int(p.match[o]) > p.i {
			// The "(" this construct is in has its ")" further on: the
			// tokens before it are what the parser did not understand
			// (COUNT(x WHERE y), a model's pseudo-SQL).
			from := p.i
			p.i = int(p.match[o])
			e := &Error{Span: p.span(from), Reason: "unexpected tokens before )"}
			p.errs = append(p.errs, e)
			p.i++
			return
		}
	}
	// The ")" was forgotten: what follows is not part of the parenthesis.
	p.errAt(ReasonMissingParen)
}

// parens computes, once and only when a ")" is missing where expected,
// the matching ")" of every "(" (-1 if none before the statement's ";")
// and the innermost "(" still open at every token, by counting.
func (p *parser) parens() {
	n := len(p.toks)
	p.match = make([]int32, n)
	p.encl = make([]int32, n)
	var stack []int32
	for i, t := range p.toks {
		p.match[i] = -1
		p.encl[i] = -1
		if len(stack) > 0 {
			p.encl[i] = stack[len(stack)-1]
		}
		if t.Kind != sqltext.Punct {
			continue
		}
		switch t.Text {
		case "(":
			stack = append(stack, int32(i))
		case ")":
			if len(stack) > 0 {
				p.match[stack[len(stack)-1]] = int32(i)
				stack = stack[:len(stack)-1]
			}
		case ";":
			stack = stack[:0]
		}
	}
}

// enter counts one level of nesting; it reports false past MaxDepth.
func (p *parser) enter() bool {
	p.depth++
	return p.depth <= MaxDepth
}

func (p *parser) leave() { p.depth-- }

func (p *parser) startsQuery() bool {
	return p.word("SELECT", "WITH", "VALUES")
}

// stmt parses one statement up to its ";" or the end.
func (p *parser) stmt() Stmt {
	from := p.i
	if p.startsQuery() || p.punct("(") && p.parenQueryAhead() {
		q := p.query()
		if !p.eof() && !p.punct(";") {
			// Trailing text: prose after the statement, or a construct
			// the parser does not know. The query stays; the rest is an
			// Error statement of its own.
			from := p.i
			for !p.eof() && !p.punct(";") {
				p.i++
			}
			e := &Error{Span: p.span(from), Reason: "unexpected text after the statement"}
			p.errs = append(p.errs, e)
			p.pending = append(p.pending, e)
		}
		return q
	}
	for !p.eof() && !p.punct(";") {
		p.i++
	}
	verb := ""
	if t := p.toks[from]; t.Kind == sqltext.Word {
		verb = strings.ToUpper(t.Text)
	}
	return &Other{Span: p.span(from), Verb: verb}
}

// lockAhead reports whether a locking clause starts at the current token.
func (p *parser) lockAhead() bool {
	return p.word("FOR") && (p.wordAt(1, "UPDATE") || p.wordAt(1, "SHARE") || p.wordAt(1, "NO") || p.wordAt(1, "KEY")) ||
		p.word("LOCK") && p.wordAt(1, "IN") && p.wordAt(2, "SHARE")
}

// parenQueryAhead reports whether the "(" run at the current token opens
// a query: ((SELECT …. It looks at most 64 tokens ahead.
func (p *parser) parenQueryAhead() bool {
	for k := 0; k < 64; k++ {
		t := p.peek(k)
		if t.Kind == sqltext.Punct && t.Text == "(" {
			continue
		}
		return t.Is("SELECT") || t.Is("WITH") || t.Is("VALUES")
	}
	return false
}

// query parses [WITH …] body [ORDER BY …] [LIMIT …] [lock].
func (p *parser) query() *Query {
	from := p.i
	q := &Query{}
	if !p.enter() {
		q.Body = p.skip("nesting too deep", nil)
		p.leave()
		q.Span = p.span(from)
		return q
	}
	defer p.leave()
	if p.word("WITH") {
		q.With = p.with()
	}
	q.Body = p.setExpr(0)
	p.tail(q)
	q.Span = p.span(from)
	return q
}

// tail parses ORDER BY, LIMIT/OFFSET/FETCH and a locking clause into q.
func (p *parser) tail(q *Query) {
	if p.word("ORDER") && p.wordAt(1, "BY") {
		p.i += 2
		q.OrderBy = p.orderTerms()
	}
	p.limit(q)
	lf := p.i
	if p.lockAhead() {
		for !p.eof() && !p.punct(";") && !p.punct(")") {
			p.i++
		}
		q.Lock = &Lock{Span: p.span(lf)}
	}
}

func (p *parser) limit(q *Query) {
	from := p.i
	var l *Limit
	if p.accept("LIMIT") {
		l = &Limit{}
		examined := func() bool { return p.word("ROWS") && p.wordAt(1, "EXAMINED") }
		if !p.accept("ALL") && !examined() { // PostgreSQL's LIMIT ALL has no count
			l.Count = p.expr()
		}
		if p.acceptPunct(",") {
			l.Comma = true
			l.Offset = l.Count
			l.Count = p.expr()
		} else if p.accept("OFFSET") {
			l.Offset = p.expr()
		}
		if examined() {
			p.i += 2
			l.Examined = p.expr()
		}
	}
	if p.word("OFFSET") {
		if l == nil {
			l = &Limit{}
		}
		p.i++
		l.Offset = p.expr()
		if !p.accept("ROWS") {
			p.accept("ROW")
		}
	}
	if p.word("FETCH") && (p.wordAt(1, "FIRST") || p.wordAt(1, "NEXT")) {
		if l == nil {
			l = &Limit{}
		}
		p.i += 2
		l.Fetch = true
		if !p.word("ROW", "ROWS") {
			l.Count = p.expr()
		}
		if !p.accept("ROWS") {
			p.accept("ROW")
		}
		if p.accept("WITH") {
			p.accept("TIES")
			l.Ties = true
		} else {
			p.accept("ONLY")
		}
	}
	if l != nil {
		l.Span = p.span(from)
		q.Limit = l
	}
}

func (p *parser) with() *With {
	from := p.i
	p.i++ // WITH
	w := &With{Recursive: p.accept("RECURSIVE")}
	for {
		cf := p.i
		c := &CTE{}
		if p.tok().Kind != sqltext.Word && p.tok().Kind != sqltext.QuotedIdent {
			p.errAt("expected CTE name")
			break
		}
		c.Name = p.ident()
		if p.punct("(") {
			c.Columns = p.identList()
		}
		if !p.accept("AS") {
			p.errAt("expected AS")
		}
		p.accept("NOT")
		p.accept("MATERIALIZED")
		if p.acceptPunct("(") {
			c.Query = p.query()
			p.closeParen()
		} else {
			p.errAt("expected (")
		}
		p.searchCycle(c)
		c.Span = p.span(cf)
		w.CTEs = append(w.CTEs, c)
		if !p.acceptPunct(",") {
			break
		}
	}
	w.Span = p.span(from)
	return w
}

// searchCycle parses PostgreSQL's SEARCH {DEPTH|BREADTH} FIRST BY cols
// SET col and CYCLE cols SET col [TO v DEFAULT d] USING col after a CTE,
// keeping the columns they add in c.Generated.
func (p *parser) searchCycle(c *CTE) {
	if p.word("SEARCH") && (p.wordAt(1, "DEPTH") || p.wordAt(1, "BREADTH")) && p.wordAt(2, "FIRST") && p.wordAt(3, "BY") {
		p.i += 4
		commaList(p, p.ident)
		if p.accept("SET") {
			c.Generated = append(c.Generated, p.ident())
		}
	}
	if p.word("CYCLE") && p.peek(1).Kind != sqltext.Punct {
		p.i++
		commaList(p, p.ident)
		if p.accept("SET") {
			c.Generated = append(c.Generated, p.ident())
		}
		if p.accept("TO") {
			p.unary()
			if p.accept("DEFAULT") {
				p.unary()
			}
		}
		if p.accept("USING") {
			c.Generated = append(c.Generated, p.ident())
		}
	}
}

// setExpr parses operands joined by set operators of precedence >= min
// (UNION and EXCEPT 1, INTERSECT 2).
func (p *parser) setExpr(min int) QueryBody {
	from := p.i
	left := p.queryPrimary()
	levels := 0
	defer func() { p.depth -= levels }()
	for {
		var prec int
		switch {
		case p.word("UNION"), p.word("EXCEPT"), p.word("MINUS"):
			prec = 1
		case p.word("INTERSECT"):
			prec = 2
		default:
			return left
		}
		if prec <= min {
			return left
		}
		op := strings.ToUpper(p.tok().Text)
		if op == "MINUS" {
			op = "EXCEPT"
		}
		p.i++
		all := p.accept("ALL")
		if !all {
			p.accept("DISTINCT")
		}
		levels++
		if !p.enter() {
			right := p.skip("nesting too deep", nil)
			left = &SetOp{Span: p.span(from), Op: op, All: all, Left: left, Right: right}
			continue
		}
		right := p.setExpr(prec)
		left = &SetOp{Span: p.span(from), Op: op, All: all, Left: left, Right: right}
	}
}

func (p *parser) queryPrimary() QueryBody {
	from := p.i
	switch {
	case p.word("SELECT"):
		return p.selectBlock()
	case p.word("VALUES"):
		p.i++
		v := &Values{}
		for p.punct("(") {
			pf := p.i
			p.i++
			t := &Tuple{List: p.exprList()}
			p.closeParen()
			t.Span = p.span(pf)
			v.Rows = append(v.Rows, t)
			if !p.acceptPunct(",") {
				break
			}
		}
		v.Span = p.span(from)
		return v
	case p.punct("("):
		p.i++
		q := p.query()
		p.closeParen()
		return &ParenQuery{Span: p.span(from), Query: q}
	}
	return p.errAt("expected SELECT")
}

// clauseStop reports whether the current token starts a clause (or
// closes the statement) at the level of a skip.
func (p *parser) clauseStop() bool {
	return p.word("FROM", "WHERE", "GROUP", "HAVING", "ORDER", "LIMIT", "OFFSET", "UNION", "INTERSECT", "EXCEPT", "WINDOW", "FETCH") || p.punct(",")
}

func (p *parser) selectBlock() *Select {
	from := p.i
	p.i++ // SELECT
	s := &Select{}
	if p.accept("DISTINCT") || p.accept("DISTINCTROW") {
		s.Distinct = true
		if p.word("ON") && p.punctAt(1, "(") {
			p.i += 2
			s.DistinctOn = p.exprList()
			p.closeParen()
		}
	} else {
		p.accept("ALL")
	}
	for p.dialect == text2sql.DialectMySQL && p.tok().Kind == sqltext.Word && selectModifiers[strings.ToLower(p.tok().Text)] {
		p.i++
	}
	if p.word("TOP") && (p.punctAt(1, "(") || p.peek(1).Kind == sqltext.Number || p.peek(1).Kind == sqltext.Param) {
		p.i++
		s.Top = p.unary()
		p.accept("PERCENT")
		if p.accept("WITH") {
			p.accept("TIES")
		}
	}
	s.Items = commaList(p, p.selectItem)
	if p.word("INTO") {
		// SELECT … INTO target: not a read; keep going for analysis.
		into := p.i
		p.i++
		for t := p.tok(); t.Kind == sqltext.Word && !isReserved(t) || t.Kind == sqltext.QuotedIdent || t.Kind == sqltext.Param || p.punct(".") || p.punct(","); t = p.tok() {
			p.i++
		}
		s.Into = &Into{Span: p.span(into)}
	}
	p.resync(s)
	if p.accept("FROM") {
		outer := p.sink
		p.sink = &s.Errors
		s.From = p.fromList()
		p.sink = outer
		p.resync(s)
	}
	if p.accept("WHERE") {
		s.Where = p.expr()
		p.resync(s)
	}
	if p.word("GROUP") && p.wordAt(1, "BY") {
		p.i += 2
		if !p.accept("ALL") {
			p.accept("DISTINCT") // PostgreSQL: GROUP BY DISTINCT ROLLUP (…)
		}
		s.GroupBy = commaList(p, p.groupItem)
		if p.word("WITH") && p.wordAt(1, "ROLLUP") {
			p.i += 2
		}
		p.resync(s)
	}
	if p.accept("HAVING") {
		s.Having = p.expr()
		p.resync(s)
	}
	if p.word("WINDOW") {
		p.i++
		for {
			wf := p.i
			wd := &WindowDef{Name: p.ident()}
			if !p.accept("AS") {
				p.errAt("expected AS")
			}
			if p.punct("(") {
				wd.Spec = p.windowSpec()
			} else {
				p.errAt("expected (")
			}
			wd.Span = p.span(wf)
			s.Windows = append(s.Windows, wd)
			if p.i == wf || !p.acceptPunct(",") {
				break
			}
		}
	}
	s.Span = p.span(from)
	return s
}

// groupItem parses one GROUP BY expression, with the ASC or DESC MariaDB
// still allows after it.
func (p *parser) groupItem() Expr {
	x := p.expr()
	if p.dialect == text2sql.DialectMySQL && !p.accept("ASC") {
		p.accept("DESC")
	}
	return x
}

// selectModifiers are MySQL's words between SELECT and the select list.
var selectModifiers = map[string]bool{
	"high_priority": true, "straight_join": true, "sql_small_result": true, "sql_big_result": true,
	"sql_buffer_result": true, "sql_cache": true, "sql_no_cache": true, "sql_calc_found_rows": true,
}

// resync skips, as an error node of s, the tokens up to the next clause
// of the SELECT block when the current one does not continue it: 3-D
// Man.name, FROM t … keeps its FROM clause.
func (p *parser) resync(s *Select) {
	if p.eof() || p.punct(";") || p.punct(")") || p.selectGoesOn() {
		return
	}
	e := p.skip("unexpected tokens in SELECT", p.selectGoesOn)
	s.Errors = append(s.Errors, e)
}

// resyncFrom skips the tokens up to the next join, FROM item or clause
// when the current one does not continue a FROM list: a\_b JOIN c keeps
// the join with c (models escape underscores as in Markdown).
// With on, the ON or USING of a join may come next.
func (p *parser) resyncFrom(on bool) {
	goesOn := func() bool {
		return p.punct(",") || p.selectGoesOn() || p.joinAhead() || on && p.word("ON", "USING")
	}
	if p.eof() || p.punct(";") || p.punct(")") || goesOn() {
		return
	}
	e := p.skip("unexpected tokens in FROM", goesOn)
	if p.sink != nil {
		*p.sink = append(*p.sink, e)
	}
}

// joinAhead reports whether a join operator starts at the current token.
func (p *parser) joinAhead() bool {
	return p.word("JOIN", "INNER", "LEFT", "RIGHT", "FULL", "CROSS", "NATURAL", "STRAIGHT_JOIN")
}

// selectGoesOn reports whether the current token continues a SELECT
// block or the query around it.
func (p *parser) selectGoesOn() bool {
	return p.word("FROM", "WHERE", "GROUP", "HAVING", "WINDOW", "ORDER", "LIMIT", "OFFSET", "FETCH",
		"UNION", "INTERSECT", "EXCEPT", "MINUS") || p.lockAhead()
}

// reserved are the words that cannot be a bare identifier where an
// expression or alias may stand: they start or continue clauses and
// operators. Words like lock, year, name, date, key are not here, so they
// name columns and tables.
var reserved = map[string]bool{
	"all": true, "and": true, "as": true, "asc": true, "between": true, "by": true, "case": true,
	"cross": true, "desc": true, "distinct": true, "else": true, "end": true, "except": true,
	"exists": true, "fetch": true, "for": true, "from": true, "full": true, "glob": true,
	"group": true, "having": true, "ilike": true, "in": true, "inner": true, "intersect": true,
	"into": true, "is": true, "join": true, "left": true, "like": true, "limit": true,
	"natural": true, "not": true, "null": true, "offset": true, "on": true, "or": true,
	"order": true, "outer": true, "regexp": true, "rlike": true, "right": true, "select": true,
	"then": true, "union": true, "using": true, "when": true, "where": true, "window": true,
	"with": true, "xor": true, "collate": true, "straight_join": true, "div": true, "mod": true,
	"escape": true, "over": true, "filter": true, "minus": true, "returning": true, "qualify": true,
	"values": true, "lateral": true, "isnull": true, "notnull": true, "similar": true,
}

// notTableAlias are words that may follow a table name without being its
// alias (when what follows them confirms it: see tableAliasOK).
var notTableAlias = map[string]bool{
	"use": true, "force": true, "ignore": true, "indexed": true, "lock": true, "partition": true, "tablesample": true, "set": true,
}

func isReserved(t sqltext.Token) bool {
	return t.Kind == sqltext.Word && reserved[strings.ToLower(t.Text)]
}

// alias parses [AS] name after a select item (table false) or a FROM item.
func (p *parser) alias(table bool) *Ident {
	if p.accept("AS") {
		if t := p.tok(); t.Kind == sqltext.Word || t.Kind == sqltext.QuotedIdent || t.Kind == sqltext.String {
			return p.ident()
		}
		p.errAt("expected alias")
		return nil
	}
	t := p.tok()
	switch t.Kind {
	case sqltext.QuotedIdent:
		return p.ident()
	case sqltext.String:
		if table {
			return nil
		}
		return p.ident()
	case sqltext.Word:
		if isReserved(t) {
			return nil
		}
		if table {
			lw := strings.ToLower(t.Text)
			if notTableAlias[lw] {
				next := p.peek(1)
				switch lw {
				case "use", "force", "ignore":
					if next.Is("INDEX") || next.Is("KEY") {
						return nil
					}
				case "indexed":
					if next.Is("BY") {
						return nil
					}
				case "lock":
					if next.Is("IN") {
						return nil
					}
				default:
					if next.Kind == sqltext.Punct && next.Text == "(" || next.Kind == sqltext.Word {
						return nil
					}
				}
			}
		}
		return p.ident()
	}
	return nil
}

// ident consumes one identifier token (a word, quoted identifier, or a
// string used as a name).
func (p *parser) ident() *Ident {
	from := p.i
	t := p.tok()
	id := &Ident{}
	switch t.Kind {
	case sqltext.Word:
		id.Name = t.Text
		p.i++
	case sqltext.QuotedIdent:
		id.Name, _ = t.Ident()
		id.Quoted = true
		p.i++
	case sqltext.String:
		id.Name = strings.ReplaceAll(strings.Trim(t.Text, "'\""), "''", "'")
		id.Quoted = true
		p.i++
	default:
		p.errAt("expected identifier")
	}
	id.Span = p.span(from)
	return id
}

// identList parses (a, b, …).
func (p *parser) identList() []*Ident {
	p.i++ // (
	var out []*Ident
	for !p.punct(")") && !p.eof() {
		at := p.i
		out = append(out, p.ident())
		if p.i == at || !p.acceptPunct(",") {
			break
		}
	}
	p.closeParen()
	return out
}

// commaList parses item, item, …: one more item after each comma, ending
// at the first item followed by no comma, or one that consumed no token
// (a malformed item cannot loop).
func commaList[T any](p *parser, item func() T) []T {
	var out []T
	for {
		at := p.i
		out = append(out, item())
		if p.i == at || !p.acceptPunct(",") {
			return out
		}
	}
}

func (p *parser) fromList() []TableExpr { return commaList(p, p.tableExpr) }

// joinKind consumes a join operator and returns its kind; ok is false if
// none is next.
func (p *parser) joinKind() (kind string, natural, ok bool) {
	save := p.i
	natural = p.accept("NATURAL")
	switch {
	case p.word("JOIN"):
	case p.word("STRAIGHT_JOIN"):
		p.i++
		return "STRAIGHT_JOIN", natural, true
	case p.word("INNER", "CROSS"):
		kind = strings.ToUpper(p.tok().Text)
		p.i++
	case p.word("LEFT", "RIGHT", "FULL"):
		kind = strings.ToUpper(p.tok().Text)
		p.i++
		p.accept("OUTER")
	default:
		p.i = save
		return "", false, false
	}
	if !p.accept("JOIN") {
		p.i = save
		return "", false, false
	}
	return kind, natural, true
}

func (p *parser) tableExpr() TableExpr {
	from := p.i
	left := p.tablePrimary()
	levels := 0
	defer func() { p.depth -= levels }()
	for {
		p.resyncFrom(false)
		kind, natural, ok := p.joinKind()
		if !ok {
			return left
		}
		levels++
		j := &Join{Kind: kind, Natural: natural, Left: left}
		if !p.enter() {
			j.Right = p.skip("nesting too deep", p.clauseStop)
		} else {
			j.Right = p.tablePrimary()
		}
		p.resyncFrom(true)
		if p.accept("ON") {
			j.On = p.expr()
		} else if p.word("USING") && p.punctAt(1, "(") {
			p.i++
			j.Using = p.identList()
			if p.word("AS") && p.peek(1).Kind == sqltext.Word && !isReserved(p.peek(1)) {
				p.i++
				j.UsingAlias = p.ident()
			}
		}
		j.Span = p.span(from)
		left = j
	}
}

func (p *parser) tablePrimary() TableExpr {
	from := p.i
	deep := !p.enter()
	defer p.leave()
	if deep {
		return p.skip("nesting too deep", p.clauseStop)
	}
	lateral := p.accept("LATERAL")
	if p.dialect == text2sql.DialectPostgres && p.word("ONLY") && (p.peek(1).Kind == sqltext.Word || p.peek(1).Kind == sqltext.QuotedIdent || p.punctAt(1, "(")) {
		p.i++ // ONLY t: the table without its inheritance children
	}
	if p.word("ROWS") && p.wordAt(1, "FROM") && p.punctAt(2, "(") {
		return p.rowsFrom(from)
	}
	t := p.tok()
	switch {
	case t.Kind == sqltext.Punct && t.Text == "(":
		if p.parenQueryAhead() {
			// A derived table, possibly with set operations after a
			// parenthesised first operand: ((SELECT …) UNION (SELECT …)).
			p.i++
			q := p.query()
			p.closeParen()
			d := &DerivedTable{Lateral: lateral, Query: q}
			d.Alias = p.alias(true)
			if d.Alias != nil && p.punct("(") {
				d.Columns = p.identList()
			}
			d.Span = p.span(from)
			return d
		}
		p.i++
		inner := p.tableExpr()
		// (a, b) is allowed by MySQL and SQLite: keep the first, the rest
		// as joins would misstate it, so parse them as a list inside.
		for p.acceptPunct(",") {
			at := p.i
			right := p.tableExpr()
			inner = &Join{Span: p.span(from + 1), Kind: "CROSS", Left: inner, Right: right}
			if p.i == at {
				break
			}
		}
		p.closeParen()
		pt := &ParenTable{Table: inner}
		// (a JOIN b) AS x: SQLite accepts it, MySQL rejects it.
		pt.Alias = p.alias(true)
		pt.Span = p.span(from)
		return pt
	case t.Kind == sqltext.Word && !isReserved(t) || t.Kind == sqltext.QuotedIdent || t.Kind == sqltext.String && p.dialect != text2sql.DialectPostgres:
		var parts []*Ident
		parts = append(parts, p.ident())
		for p.punct(".") {
			p.i++
			parts = append(parts, p.ident())
		}
		if p.punct("(") {
			tf := &TableFunc{Call: p.callRest(parts[0].From, parts)}
			p.funcTail(tf)
			tf.Span = p.span(from)
			return tf
		}
		tn := &TableName{Parts: parts}
		p.hints(tn)
		tn.Alias = p.alias(true)
		if tn.Alias != nil && p.punct("(") {
			tn.Columns = p.identList()
		}
		p.hints(tn)
		p.tableSample(tn)
		tn.Span = p.span(from)
		return tn
	}
	return p.errAt("expected table")
}

// rowsFrom parses PostgreSQL's ROWS FROM (f(x) [AS (coldefs)], …) and
// what follows it; the current token is ROWS.
func (p *parser) rowsFrom(from int) TableExpr {
	p.i += 3 // ROWS FROM (
	tf := &TableFunc{}
	for !p.punct(")") && !p.eof() {
		at := p.i
		if x, ok := p.primary().(*Call); ok {
			tf.Rows = append(tf.Rows, x)
		}
		if p.word("AS") && p.punctAt(1, "(") {
			p.i++
			p.columnDefs()
		}
		if p.i == at || !p.acceptPunct(",") {
			break
		}
	}
	p.closeParen()
	p.funcTail(tf)
	tf.Span = p.span(from)
	return tf
}

// funcTail parses what may follow a table function: WITH ORDINALITY,
// then [AS] alias [(columns or column definitions)], or AS (column
// definitions) without an alias.
func (p *parser) funcTail(tf *TableFunc) {
	if p.word("WITH") && p.wordAt(1, "ORDINALITY") {
		p.i += 2
		tf.Ordinality = true
	}
	if p.word("AS") && p.punctAt(1, "(") {
		p.i++
		tf.Columns = p.columnDefs()
		return
	}
	tf.Alias = p.alias(true)
	if tf.Alias != nil && p.punct("(") {
		tf.Columns = p.columnDefs()
	}
}

// columnDefs parses (a, b) or PostgreSQL's column definitions (a int, b
// text[]) and returns the names.
func (p *parser) columnDefs() []*Ident {
	p.i++ // (
	var out []*Ident
	for !p.punct(")") && !p.eof() {
		at := p.i
		out = append(out, p.ident())
		if !p.punct(",") && !p.punct(")") {
			p.typeName()
		}
		if p.i == at || !p.acceptPunct(",") {
			break
		}
	}
	p.closeParen()
	return out
}

// tableSample parses TABLESAMPLE method (args) [REPEATABLE (seed)] after
// a table.
func (p *parser) tableSample(tn *TableName) {
	if !p.word("TABLESAMPLE") || p.peek(1).Kind != sqltext.Word || !p.punctAt(2, "(") {
		return
	}
	p.i++
	mf := p.i
	method := p.ident()
	tn.Sample = p.callRest(mf, []*Ident{method})
	if p.word("REPEATABLE") && p.punctAt(1, "(") {
		p.i += 2
		tn.Seed = p.expr()
		p.closeParen()
	}
}

// hints parses MySQL index hints and SQLite INDEXED BY / NOT INDEXED.
func (p *parser) hints(tn *TableName) {
	for {
		hf := p.i
		switch {
		case p.word("USE", "FORCE", "IGNORE") && (p.wordAt(1, "INDEX") || p.wordAt(1, "KEY")):
			p.i += 2
			if p.accept("FOR") {
				if p.accept("JOIN") {
				} else if p.word("ORDER", "GROUP") {
					p.i++
					p.accept("BY")
				}
			}
			if p.punct("(") {
				p.identList()
			}
		case p.word("INDEXED") && p.wordAt(1, "BY"):
			p.i += 2
			p.ident()
		case p.word("NOT") && p.wordAt(1, "INDEXED"):
			p.i += 2
		case p.word("PARTITION") && p.punctAt(1, "(") && p.dialect == text2sql.DialectMySQL:
			p.i++
			p.identList()
		default:
			return
		}
		tn.Hints = append(tn.Hints, &Hint{Span: p.span(hf)})
	}
}

func (p *parser) selectItem() *SelectItem {
	from := p.i
	it := &SelectItem{Expr: p.expr()}
	it.Alias = p.alias(false)
	it.Span = p.span(from)
	return it
}

func (p *parser) orderTerms() []*OrderTerm { return commaList(p, p.orderTerm) }

func (p *parser) orderTerm() *OrderTerm {
	from := p.i
	o := &OrderTerm{Expr: p.expr()}
	if p.accept("DESC") {
		o.Desc = true
	} else if p.accept("ASC") {
		o.Asc = true
	}
	if p.word("USING") && p.peek(1).Kind == sqltext.Punct {
		p.i += 2 // PostgreSQL: ORDER BY x USING >
	}
	if p.word("NULLS") && (p.wordAt(1, "FIRST") || p.wordAt(1, "LAST")) {
		o.Nulls = strings.ToUpper(p.peek(1).Text)
		p.i += 2
	}
	o.Span = p.span(from)
	return o
}

func (p *parser) windowSpec() *WindowSpec {
	from := p.i
	p.i++ // (
	w := &WindowSpec{}
	if t := p.tok(); t.Kind == sqltext.Word && !p.word("PARTITION", "ORDER", "ROWS", "RANGE", "GROUPS") && !isReserved(t) {
		w.Base = p.ident()
	}
	if p.word("PARTITION") && p.wordAt(1, "BY") {
		p.i += 2
		w.PartitionBy = p.exprList()
	}
	if p.word("ORDER") && p.wordAt(1, "BY") {
		p.i += 2
		w.OrderBy = p.orderTerms()
	}
	if p.word("ROWS", "RANGE", "GROUPS") {
		ff := p.i
		level := 0
		for !p.eof() && !p.punct(";") && !(level == 0 && p.punct(")")) {
			if p.punct("(") {
				level++
			} else if p.punct(")") {
				level--
			}
			p.i++
		}
		w.Frame = &Frame{Span: p.span(ff)}
	}
	p.closeParen()
	w.Span = p.span(from)
	return w
}

func (p *parser) exprList() []Expr { return commaList(p, p.expr) }
