package lint

import (
	"regexp"
	"sort"
	"strings"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/sqlparse"
	"github.com/text2sql-go/text2sql/internal/sqltext"
	"github.com/text2sql-go/text2sql/schema"
)

// maxDepth bounds the nesting of queries the parser follows; deeper text
// is left unchecked.
const maxDepth = 64

// source is a relation a SELECT reads: a base table or view, a common
// table expression, a subquery or a table-valued function.
type source struct {
	name, schema, alias string
	table               *schema.Table // base table or view; nil otherwise
	cols                []string      // known column names
	colList             []string      // columns renamed by an alias list: t AS x(a, b)
	open                bool          // columns unknown: any name may be one
	derived             bool
	// pending marks a subquery source whose body is not parsed yet: it
	// cannot be named from inside itself, so resolution skips it.
	pending bool
}

// column returns the schema column of a base table source named col.
func (s *source) column(col string) *schema.Column {
	if s.table == nil {
		return nil
	}
	return s.table.Column(col)
}

func (s *source) has(col string) bool {
	if s.open {
		return true
	}
	for _, c := range s.cols {
		if strings.EqualFold(c, col) {
			return true
		}
	}
	return false
}

// label is how a message names the source: "circle_kpi_4g" or "a
// subquery".
func (s *source) label() string {
	switch {
	case s.table != nil:
		return "table " + s.table.QualifiedName()
	case s.derived:
		return "a subquery"
	case s.name != "":
		return s.name
	}
	return "a subquery"
}

// scope holds what the expressions of one SELECT core can name.
type scope struct {
	parent  *scope
	sources []*source
	aliases []string // select-list aliases, window names, compound outputs
	open    bool     // the FROM clause was not understood
}

// anyOpen reports whether s or an enclosing scope is open.
func (s *scope) anyOpen() bool {
	for ; s != nil; s = s.parent {
		if s.open {
			return true
		}
		for _, src := range s.sources {
			if src.open && !src.pending && src.alias == "" && src.name == "" {
				return true
			}
		}
	}
	return false
}

// find returns the source q names in s or an enclosing scope: an alias,
// or the name of a table that has no alias.
func (s *scope) find(q string) *source {
	for ; s != nil; s = s.parent {
		for _, src := range s.sources {
			if !src.pending && src.alias != "" && strings.EqualFold(src.alias, q) {
				return src
			}
		}
		for _, src := range s.sources {
			if !src.pending && src.alias == "" && strings.EqualFold(src.name, q) {
				return src
			}
		}
	}
	return nil
}

// findQualified returns the source named schema.name.
func (s *scope) findQualified(sch, name string) *source {
	for ; s != nil; s = s.parent {
		for _, src := range s.sources {
			if strings.EqualFold(src.name, name) && (strings.EqualFold(src.schema, sch) || src.schema == "") {
				return src
			}
		}
	}
	return nil
}

// relation is the output of a query: its column names, and whether there
// may be others (an expression without a name, * over an unknown source).
type relation struct {
	cols []string
	open bool
}

func openRelation() *relation { return &relation{open: true} }

// cteEnv is the chain of visible common table expressions.
type cteEnv struct {
	parent *cteEnv
	name   string
	rel    *relation
	// used is set when a FROM clause reads the CTE. SQLite (and MySQL)
	// never compile an unused CTE, so failures in its body (fails) count
	// only when it is used.
	used  bool
	fails []*text2sql.SQLError
}

func (e *cteEnv) find(name string) *cteEnv {
	for ; e != nil; e = e.parent {
		if strings.EqualFold(e.name, name) {
			return e
		}
	}
	return nil
}

func (e *cteEnv) lookup(name string) *relation {
	if c := e.find(name); c != nil {
		return c.rel
	}
	return nil
}

// span is a token range [a, b); a < 0 means none.
type span struct{ a, b int }

func (s span) ok() bool { return s.a >= 0 && s.b > s.a }

var none = span{-1, -1}

// itemInfo is one select-list item.
type itemInfo struct {
	expr     span
	alias    string
	name     string // output name: the alias, or the column a bare reference names
	star     bool   // *
	starQual []string
}

// orderKey is one ORDER BY term.
type orderKey struct {
	expr  span
	desc  bool
	nulls bool // NULLS FIRST or NULLS LAST is written
}

// block is one SELECT core, kept for the warnings.
type block struct {
	sc       *scope
	distinct bool
	items    []itemInfo
	from     int             // index of FROM, or -1
	conds    []sqlparse.Expr // the WHERE condition, then the ON conditions
	group    []span          // the GROUP BY expressions; the last runs to the end of the clause
	order    []orderKey
	limit    bool // LIMIT is written
	// count is the row count of LIMIT n or LIMIT m, n when it is a number
	// alone in its place; nil otherwise.
	count *sqlparse.Literal
}

// queryInfo is a parsed query expression.
type queryInfo struct {
	cores    []*block // nil entries for VALUES or parenthesised cores
	compound bool
}

// colRef is a resolved column reference.
type colRef struct {
	table  *schema.Table
	column *schema.Column
}

// parser checks one statement over its sqlparse tree: it builds the
// scopes of its queries, resolves their names and keeps what the
// warnings read.
type parser struct {
	c    *Checker
	sql  string
	toks []sqltext.Token
	tree *sqlparse.Script
	// queries are the tree's queries by their first token (the outermost
	// when several start there).
	queries map[int]*sqlparse.Query
	// exprAt are the tree's expressions by their first token (the
	// outermost when several start there).
	exprAt map[int]sqlparse.Expr
	// orphans are the tree's errors that are no node of it (text skipped
	// before a ")"), in source order.
	orphans []*sqlparse.Error
	// match is the index of the parenthesis (or PostgreSQL's bracket)
	// matching each one, -1 for other tokens and unbalanced ones.
	match  []int
	fails  []*text2sql.SQLError
	unsure bool // the text was not understood: report no name failure
	depth  int
	refs   map[int]colRef // by the index of the reference's first token
	top    *queryInfo
	ctes   []*cteEnv
	// typeDepth is the nesting of the running type inference.
	typeDepth int
}

