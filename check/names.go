package check

import (
	"strings"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/guard"
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
	from     int // index of FROM, or -1
	where    span
	group    span
	having   span
	order    []orderKey
	limit    span // tokens after LIMIT up to OFFSET or the end
	offset   bool
	ons      []span
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

type parser struct {
	c     *Checker
	sql   string
	toks  []sqltext.Token
	match []int
	// afterParens[k] is the index of the first token at or after k that
	// is not an opening parenthesis.
	afterParens []int
	fails       []*text2sql.SQLError
	unsure      bool // the text was not understood: report no name failure
	depth       int
	refs        map[int]colRef // by the index of the reference's first token
	top         *queryInfo
	ctes        []*cteEnv
	// typeDepth is the nesting of the running type inference.
	typeDepth int
}

func newParser(c *Checker, sql string, toks []sqltext.Token) *parser {
	p := &parser{c: c, sql: sql, toks: toks, match: make([]int, len(toks)), afterParens: make([]int, len(toks)), refs: map[int]colRef{}}
	next := len(toks)
	for i := len(toks) - 1; i >= 0; i-- {
		if !(toks[i].Kind == sqltext.Punct && toks[i].Text == "(") {
			next = i
		}
		p.afterParens[i] = next
	}
	var stack []int
	for i, t := range toks {
		p.match[i] = -1
		if t.Kind != sqltext.Punct {
			continue
		}
		switch t.Text {
		case "(":
			stack = append(stack, i)
		case ")":
			if len(stack) == 0 {
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

func (p *parser) run() {
	if len(p.toks) == 0 {
		return
	}
	_, p.top = p.query(0, len(p.toks), nil, nil)
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
	if m := p.match[k]; m > k && m < end {
		return m
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

// startsQuery reports whether the tokens at k (after any opening
// parentheses) start a query.
func (p *parser) startsQuery(k int) bool {
	if k >= 0 && k < len(p.toks) {
		k = p.afterParens[k]
	}
	return p.word(k, "select") || p.word(k, "with") || p.word(k, "values")
}

func (p *parser) fail(kind text2sql.ErrorKind, msg, hint string) {
	p.fails = append(p.fails, &text2sql.SQLError{Kind: kind, Message: msg, Hint: hint})
}

// query parses the query expression in [i, end): WITH, cores joined by
// set operators, ORDER BY and LIMIT. parent is the enclosing scope of a
// subquery.
func (p *parser) query(i, end int, parent *scope, env *cteEnv) (*relation, *queryInfo) {
	if p.depth >= maxDepth || i >= end {
		p.unsure = true
		return openRelation(), nil
	}
	p.depth++
	defer func() { p.depth-- }()
	if p.word(i, "with") {
		i, env = p.with(i+1, end, parent, env)
		if i >= end {
			p.unsure = true
			return openRelation(), nil
		}
	}
	var cores []span
	start := i
	for k := i; k < end; k++ {
		if p.punct(k, "(") {
			k = p.close(k, end)
			continue
		}
		t := p.toks[k]
		if t.Kind == sqltext.Word && setOperators[strings.ToLower(t.Text)] {
			cores = append(cores, span{start, k})
			if p.word(k+1, "all") || p.word(k+1, "distinct") {
				k++
			}
			start = k + 1
		}
	}
	cores = append(cores, span{start, end})
	qi := &queryInfo{compound: len(cores) > 1}
	var rel *relation
	for n, c := range cores {
		if c.b <= c.a {
			p.unsure = true
			continue
		}
		r, b := p.core(c.a, c.b, parent, env, len(cores) > 1 && n == len(cores)-1)
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

// with parses the common table expressions after WITH and returns the
// index after them and the environment that sees them.
func (p *parser) with(k, end int, parent *scope, env *cteEnv) (int, *cteEnv) {
	if p.word(k, "recursive") {
		k++
	}
	for k < end {
		name, ok := p.ident(p.toks[k])
		if !ok {
			p.unsure = true
			return end, env
		}
		k++
		self := openRelation()
		hasCols := false
		if p.punct(k, "(") {
			j := p.close(k, end)
			self = &relation{cols: p.firstIdents(k+1, j)}
			hasCols = true
			k = j + 1
		}
		if !p.word(k, "as") {
			p.unsure = true
			return end, env
		}
		k++
		for p.word(k, "not") || p.word(k, "materialized") {
			k++
		}
		if !p.punct(k, "(") {
			p.unsure = true
			return end, env
		}
		j := p.close(k, end)
		env = &cteEnv{parent: env, name: name, rel: self}
		p.ctes = append(p.ctes, env)
		bodyParent := parent
		if p.c.dialect == text2sql.DialectSQLite {
			// SQLite expands a CTE where it is used: names its body does not
			// resolve may bind to the query that reads it.
			bodyParent = &scope{parent: parent, open: true}
		}
		mark := len(p.fails)
		rel, _ := p.query(k+1, j, bodyParent, env)
		if p.c.dialect != text2sql.DialectPostgres {
			env.fails = append(env.fails, p.fails[mark:]...)
			p.fails = p.fails[:mark]
		}
		if !hasCols {
			*self = *rel
		}
		k = j + 1
		// PostgreSQL SEARCH … SET x / CYCLE … SET y USING z: skip to the comma.
		for k < end && !p.punct(k, ",") && (p.word(k, "search") || p.word(k, "cycle") || k > j+1) {
			if p.punct(k, "(") {
				k = p.close(k, end)
			}
			if p.word(k, "select") || p.word(k, "with") || p.word(k, "values") {
				break
			}
			k++
		}
		if p.punct(k, ",") {
			k++
			continue
		}
		break
	}
	return k, env
}

// selectItems returns the items of the select list of the core starting
// at the SELECT at a, and the positions of its depth-0 clause keywords.
func (p *parser) selectItems(a, b int) ([]span, map[string]int) {
	k := a + 1
modifiers:
	for k < b {
		t := p.toks[k]
		switch {
		case t.Is("distinct") && p.word(k+1, "on") && p.punct(k+2, "("):
			k = p.close(k+2, b) + 1
		case t.Is("top") && k+1 < b && (p.toks[k+1].Kind == sqltext.Number || p.punct(k+1, "(")):
			if p.punct(k+1, "(") {
				k = p.close(k+1, b) + 1
			} else {
				k += 2
			}
			if p.word(k, "percent") {
				k++
			}
			if p.word(k, "with") && p.word(k+1, "ties") {
				k += 2
			}
		case t.Kind == sqltext.Word && selectModifiers[strings.ToLower(t.Text)]:
			k++
		default:
			break modifiers
		}
	}
	clauses := p.clauses(k, b)
	end := b
	for _, pos := range clauses {
		end = min(end, pos)
	}
	var items []span
	start := k
	for j := k; j < end; j++ {
		if p.punct(j, "(") {
			j = p.close(j, end)
			continue
		}
		if p.punct(j, ",") {
			items = append(items, span{start, j})
			start = j + 1
		}
	}
	if end > start {
		items = append(items, span{start, end})
	}
	return items, clauses
}

// clauses finds the clause keywords of a core at depth 0 in [k, b).
func (p *parser) clauses(k, b int) map[string]int {
	out := map[string]int{}
	for ; k < b; k++ {
		if p.punct(k, "(") {
			k = p.close(k, b)
			continue
		}
		t := p.toks[k]
		if t.Kind != sqltext.Word {
			continue
		}
		w := strings.ToLower(t.Text)
		if !clauseWords[w] || p.punct(k-1, ".") || p.punct(k+1, ".") {
			continue
		}
		switch w {
		case "from":
			if p.word(k-1, "distinct") { // IS [NOT] DISTINCT FROM
				continue
			}
		case "group", "order":
			if !p.word(k+1, "by") {
				continue
			}
		case "window":
			if _, ok := p.ident(p.tok(k + 1)); !ok || !p.word(k+2, "as") {
				continue
			}
		case "fetch":
			if !p.word(k+1, "first") && !p.word(k+1, "next") {
				continue
			}
		case "for":
			if !(p.word(k+1, "update") || p.word(k+1, "share") || p.word(k+1, "no") || p.word(k+1, "key") ||
				p.word(k+1, "read") || p.word(k+1, "xml") || p.word(k+1, "json")) {
				continue
			}
		}
		if _, dup := out[w]; !dup {
			out[w] = k
		}
	}
	return out
}

func (p *parser) tok(k int) sqltext.Token {
	if k < 0 || k >= len(p.toks) {
		return sqltext.Token{}
	}
	return p.toks[k]
}

// core parses one core of a compound query in [a, b). tail is set on the
// last core of a compound, whose ORDER BY and LIMIT belong to the whole.
func (p *parser) core(a, b int, parent *scope, env *cteEnv, tail bool) (*relation, *block) {
	switch {
	case p.punct(a, "("):
		j := p.close(a, b)
		rel, _ := p.query(a+1, j, parent, env)
		if j+1 < b {
			p.exprs(j+1, b, &scope{parent: parent, open: true}, env)
		}
		return rel, nil
	case p.word(a, "values"):
		p.exprs(a+1, b, &scope{parent: parent}, env)
		return openRelation(), nil
	case !p.word(a, "select"):
		p.unsure = true
		return openRelation(), nil
	}
	sc := &scope{parent: parent}
	blk := &block{sc: sc, from: -1, where: none, group: none, having: none, limit: none}
	items, clauses := p.selectItems(a, b)
	for k := a + 1; k < b && (len(items) == 0 || k < items[0].a); k++ {
		if p.word(k, "distinct") {
			blk.distinct = true
		}
		if p.word(k, "on") && p.punct(k+1, "(") && p.word(k-1, "distinct") {
			j := p.close(k+1, b)
			defer p.exprs(k+2, j, sc, env)
		}
	}
	// Clause spans: each runs to the next clause keyword.
	spanOf := func(w string, skip int) span {
		pos, ok := clauses[w]
		if !ok {
			return none
		}
		end := b
		for _, q := range clauses {
			if q > pos && q < end {
				end = q
			}
		}
		return span{pos + skip, end}
	}
	var ons []span
	from := spanOf("from", 1)
	if from.a >= 0 {
		blk.from = from.a - 1
		w := &fromWork{}
		p.fromList(from.a, from.b, sc, env, w)
		for _, d := range w.derived {
			rel, _ := p.query(d.a, d.b, sc, env)
			if d.src.colList != nil {
				d.src.cols = append(append([]string(nil), d.src.colList...), rel.cols...)
			} else {
				d.src.cols = rel.cols
			}
			d.src.open = rel.open
			d.src.pending = false
		}
		blk.ons = w.exprs
		ons = w.exprs
	}
	for _, it := range items {
		blk.items = append(blk.items, p.item(it))
	}
	win := spanOf("window", 1)
	if win.ok() {
		for k := win.a; k < win.b; k++ {
			if p.punct(k, "(") {
				k = p.close(k, win.b)
				continue
			}
			if n, ok := p.ident(p.toks[k]); ok && p.word(k+1, "as") {
				sc.aliases = append(sc.aliases, n)
			}
		}
	}
	// The select list cannot name its own aliases; the other clauses (and,
	// in SQLite, ON and WHERE) can.
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
	for _, e := range ons {
		p.exprs(e.a, e.b, sc, env)
	}
	blk.where = spanOf("where", 1)
	blk.group = spanOf("group", 2)
	blk.having = spanOf("having", 1)
	for _, s := range []span{blk.where, blk.group, blk.having, win, spanOf("qualify", 1), spanOf("for", 1)} {
		if s.ok() {
			p.exprs(s.a, s.b, sc, env)
		}
	}
	tailScope := sc
	if tail {
		tailScope = &scope{parent: sc, open: true}
	}
	order := spanOf("order", 2)
	if order.ok() {
		p.exprs(order.a, order.b, tailScope, env)
		blk.order = p.orderKeys(order)
	}
	blk.limit = spanOf("limit", 1)
	off := spanOf("offset", 1)
	blk.offset = off.a >= 0
	for _, s := range []span{blk.limit, off, spanOf("fetch", 1)} {
		if s.ok() {
			p.exprs(s.a, s.b, tailScope, env)
		}
	}
	if blk.limit.ok() {
		for k := blk.limit.a; k < blk.limit.b; k++ {
			if p.punct(k, ",") {
				blk.offset = true
			}
		}
	}

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
	return rel, blk
}

// orderKeys splits an ORDER BY list into its terms.
func (p *parser) orderKeys(s span) []orderKey {
	var keys []orderKey
	start := s.a
	add := func(end int) {
		k := orderKey{expr: span{start, end}}
		for k.expr.b > k.expr.a {
			last := p.toks[k.expr.b-1]
			switch {
			case last.Is("asc"):
			case last.Is("desc"):
				k.desc = true
			case (last.Is("first") || last.Is("last")) && p.word(k.expr.b-2, "nulls"):
				k.nulls = true
				k.expr.b--
			case p.word(k.expr.b-2, "collate"):
				k.expr.b--
			default:
				keys = append(keys, k)
				return
			}
			k.expr.b--
		}
	}
	for k := s.a; k < s.b; k++ {
		if p.punct(k, "(") {
			k = p.close(k, s.b)
			continue
		}
		if p.punct(k, ",") {
			add(k)
			start = k + 1
		}
	}
	add(s.b)
	return keys
}

// operatorWords are words after which an expression continues: a word
// following one of them is an operand, not an alias.
var operatorWords = wordSet(`and or not is in like ilike glob regexp rlike match between escape collate case
when then else distinct as select by on over filter from where having div mod xor similar to using interval
all any some exists cast with within join left right inner outer cross natural full group order limit offset
union except intersect values set into top`)

// item reads one select-list item: star, qualified star, or an expression
// with its alias and output name.
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
	switch {
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

// firstIdents returns the first identifier of each comma-separated group
// in [a, b): a column list, with or without types.
func (p *parser) firstIdents(a, b int) []string {
	var out []string
	want := true
	for k := a; k < b; k++ {
		if p.punct(k, "(") {
			k = p.close(k, b)
			continue
		}
		if p.punct(k, ",") {
			want = true
			continue
		}
		if want {
			if n, ok := p.ident(p.toks[k]); ok {
				out = append(out, n)
			}
			want = false
		}
	}
	return out
}

// fromWork is what a FROM clause leaves to check once all its sources are
// known: subqueries, and ON, USING and function-argument expressions.
type fromWork struct {
	derived []derivedItem
	exprs   []span
}

type derivedItem struct {
	a, b int
	src  *source
}

// fromList reads the FROM items in [a, b) into sc.
func (p *parser) fromList(a, b int, sc *scope, env *cteEnv, w *fromWork) {
	k := a
	for k < b {
		for p.word(k, "lateral") || p.word(k, "only") {
			k++
		}
		if k >= b {
			sc.open = true
			return
		}
		t := p.toks[k]
		var src *source
		if p.punct(k, "(") {
			j := p.close(k, b)
			if p.startsQuery(k + 1) {
				src = &source{open: true, derived: true, pending: true}
				w.derived = append(w.derived, derivedItem{k + 1, j, src})
			} else {
				p.fromList(k+1, j, sc, env, w)
				src = &source{open: true}
			}
			k = p.alias(j+1, b, src)
			if src.derived || src.alias != "" {
				sc.sources = append(sc.sources, src)
			}
		} else if _, ok := p.ident(t); ok && !(t.Kind == sqltext.Word && notAlias[strings.ToLower(t.Text)]) {
			parts, j := p.chain(k, b)
			if p.punct(j, "(") {
				cj := p.close(j, b)
				w.exprs = append(w.exprs, span{j + 1, cj})
				src = &source{open: true, name: parts[len(parts)-1]}
				k = p.alias(cj+1, b, src)
				if src.colList != nil {
					src.cols, src.open = src.colList, false
				}
			} else {
				src = p.tableSource(parts, env)
				k = p.alias(j, b, src)
				if src.colList != nil {
					src.cols = append(append([]string(nil), src.colList...), src.cols...)
				}
			}
			sc.sources = append(sc.sources, src)
		} else {
			sc.open = true
			return
		}
		k = p.skipTableHints(k, b)
		switch {
		case p.word(k, "on"):
			e := p.onEnd(k+1, b)
			w.exprs = append(w.exprs, span{k + 1, e})
			k = e
		case p.word(k, "using") && p.punct(k+1, "("):
			j := p.close(k+1, b)
			w.exprs = append(w.exprs, span{k + 2, j})
			k = j + 1
		}
		if k >= b {
			return
		}
		if p.punct(k, ",") {
			k++
			continue
		}
		j := k
		for j < b && p.joinWord(j) {
			j++
		}
		if j == k || !(p.word(j-1, "join") || p.word(j-1, "straight_join") || p.word(j-1, "apply")) {
			sc.open = true
			return
		}
		k = j
	}
}

// chain reads a dotted name at k and returns its parts and the index
// after it.
func (p *parser) chain(k, b int) ([]string, int) {
	n, _ := p.ident(p.toks[k])
	parts := []string{n}
	j := k + 1
	for j+1 < b && p.punct(j, ".") {
		n, ok := p.ident(p.toks[j+1])
		if !ok {
			break
		}
		parts = append(parts, n)
		j += 2
	}
	return parts, j
}

// joinWord reports whether the token at k is a word of a join operator,
// not a function (LEFT(s, 2)) or a qualified name's part.
func (p *parser) joinWord(k int) bool {
	t := p.tok(k)
	if t.Kind != sqltext.Word || !joinWords[strings.ToLower(t.Text)] || p.punct(k-1, ".") || p.punct(k+1, ".") {
		return false
	}
	return !((t.Is("left") || t.Is("right")) && p.punct(k+1, "("))
}

// onEnd returns the end of an ON condition starting at k: the next join
// keyword or comma at depth 0.
func (p *parser) onEnd(k, b int) int {
	for ; k < b; k++ {
		if p.punct(k, "(") {
			k = p.close(k, b)
			continue
		}
		if p.punct(k, ",") {
			return k
		}
		if p.joinWord(k) {
			return k
		}
	}
	return b
}

// alias reads an optional alias (and column list) at k for src.
func (p *parser) alias(k, b int, src *source) int {
	if k >= b {
		return k
	}
	if p.word(k, "as") {
		if k+1 < b {
			if n, ok := p.aliasName(p.toks[k+1]); ok {
				src.alias = n
				k += 2
			}
		}
	} else {
		t := p.toks[k]
		if n, ok := p.ident(t); ok && !(t.Kind == sqltext.Word && (notAlias[strings.ToLower(t.Text)] || joinWords[strings.ToLower(t.Text)])) {
			src.alias = n
			k++
		}
	}
	if src.alias != "" && p.punct(k, "(") && k < b {
		j := p.close(k, b)
		src.colList = p.firstIdents(k+1, j)
		k = j + 1
	}
	return k
}

// skipTableHints skips what may follow a table in a FROM item: SQLite
// INDEXED BY, MySQL index hints and PARTITION, TABLESAMPLE, WITH
// ORDINALITY.
func (p *parser) skipTableHints(k, b int) int {
	for k < b {
		switch {
		case p.word(k, "indexed") && p.word(k+1, "by"):
			k += 3
		case p.word(k, "not") && p.word(k+1, "indexed"):
			k += 2
		case (p.word(k, "use") || p.word(k, "force") || p.word(k, "ignore")) && (p.word(k+1, "index") || p.word(k+1, "key")):
			k += 2
			if p.word(k, "for") {
				k++
				for k < b && p.toks[k].Kind == sqltext.Word && !p.punct(k, "(") {
					k++
				}
			}
			if p.punct(k, "(") {
				k = p.close(k, b) + 1
			}
		case p.word(k, "tablesample"):
			k += 2
			if p.punct(k, "(") {
				k = p.close(k, b) + 1
			}
			if p.word(k, "repeatable") && p.punct(k+1, "(") {
				k = p.close(k+1, b) + 1
			}
		case p.word(k, "with") && p.word(k+1, "ordinality"):
			k += 2
		case p.word(k, "partition") && p.punct(k+1, "("):
			k = p.close(k+1, b) + 1
		default:
			return k
		}
	}
	return k
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
	if systemTables[lname] || (lname == "dual" && p.c.dialect == text2sql.DialectMySQL) ||
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
	p.fail(text2sql.KindUnknownTable, "no such table: "+qual, guard.Suggest(db, text2sql.KindUnknownTable, qual, p.sql))
	return src
}

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