// newParser parses sql, one statement, in c's dialect.
func newParser(c *Checker, sql string) *parser {
	tree := sqlparse.Parse(sql, c.dialect)
	toks := tree.Tokens
	p := &parser{c: c, sql: sql, toks: toks, tree: tree, queries: map[int]*sqlparse.Query{}, exprAt: map[int]sqlparse.Expr{}, match: make([]int, len(toks)), refs: map[int]colRef{}}
	p.index(tree)
	inTree := map[*sqlparse.Error]bool{}
	sqlparse.Inspect(tree, func(n sqlparse.Node) bool {
		if e, ok := n.(*sqlparse.Error); ok {
			inTree[e] = true
		}
		return true
	})
	for _, e := range tree.Errors {
		if !inTree[e] && e.From < e.To {
			p.orphans = append(p.orphans, e)
		}
	}
	sort.Slice(p.orphans, func(i, j int) bool { return p.orphans[i].From < p.orphans[j].From })
	var stack []int
	for i, t := range toks {
		p.match[i] = -1
		if t.Kind != sqltext.Punct {
			continue
		}
		switch t.Text {
		case "(", "[":
			stack = append(stack, i)
		case ")", "]":
			open := "("
			if t.Text == "]" {
				open = "["
			}
			if len(stack) == 0 || toks[stack[len(stack)-1]].Text != open {
				p.unsure = true
				continue
			}
			o := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			p.match[o], p.match[i] = i, o
		}
	}
	if len(stack) > 0 {
		p.unsure = true
	}
	return p
}

// queryAt returns the query that starts at token k: the tree's, or,
// inside text the tree skipped, one parsed there on its own; nil if none.
func (p *parser) queryAt(k int) *sqlparse.Query {
	q := p.queries[k]
	if q == nil {
		if q = p.tree.QueryAt(k); q != nil {
			p.index(q)
		}
	}
	return q
}

// index adds the queries and expressions of the tree n to p.queries and
// p.exprAt.
func (p *parser) index(n sqlparse.Node) {
	sqlparse.Inspect(n, func(n sqlparse.Node) bool {
		switch v := n.(type) {
		case *sqlparse.Query:
			if p.queries[v.From] == nil {
				p.queries[v.From] = v
			}
		case sqlparse.Expr:
			if v.Extent().From == v.Extent().To {
				break
			}
			if x := p.exprAt[v.Extent().From]; x == nil || x.Extent().To < v.Extent().To {
				p.exprAt[v.Extent().From] = v
			}
		}
		return true
	})
}

func (p *parser) run() {
	if len(p.toks) == 0 {
		return
	}
	q, ok := p.tree.Stmts[0].(*sqlparse.Query)
	if !ok {
		p.unsure = true
		return
	}
	_, p.top = p.query(q, len(p.toks), nil, nil)
	for _, c := range p.ctes {
		if c.used {
			p.fails = append(p.fails, c.fails...)
		}
	}
}

func (p *parser) punct(k int, s string) bool {
	return k >= 0 && k < len(p.toks) && p.toks[k].Kind == sqltext.Punct && p.toks[k].Text == s
}

func (p *parser) word(k int, w string) bool {
	return k >= 0 && k < len(p.toks) && p.toks[k].Is(w)
}

// close returns the index of the parenthesis closing the one at k, within
// [k, end); an unbalanced one makes the parse unsure and ends at end-1.
func (p *parser) close(k, end int) int {
	if k >= 0 && k < len(p.match) && p.match[k] > k && p.match[k] < end {
		return p.match[k]
	}
	p.unsure = true
	if end-1 < k {
		return k
	}
	return end - 1
}

// ident returns the identifier t names, or false. Square brackets quote
// identifiers only in SQLite; elsewhere they are subscripts.
func (p *parser) ident(t sqltext.Token) (string, bool) {
	if t.Kind == sqltext.QuotedIdent && strings.HasPrefix(t.Text, "[") && p.c.dialect != text2sql.DialectSQLite {
		return "", false
	}
	return t.Ident()
}

// startsQuery reports whether the token at k starts a query.
func (p *parser) startsQuery(k int) bool {
	return p.word(k, "select") || p.word(k, "with") || p.word(k, "values")
}

func (p *parser) tok(k int) sqltext.Token {
	if k < 0 || k >= len(p.toks) {
		return sqltext.Token{}
	}
	return p.toks[k]
}

func (p *parser) fail(kind text2sql.ErrorKind, msg, hint string) {
	p.fails = append(p.fails, &text2sql.SQLError{Kind: kind, Message: msg, Hint: hint})
}

// subquery checks the query the tree has at token a, a parenthesised
// subquery of an expression that ends at the ")" at end.
func (p *parser) subquery(a, end int, sc *scope, env *cteEnv) {
	q := p.queryAt(a)
	if q == nil {
		p.unsure = true
		return
	}
	p.query(q, end, sc, env)
}

// query checks the query expression q, whose text runs to token end
// (exclusive; past q's span when the tree left tokens out): WITH, the
// operands of its set operations, ORDER BY and LIMIT. parent is the
// enclosing scope of a subquery.
func (p *parser) query(q *sqlparse.Query, end int, parent *scope, env *cteEnv) (*relation, *queryInfo) {
	if q == nil || p.depth >= maxDepth {
		p.unsure = true
		return openRelation(), nil
	}
	p.depth++
	defer func() { p.depth-- }()
	if q.With != nil {
		var ok bool
		if env, ok = p.with(q.With, parent, env); !ok {
			p.unsure = true
			return openRelation(), nil
		}
	}
	ops := p.operands(q, end)
	qi := &queryInfo{compound: len(ops) > 1}
	var rel *relation
	for n, op := range ops {
		if op.body.Extent().From == op.body.Extent().To {
			p.unsure = true // an operand is missing: SELECT … UNION
			continue
		}
		r, b := p.core(op.body, op.q, op.end, op.last, parent, env, len(ops) > 1 && n == len(ops)-1)
		if n == 0 {
			rel = r
		}
		qi.cores = append(qi.cores, b)
	}
	if rel == nil {
		rel = openRelation()
	}
	return rel, qi
}

// operand is one operand of a query's set operations.
type operand struct {
	body sqlparse.QueryBody
	q    *sqlparse.Query // the query it is an operand of
	last bool            // it is q's last, which gets q's ORDER BY and LIMIT
	end  int             // where its text ends: the next set operator, or the query's end
}

// operands returns the operands of the set operations of q, whose text
// runs to token end, left to right. A set operator in the text the tree
// left after q (LIMIT 1 UNION SELECT …, GROUP x HAVING … UNION SELECT …)
// joins the query after it, as written.
func (p *parser) operands(q *sqlparse.Query, end int) []operand {
	var bodies []sqlparse.QueryBody
	var flatten func(b sqlparse.QueryBody)
	flatten = func(b sqlparse.QueryBody) {
		if s, ok := b.(*sqlparse.SetOp); ok {
			flatten(s.Left)
			flatten(s.Right)
			return
		}
		bodies = append(bodies, b)
	}
	flatten(q.Body)
	var out []operand
	for n, b := range bodies {
		o := operand{body: b, q: q, last: n == len(bodies)-1, end: end}
		if !o.last {
			o.end = p.operatorAt(bodies[n+1].Extent().From)
		}
		out = append(out, o)
	}
	for k := q.To; k < end; k = p.skipParens(k, end) {
		if t := p.toks[k]; !(t.Is("union") || t.Is("intersect") || t.Is("except") || t.Is("minus")) {
			continue
		}
		s := k + 1
		if p.word(s, "all") || p.word(s, "distinct") {
			s++
		}
		if next := p.queryAt(s); next != nil {
			out[len(out)-1].end = k
			return append(out, p.operands(next, end)...)
		}
	}
	return out
}

// operatorAt returns the index of the set operator before the operand
// starting at token k: UNION [ALL|DISTINCT].
func (p *parser) operatorAt(k int) int {
	k--
	if p.word(k, "all") || p.word(k, "distinct") {
		k--
	}
	return k
}

// with checks the common table expressions of w and returns the
// environment that sees them; ok is false when the tree did not
// understand them.
func (p *parser) with(w *sqlparse.With, parent *scope, env *cteEnv) (*cteEnv, bool) {
	for _, c := range w.CTEs {
		name, ok := p.name(c.Name)
		if !ok || c.Query == nil || c.Query.From < 2 || !(p.word(c.Query.From-2, "as") || p.word(c.Query.From-2, "materialized")) {
			return env, false
		}
		self := openRelation()
		if c.Columns != nil {
			self = &relation{cols: append(p.names(c.Columns), p.names(c.Generated)...)}
		}
		env = &cteEnv{parent: env, name: name, rel: self}
		p.ctes = append(p.ctes, env)
		bodyParent := parent
		if p.c.dialect == text2sql.DialectSQLite {
			// SQLite expands a CTE where it is used: names its body does not
			// resolve may bind to the query that reads it.
			bodyParent = &scope{parent: parent, open: true}
		}
		mark := len(p.fails)
		rel, _ := p.query(c.Query, p.close(c.Query.From-1, len(p.toks)), bodyParent, env)
		if p.c.dialect != text2sql.DialectPostgres {
			env.fails = append(env.fails, p.fails[mark:]...)
			p.fails = p.fails[:mark]
		}
		if c.Columns == nil {
			*self = *rel
			self.cols = append(self.cols, p.names(c.Generated)...)
		}
	}
	if len(w.CTEs) == 0 {
		return env, false
	}
	return env, true
}

// name returns the name an identifier node gives, as ident reads its
// token.
func (p *parser) name(id *sqlparse.Ident) (string, bool) {
	if id == nil || id.To != id.From+1 {
		return "", false
	}
	return p.ident(p.toks[id.From])
}

// names returns the names of a column list, leaving out what is not a
// name.
func (p *parser) names(ids []*sqlparse.Ident) []string {
	var out []string
	for _, id := range ids {
		if n, ok := p.name(id); ok {
			out = append(out, n)
		}
	}
	return out
}

// core checks one operand of a query, whose text runs to token end. q is
// the query it belongs to; last is set on its last operand, which gets
// the query's ORDER BY and LIMIT, and tail when that operand is the last
// of a compound, whose ORDER BY and LIMIT belong to the whole.
func (p *parser) core(op sqlparse.QueryBody, q *sqlparse.Query, end int, last bool, parent *scope, env *cteEnv, tail bool) (*relation, *block) {
	switch v := op.(type) {
	case *sqlparse.ParenQuery:
		j := p.close(v.From, end)
		rel, _ := p.query(v.Query, j, parent, env)
		if j+1 < end {
			p.exprs(j+1, end, &scope{parent: parent, open: true}, env)
		}
		return rel, nil
	case *sqlparse.Values:
		p.exprs(v.From+1, end, &scope{parent: parent}, env)
		return openRelation(), nil
	case *sqlparse.Select:
		return p.selectCore(v, q, end, last, parent, env, tail)
	}
	p.unsure = true
	return openRelation(), nil
}

// selectCore is core for a SELECT: its FROM first, then its select list,
// the ON conditions and table functions of FROM, the other clauses, and
// the ORDER BY and LIMIT it gets (see core).
func (p *parser) selectCore(sel *sqlparse.Select, q *sqlparse.Query, end int, last bool, parent *scope, env *cteEnv, tail bool) (*relation, *block) {
	sc := &scope{parent: parent}
	blk := &block{sc: sc, from: -1}
	blk.distinct = sel.Distinct && p.word(sel.Span.From+1, "distinct")
	var tailQ *sqlparse.Query
	if last {
		tailQ = q
	}
	ct := p.clauses(sel, tailQ, end)
	blk.from = ct.from
	ons, calls := p.selectFrom(sel, ct, blk, env)
	blk.items = p.items(sel, ct.end(sel.Span.From))
	p.selectList(sel, blk, env)
	for _, e := range ons {
		p.exprs(e.a, e.b, sc, env)
	}
	for _, c := range calls {
		p.resolve(c, "", sc, env)
	}
	if sel.Where != nil {
		blk.conds = append([]sqlparse.Expr{sel.Where}, blk.conds...)
	}
	for _, g := range sel.GroupBy {
		blk.group = append(blk.group, span{g.Extent().From, g.Extent().To})
	}
	if len(blk.group) > 0 {
		blk.group[len(blk.group)-1].b = ct.group.b
	}
	for _, s := range []span{ct.where, ct.group, ct.having, ct.window, ct.qualify, ct.lock} {
		if s.ok() {
			p.exprs(s.a, s.b, sc, env)
		}
	}
	tailScope := sc
	if tail {
		tailScope = &scope{parent: sc, open: true}
	}
	p.orderLimit(q, ct, blk, tailScope, env)
	if p.word(sel.Span.From+1, "distinct") && p.word(sel.Span.From+2, "on") && p.punct(sel.Span.From+3, "(") {
		p.exprs(sel.Span.From+4, p.close(sel.Span.From+3, end), sc, env)
	}
	return output(blk), blk
}

// selectFrom checks the FROM clause of sel — in the tree, or in text the
// tree skipped — into blk and returns the spans of its ON conditions and
// its table functions' calls, which are checked after the select list.
func (p *parser) selectFrom(sel *sqlparse.Select, ct *clauseTexts, blk *block, env *cteEnv) (ons []span, calls []sqlparse.Node) {
	switch {
	case len(sel.From) > 0:
		return p.fromClause(sel.From, sel.Errors, false, blk, env, ct.end(ct.from))
	case ct.from >= 0:
		// A FROM clause in text the tree skipped.
		if items := p.tree.FromAt(ct.from + 1); len(items) > 0 {
			return p.fromClause(items, nil, true, blk, env, ct.end(ct.from))
		}
		blk.sc.open = true
	}
	return nil, nil
}

// selectList checks the select list of sel (blk.items) and adds the
// aliases of its items and named windows to blk's scope. The select list
// cannot name its own aliases; the other clauses (and, in SQLite, ON and
// WHERE) can.
func (p *parser) selectList(sel *sqlparse.Select, blk *block, env *cteEnv) {
	sc := blk.sc
	for _, wd := range sel.Windows {
		if n, ok := p.name(wd.Name); ok && p.word(wd.Name.To, "as") {
			sc.aliases = append(sc.aliases, n)
		}
	}
	for _, info := range blk.items {
		switch {
		case info.star:
		case info.starQual != nil:
			p.starQualifier(info.starQual, sc, env)
		default:
			p.exprs(info.expr.a, info.expr.b, sc, env)
		}
	}
	for _, info := range blk.items {
		if info.alias != "" {
			sc.aliases = append(sc.aliases, info.alias)
		}
	}
}

// orderLimit checks the ORDER BY, LIMIT, OFFSET and FETCH of q that ct
// found after the operand, in scope sc, and records its sort keys and
// row count in blk.
func (p *parser) orderLimit(q *sqlparse.Query, ct *clauseTexts, blk *block, sc *scope, env *cteEnv) {
	if ct.order.ok() {
		p.exprs(ct.order.a, ct.order.b, sc, env)
		for _, t := range q.OrderBy {
			blk.order = append(blk.order, keyOf(t))
		}
	}
	if ct.limit.ok() {
		blk.limit = true
		if n, ok := q.Limit.Count.(*sqlparse.Literal); ok && n.Kind == sqlparse.Number && n.To == n.From+1 && n.To == ct.limit.b {
			blk.count = n
		}
	}
	for _, s := range []span{ct.limit, ct.offset, ct.fetch} {
		if s.ok() {
			p.exprs(s.a, s.b, sc, env)
		}
	}
}

// output is the relation blk returns: the columns its items name.
func output(blk *block) *relation {
	sc := blk.sc
	rel := &relation{}
	for _, info := range blk.items {
		switch {
		case info.star:
			if sc.open || len(sc.sources) == 0 {
				rel.open = true
			}
			for _, s := range sc.sources {
				rel.cols = append(rel.cols, s.cols...)
				rel.open = rel.open || s.open
			}
		case info.starQual != nil:
			s := sc.find(info.starQual[len(info.starQual)-1])
			if s == nil || s.open {
				rel.open = true
			} else {
				rel.cols = append(rel.cols, s.cols...)
			}
		case info.name != "":
			rel.cols = append(rel.cols, info.name)
		default:
			rel.open = true
		}
	}
	return rel
}

// clauseTexts are the token ranges the clauses of one SELECT block run
// over, each from after its keyword to the next clause's keyword or the
// block's end, so that text the tree skipped is read with the clause it
// stands in. A range is none when the clause is absent.
type clauseTexts struct {
	kws                                 []int // the clause keywords
	stop                                int   // the block's end
	from                                int   // the FROM keyword, or -1
	where, group, having, window        span
	qualify, lock, order, limit, offset span
	fetch                               span
}

// end returns the end of the clause whose keyword is at k.
func (c *clauseTexts) end(k int) int {
	end := c.stop
	for _, q := range c.kws {
		if q > k && q < end {
			end = q
		}
	}
	return end
}

// clauses finds the clause texts of sel, whose text runs to token end; q
// is the query whose ORDER BY, LIMIT and locking clause sel gets (nil if
// none).
func (p *parser) clauses(sel *sqlparse.Select, q *sqlparse.Query, end int) *clauseTexts {
	c := &clauseTexts{stop: end, from: -1}
	var where, group, groupSkip, having, window, qualify, lock, order = -1, -1, 0, -1, -1, -1, -1, -1
	var limit, offset, fetch = -1, -1, -1
	at := func(v *int, k int) {
		if *v < 0 {
			*v = k
			c.kws = append(c.kws, k)
		}
	}
	if len(sel.From) > 0 {
		at(&c.from, sel.From[0].Extent().From-1)
	}
	if sel.Where != nil {
		at(&where, sel.Where.Extent().From-1)
	}
	if len(sel.GroupBy) > 0 {
		k := sel.GroupBy[0].Extent().From - 2
		if p.word(k+1, "all") || p.word(k+1, "distinct") {
			k--
		}
		at(&group, k)
		groupSkip = sel.GroupBy[0].Extent().From - k
	}
	if sel.Having != nil {
		at(&having, sel.Having.Extent().From-1)
	}
	if len(sel.Windows) > 0 {
		at(&window, sel.Windows[0].From-1)
	}
	left := sel.Span.To // where the text the tree left after the block starts
	if q != nil {
		left = q.To
		if len(q.OrderBy) > 0 {
			at(&order, q.OrderBy[0].From-2)
		}
		if l := q.Limit; l != nil {
			for k := l.From; k < l.To; k = p.skipParens(k, l.To) {
				switch {
				case p.word(k, "limit"):
					at(&limit, k)
				case p.word(k, "offset"):
					at(&offset, k)
				case p.word(k, "fetch"):
					at(&fetch, k)
				}
			}
		}
		if q.Lock != nil && p.word(q.Lock.From, "for") {
			at(&lock, q.Lock.From)
		}
	}
	for _, e := range sel.Errors {
		if p.word(e.From, "qualify") {
			at(&qualify, e.From)
		}
	}
	// In the text the tree left after the block: a QUALIFY clause it does
	// not know, or clauses after one it ended at (a lone GROUP, a second
	// WHERE), which count as written.
	for k := left; k < end; k = p.skipParens(k, end) {
		switch {
		case p.word(k, "qualify"):
			at(&qualify, k)
		case p.word(k, "where") && sel.Where == nil:
			at(&where, k)
		case p.word(k, "group") && p.word(k+1, "by") && sel.GroupBy == nil:
			at(&group, k)
			groupSkip = 2
		case p.word(k, "having") && sel.Having == nil:
			at(&having, k)
		case p.word(k, "from") && len(sel.From) == 0:
			at(&c.from, k)
		}
	}
	region := func(kw, skip int) span {
		if kw < 0 {
			return none
		}
		return span{kw + skip, c.end(kw)}
	}
	c.where, c.group, c.having, c.window = region(where, 1), region(group, groupSkip), region(having, 1), region(window, 1)
	c.qualify, c.lock, c.order = region(qualify, 1), region(lock, 1), region(order, 2)
	c.limit, c.offset, c.fetch = region(limit, 1), region(offset, 1), region(fetch, 2)
	return c
}

// fromClause reads the FROM items of blk, which run to token fromEnd,
// into blk, checks their subqueries and returns the texts of their ON
// and USING expressions, and their table functions. skipped are the texts the
// tree skipped in the block; stray marks a FROM clause in text the tree
// skipped, after whose items any text opens the scope.
func (p *parser) fromClause(items []sqlparse.TableExpr, skipped []*sqlparse.Error, stray bool, blk *block, env *cteEnv, fromEnd int) ([]span, []sqlparse.Node) {
	sc := blk.sc
	fw := &fromWalk{sc: sc, env: env}
	for _, e := range skipped {
		if e.From > blk.from && e.From < fromEnd {
			fw.errs = append(fw.errs, e)
		}
	}
	for i, t := range items {
		if i > 0 && !p.punct(t.Extent().From-1, ",") {
			sc.open = true
			break
		}
		p.tableExpr(t, fw)
		if fw.stopped {
			break
		}
	}
	if !fw.stopped && len(fw.errs) > 0 {
		sc.open = true
	}
	extended := false
	for n := fw.lastOn; !fw.stopped && n > 0 && fw.exprs[n-1].b < fromEnd; n = fw.lastOn {
		// The last ON condition runs to the end of the FROM clause, or to a
		// join or a comma in the text the tree did not read, after which
		// the FROM clause goes on.
		extended = true
		j := p.joinAfter(fw.exprs[n-1].b, fromEnd)
		fw.exprs[n-1].b = j
		if j == fromEnd {
			break
		}
		fw.lastOn = 0
		k := j
		if p.punct(j, ",") {
			k++
		}
		more := p.tree.FromAt(k)
		for _, t := range more {
			p.tableExpr(t, fw)
		}
		if fw.lastOn == 0 && (len(more) == 0 || more[len(more)-1].Extent().To < fromEnd) {
			sc.open = true // text after the FROM items that is no clause
			break
		}
	}
	if last := items[len(items)-1].Extent().To; !extended && !fw.stopped && stray && last < fromEnd {
		sc.open = true // text after the FROM items that is no clause
	}
	for _, d := range fw.derived {
		rel, _ := p.query(d.q, d.end, sc, env)
		if d.src.colList != nil {
			d.src.cols = append(append([]string(nil), d.src.colList...), rel.cols...)
		} else {
			d.src.cols = rel.cols
		}
		d.src.open = rel.open
		d.src.pending = false
	}
	blk.conds = fw.ons
	return fw.exprs, fw.calls
}

// joinAfter returns the index of the first join operator or comma
// outside parentheses in tokens [k, end), or end.
func (p *parser) joinAfter(k, end int) int {
	for ; k < end; k = p.skipParens(k, end) {
		t := p.toks[k]
		if p.punct(k, ",") || t.Kind == sqltext.Word && joinWords[strings.ToLower(t.Text)] && !p.punct(k-1, ".") && !p.punct(k+1, ".") &&
			!((t.Is("left") || t.Is("right")) && p.punct(k+1, "(")) {
			return k
		}
	}
	return end
}

// skipParens returns the index after the token at k, or after the
// parenthesis or (PostgreSQL) bracket it opens.
func (p *parser) skipParens(k, end int) int {
	if p.punct(k, "(") || p.punct(k, "[") {
		return p.close(k, end) + 1
	}
	return k + 1
}

// keyOf is the ORDER BY key t, without its COLLATE.
func keyOf(t *sqlparse.OrderTerm) orderKey {
	x := t.Expr
	for {
		c, ok := x.(*sqlparse.Collate)
		if !ok {
			break
		}
		x = c.X
	}
	e := x.Extent()
	return orderKey{expr: span{e.From, e.To}, desc: t.Desc, nulls: t.Nulls != ""}
}

// operatorWords are words after which an expression continues: a word
// following one of them is an operand, not an alias.
var operatorWords = wordSet(`and or not is in like ilike glob regexp rlike match between escape collate case
when then else distinct as select by on over filter from where having div mod xor similar to using interval
all any some exists cast with within join left right inner outer cross natural full group order limit offset
union except intersect values set into top`)

// items reads the select list of sel, which runs from its first item to
// listEnd, split at the commas outside parentheses: the tree's items, and
// in text the tree skipped, the items as written.
func (p *parser) items(sel *sqlparse.Select, listEnd int) []itemInfo {
	if len(sel.Items) == 0 {
		return nil
	}
	var out []itemInfo
	start := sel.Items[0].From
	for k := start; k <= listEnd; k = p.skipParens(k, listEnd) {
		if k == listEnd || p.punct(k, ",") {
			if k > start {
				out = append(out, p.item(span{start, k}))
			}
			start = k + 1
		}
	}
	return out
}

// item reads one select-list item by its tokens: star, qualified star,
// or an expression with its alias (the last word, after AS or an operand)
// and output name. The tokens decide, not the tree's alias, so that an
// item with text the tree skipped reads as one.
func (p *parser) item(it span) itemInfo {
	a, b := it.a, it.b
	info := itemInfo{expr: it}
	if b-a == 1 && p.punct(a, "*") {
		info.star = true
		return info
	}
	if b-a >= 3 && p.punct(b-1, "*") && p.punct(b-2, ".") {
		var parts []string
		for k := a; k < b-2; k++ {
			if p.punct(k, ".") {
				continue
			}
			n, ok := p.ident(p.toks[k])
			if !ok {
				return info
			}
			parts = append(parts, n)
		}
		if len(parts) > 0 {
			info.starQual = parts
		}
		return info
	}
	last := p.toks[b-1]
	whole := false // the tree reads the item as one expression, no alias
	if x := p.exprAt[a]; x != nil && !isError(x) && x.Extent().To == b {
		whole = true
	}
	switch {
	case whole:
	case b-a >= 3 && p.word(b-2, "as"):
		if n, ok := p.aliasName(last); ok {
			info.alias, info.expr = n, span{a, b - 2}
		}
	case b-a >= 2 && (last.Kind == sqltext.Word || last.Kind == sqltext.QuotedIdent):
		if last.Kind == sqltext.Word && reservedAfterOperand[strings.ToLower(last.Text)] {
			break
		}
		if n, ok := p.ident(last); ok && p.operandEnd(b-2) {
			info.alias, info.expr = n, span{a, b - 1}
		}
	}
	if info.alias != "" {
		info.name = info.alias
		return info
	}
	// A bare or qualified column names its output.
	e := info.expr
	ok := true
	for k := e.a; k < e.b; k++ {
		if (k-e.a)%2 == 1 {
			ok = ok && p.punct(k, ".")
		} else {
			_, isID := p.ident(p.toks[k])
			ok = ok && isID
		}
	}
	if ok && (e.b-e.a)%2 == 1 {
		if n, _ := p.ident(p.toks[e.b-1]); n != "" {
			info.name = n
		}
	}
	return info
}

// aliasName returns the name an alias token gives (identifiers, and
// strings, which SQLite and MySQL accept after AS).
func (p *parser) aliasName(t sqltext.Token) (string, bool) {
	if t.Kind == sqltext.String && strings.HasPrefix(t.Text, "'") && len(t.Text) >= 2 {
		return strings.ReplaceAll(t.Text[1:len(t.Text)-1], "''", "'"), true
	}
	return p.ident(t)
}

// operandEnd reports whether the token at k can end an operand.
func (p *parser) operandEnd(k int) bool {
	t := p.tok(k)
	switch t.Kind {
	case sqltext.Word:
		return !operatorWords[strings.ToLower(t.Text)]
	case sqltext.QuotedIdent, sqltext.String, sqltext.Number, sqltext.Param:
		return true
	case sqltext.Punct:
		return t.Text == ")"
	}
	return false
}

type derivedItem struct {
	q   *sqlparse.Query
	end int // the ")" closing the subquery
	src *source
}

// fromWalk is the state of reading one FROM clause, and what it leaves
// to check once all its sources are known: subqueries, and ON, USING and
// function-argument expressions.
type fromWalk struct {
	sc      *scope
	env     *cteEnv
	derived []derivedItem
	exprs   []span
	// errs are the texts the tree skipped in the FROM clause, in order;
	// reading stops (and the scope opens) at the first.
	errs    []*sqlparse.Error
	stopped bool
	ons     []sqlparse.Expr // the ON conditions
	// calls are the table functions, whose arguments may name the
	// sources before them (LATERAL).
	calls []sqlparse.Node
	// lastOn is 1 + the index in exprs of the ON condition read last,
	// 0 when something else was read after it.
	lastOn int
}

// stopBefore opens the scope and stops the walk when the tree skipped
// text before token k.
func (fw *fromWalk) stopBefore(k int) bool {
	if !fw.stopped && len(fw.errs) > 0 && fw.errs[0].From < k {
		fw.stopped = true
		fw.sc.open = true
	}
	return fw.stopped
}

// tableExpr reads the FROM item t into fw.sc.
func (p *parser) tableExpr(t sqlparse.TableExpr, fw *fromWalk) {
	if fw.stopBefore(t.Extent().From) {
		return
	}
	sc := fw.sc
	if _, ok := t.(*sqlparse.Join); !ok {
		fw.lastOn = 0 // an item comes after the last ON condition
	}
	switch t := t.(type) {
	case *sqlparse.Join:
		p.joinExpr(t, fw)
	case *sqlparse.TableName:
		p.tableName(t, fw)
	case *sqlparse.TableFunc:
		p.tableFunc(t, fw)
	case *sqlparse.DerivedTable:
		open := t.From
		if t.Lateral {
			open++
		}
		src := &source{open: true, derived: true, pending: true}
		fw.derived = append(fw.derived, derivedItem{t.Query, p.close(open, len(p.toks)), src})
		p.tableAlias(src, t.Alias, t.Columns)
		sc.sources = append(sc.sources, src)
	case *sqlparse.ParenTable:
		p.tableExpr(t.Table, fw)
		fw.lastOn = 0 // an ON inside the parentheses ends at them
		src := &source{open: true}
		p.tableAlias(src, t.Alias, nil)
		if src.alias != "" {
			sc.sources = append(sc.sources, src)
		}
	default:
		sc.open = true
		fw.stopped = true
	}
}

// joinExpr reads a join's two sides into fw.sc and records its ON
// condition or USING list for checking once the FROM clause is read.
func (p *parser) joinExpr(t *sqlparse.Join, fw *fromWalk) {
	if l := t.Left.Extent(); l.From < l.To || !isError(t.Left) { // not a join that goes on a FROM clause (FromAt)
		p.tableExpr(t.Left, fw)
	}
	if fw.stopped || fw.stopBefore(t.Right.Extent().From) {
		return
	}
	p.tableExpr(t.Right, fw)
	if fw.stopped {
		return
	}
	switch {
	case t.On != nil:
		e := t.On.Extent()
		if fw.stopBefore(e.From) {
			return
		}
		end := e.To
		if len(fw.errs) > 0 && fw.errs[0].From == end {
			// Text the tree skipped after the condition: part of it, as
			// written.
			end = fw.errs[0].To
			fw.errs = fw.errs[1:]
		}
		fw.exprs = append(fw.exprs, span{e.From, end})
		fw.lastOn = len(fw.exprs)
		fw.ons = append(fw.ons, t.On)
	case t.Using != nil:
		fw.exprs = append(fw.exprs, span{t.Using[0].From, t.Using[len(t.Using)-1].To})
		fw.lastOn = 0
		if a, ok := p.name(t.UsingAlias); ok {
			// JOIN … USING (a) AS j: j names the joined columns.
			fw.sc.sources = append(fw.sc.sources, &source{alias: a, cols: p.names(t.Using)})
		}
	}
}

// tableName reads a named table (or CTE) into fw.sc; a string or a
// keyword where its name should be stops the walk.
func (p *parser) tableName(t *sqlparse.TableName, fw *fromWalk) {
	var parts []string
	for _, id := range t.Parts {
		n, ok := p.name(id)
		if !ok || len(parts) == 0 && p.toks[id.From].Kind == sqltext.Word && notAlias[strings.ToLower(n)] {
			fw.sc.open = true
			fw.stopped = true
			return
		}
		parts = append(parts, n)
	}
	src := p.tableSource(parts, fw.env)
	p.tableAlias(src, t.Alias, t.Columns)
	if src.colList != nil {
		src.cols = append(append([]string(nil), src.colList...), src.cols...)
	}
	fw.sc.sources = append(fw.sc.sources, src)
}

// tableFunc reads a table function (or a ROWS FROM of several) into
// fw.sc, its calls kept for checking once the FROM clause is read. Its
// columns are open unless a COLUMNS clause (JSON_TABLE, XMLTABLE) or a
// column list names them.
func (p *parser) tableFunc(t *sqlparse.TableFunc, fw *fromWalk) {
	src := &source{open: true}
	calls := t.Rows
	if c := t.Call; c != nil {
		calls = []*sqlparse.Call{c}
		src.name, _ = p.name(c.Name[len(c.Name)-1])
		if len(c.Columns) > 0 {
			src.cols, src.open = p.names(c.Columns), false
		}
	}
	for _, c := range calls {
		fw.calls = append(fw.calls, c)
	}
	p.tableAlias(src, t.Alias, t.Columns)
	if src.colList != nil {
		src.cols, src.open = src.colList, false
	}
	if t.Ordinality {
		src.cols = append(src.cols, "ordinality")
	}
	fw.sc.sources = append(fw.sc.sources, src)
}

// tableAlias gives src the alias a and its column list.
func (p *parser) tableAlias(src *source, a *sqlparse.Ident, cols []*sqlparse.Ident) {
	if a == nil || a.To != a.From+1 {
		return
	}
	var n string
	var ok bool
	if p.word(a.From-1, "as") {
		n, ok = p.aliasName(p.toks[a.From])
	} else {
		t := p.toks[a.From]
		n, ok = p.ident(t)
		ok = ok && !(t.Kind == sqltext.Word && notAlias[strings.ToLower(t.Text)])
	}
	if !ok {
		return
	}
	src.alias = n
	src.colList = p.names(cols)
}

// tableSource resolves a table name of a FROM clause. An unknown table is
// a failure with the closest real name as a hint, unless it may exist
// outside the schema model (a system table, an unknown schema).
func (p *parser) tableSource(parts []string, env *cteEnv) *source {
	name := parts[len(parts)-1]
	if len(parts) == 1 {
		if c := env.find(name); c != nil {
			c.used = true
			return &source{name: name, cols: c.rel.cols, open: c.rel.open}
		}
	}
	db := p.c.db
	if db == nil {
		return &source{name: name, open: true}
	}
	if t := p.lookupTable(parts); t != nil {
		return baseSource(t)
	}
	src := &source{name: name, open: true}
	if len(parts) > 1 {
		src.schema = parts[len(parts)-2]
	}
	lname := strings.ToLower(name)
	if systemTables[lname] || p.c.dialect == text2sql.DialectMySQL && (lname == "dual" || sequenceTable.MatchString(lname)) ||
		strings.HasPrefix(lname, "pg_") || strings.HasPrefix(lname, "sqlite_") {
		return src
	}
	if len(parts) > 2 {
		return src
	}
	if len(parts) == 2 && !p.schemaKnown(parts[0]) {
		return src
	}
	for _, t := range db.Tables {
		if strings.EqualFold(t.Name, name) {
			return src // ambiguous across schemas, or qualified oddly: the engine decides
		}
	}
	qual := strings.Join(parts, ".")
	p.fail(text2sql.KindUnknownTable, "no such table: "+qual, Suggest(db, text2sql.KindUnknownTable, qual, p.sql))
	return src
}

// sequenceTable matches the names of MariaDB's virtual tables of the
// Sequence engine (seq_1_to_10, seq_0_to_100_step_5), which every
// database has without listing them.
var sequenceTable = regexp.MustCompile(`^seq_[0-9]+_to_[0-9]+(_step_[0-9]+)?$`)

func baseSource(t *schema.Table) *source {
	s := &source{name: t.Name, schema: t.Schema, table: t}
	for _, c := range t.Columns {
		s.cols = append(s.cols, c.Name)
	}
	s.open = len(s.cols) == 0
	return s
}

// lookupTable finds the table a possibly qualified name designates.
func (p *parser) lookupTable(parts []string) *schema.Table {
	db := p.c.db
	if len(parts) == 1 {
		return db.Lookup(parts[0])
	}
	if len(parts) > 2 {
		parts = parts[len(parts)-2:]
	}
	if t := db.Lookup(parts[0] + "." + parts[1]); t != nil {
		return t
	}
	if p.defaultSchema(parts[0]) {
		return db.Lookup(parts[1])
	}
	return nil
}

// defaultSchema reports whether sch names the default namespace of the
// database: SQLite's main or temp, MySQL's database, PostgreSQL's public.
func (p *parser) defaultSchema(sch string) bool {
	switch p.c.dialect {
	case text2sql.DialectSQLite:
		return strings.EqualFold(sch, "main") || strings.EqualFold(sch, "temp")
	case text2sql.DialectPostgres:
		return strings.EqualFold(sch, "public")
	}
	return p.c.db != nil && strings.EqualFold(sch, p.c.db.Name)
}

// schemaKnown reports whether the schema model knows the namespace sch,
// so that a table missing from it is certainly unknown.
func (p *parser) schemaKnown(sch string) bool {
	if systemSchemas[strings.ToLower(sch)] && !(p.c.dialect == text2sql.DialectSQLite && strings.EqualFold(sch, "main")) {
		return false
	}
	if p.defaultSchema(sch) {
		return true
	}
	for _, t := range p.c.db.Tables {
		if strings.EqualFold(t.Schema, sch) {
			return true
		}
	}
	return false
}

// tableExists reports whether name is a table of the schema model.
func (p *parser) tableExists(name string) bool {
	if p.c.db == nil {
		return true
	}
	for _, t := range p.c.db.Tables {
		if strings.EqualFold(t.Name, name) || strings.EqualFold(t.QualifiedName(), name) {
			return true
		}
	}
	return false
}

// starQualifier checks the qualifier of "q.*".
func (p *parser) starQualifier(parts []string, sc *scope, env *cteEnv) {
	q := parts[len(parts)-1]
	if sc.find(q) != nil || sc.anyOpen() || len(parts) > 1 {
		return
	}
	p.fail(text2sql.KindUnknownTable, "no such table: "+q+" (in "+q+".*): no table or alias "+q+" in the FROM clause", p.aliasHint(sc))
}
