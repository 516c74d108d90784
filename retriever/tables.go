package retriever

import (
	"cmp"
	"slices"
	"strings"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/knowledge"
	"github.com/text2sql-go/text2sql/schema"
)

// maxJoinHops is the longest foreign-key path, in edges, searched to
// connect a table to those already chosen: up to two bridge tables.
const maxJoinHops = 3

type shownTable struct {
	table *schema.Table
	ref   text2sql.TableRef
}

// tablesOf resolves the schema tables a document is about: a table,
// column or value document's Table, a rule's or example's Tables. Names
// the schema does not have are left out.
func tablesOf(db *schema.Index, d knowledge.Document) []*schema.Table {
	var out []*schema.Table
	add := func(name string) {
		if t := db.Lookup(name); t != nil && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	switch d.Kind {
	case text2sql.ItemRule, text2sql.ItemExample:
		for _, name := range d.Tables {
			add(name)
		}
	default:
		if d.Table != "" {
			add(d.Table)
		}
	}
	return out
}

// fkGraph returns the undirected foreign-key graph of db: for each table,
// the tables it references or is referenced by, in schema order, without
// self-references; inferred keys (schema.ForeignKey.Inferred) only with
// inferred.
func fkGraph(db *schema.Database, ix *schema.Index, inferred bool) map[*schema.Table][]*schema.Table {
	g := map[*schema.Table][]*schema.Table{}
	// A set of the edges, not a scan of a's: a table that thousands
	// reference (users) would make the scans quadratic.
	type edge struct{ a, b *schema.Table }
	linked := map[edge]bool{}
	link := func(a, b *schema.Table) {
		if !linked[edge{a, b}] {
			linked[edge{a, b}] = true
			g[a] = append(g[a], b)
		}
	}
	for _, t := range db.Tables {
		if t == nil {
			continue
		}
		for _, fk := range t.ForeignKeys {
			if fk.Inferred && !inferred {
				continue
			}
			// A key without RefSchema references its own table's schema
			// (as introspection reports them); it never resolves to a
			// table of the same name in another one.
			name := fk.RefTable
			if ns := cmp.Or(fk.RefSchema, t.Schema); ns != "" {
				name = ns + "." + name
			}
			ref := ix.Lookup(name)
			if ref == nil || ref == t {
				continue
			}
			link(t, ref)
			link(ref, t)
		}
	}
	return g
}

// bridges returns the tables strictly between from and the nearest table
// of set on a shortest foreign-key path of at most maxJoinHops edges, in
// path order from the set towards from; nil when from is adjacent to set
// or no such path exists (ok is false then).
func (h *Hybrid) bridges(from *schema.Table, set map[*schema.Table]bool) (path []*schema.Table, ok bool) {
	if len(set) == 0 {
		return nil, false
	}
	prev := map[*schema.Table]*schema.Table{from: nil}
	frontier := []*schema.Table{from}
	for depth := 0; depth < maxJoinHops && len(frontier) > 0; depth++ {
		var next []*schema.Table
		for _, t := range frontier {
			for _, n := range h.graph[t] {
				if _, seen := prev[n]; seen {
					continue
				}
				prev[n] = t
				if set[n] {
					for p := prev[n]; p != from; p = prev[p] {
						path = append(path, p)
					}
					return path, true
				}
				next = append(next, n)
			}
		}
		frontier = next
	}
	return nil, false
}

// chooseTables picks the tables to show.
//
// Candidates, in order: the tables of the items, best item first (the
// table a table, column or value item is about, a rule's tables, the
// tables an example's SQL reads: "via example <id>"), then the rest of the
// fused table ranking (up to candidatePool deep), so a table whose own
// document missed the quota can still come in through its neighbours.
//
// The tables of the value matches (valued, best first: see matchValues)
// are candidates too, after the fused ranking when they are not in it.
//
// Tables are chosen greedily, at most MaxTables, skipping a table whose
// DDL would overflow the budget (the first table is always shown): the
// first candidate, then at each step the candidate with the best
// position. A value-matched table counts as the first candidates after
// the first, neighbourLead ahead ("value match"), while more slots are
// left than named candidates still to choose, so that it never pushes
// out a table the question names; otherwise the candidate's own position
// counts, where a foreign-key neighbour of a chosen table counts
// neighbourLead positions ahead (tables that join are asked about
// together), and so does a table the question names (named), so that a
// neighbour never pushes it out. In a schema of several namespaces the
// first candidate is that of the namespace the question is routed to
// (route), and how many tables of other namespaces may follow depends on
// how sure the routing is (the routing confidence constants): none when
// the runner-up namespace scores well below the routed one, a few of the
// next best namespaces when it comes close, any of them when it is about
// as good; a table with a declared key into the routed namespace is always
// allowed, and so is a value-matched table while value matches lead.
// Each chosen table is followed by the bridge tables on the shortest
// foreign-key path to the tables already chosen ("join path") when they
// fit. When the whole schema fits the budget, every other table follows
// ("whole schema"): the remaining candidates in order, then the rest in
// schema order. In a catalog of several namespaces (PostgreSQL schemas,
// MySQL databases) whose whole does not fit, the namespace of the first
// table is filled the same way when it fits beside the tables chosen and
// has no more than MaxTables tables: a question is about one schema far
// more often than about several, and a table of that schema named only
// through its data is then not missed. Last, each required table not
// yet shown, with its bridges while room is left.
//
// Before the greedy choice, the tables a reporting reranker selected
// (selected: RerankReport.Tables) are shown first, in its order, at most
// MaxTables while their DDL fits the budget, then the bridge tables
// joining each to those before it while they fit: the reranker read the
// question and the candidates together, so neither the foreign-key
// preference nor bridges of other tables may push its choice out (and
// its first table decides the namespace). Names that are no candidate
// are ignored.
//
// The steps, in order: seed (the candidates), route, pin (the reranker's
// selection), fill (the greedy choice, one next candidate at a time),
// fillScope (the whole schema or the first table's namespace) and
// require.
func (h *Hybrid) chooseTables(items []text2sql.Item, tableCands []candidate, selected, required []string, named map[*schema.Table]bool, valued []*schema.Table, nsScore map[string]float64) []shownTable {
	c := h.seed(items, tableCands, valued, named)
	if h.namespaces != nil && len(selected) == 0 {
		c.route(valued, nsScore)
	}
	c.pin(selected)
	c.fill()
	c.fillScope(c.scope())
	c.require(required)
	return c.out
}

// tableChoice is one run of chooseTables: the candidates, the routing
// that bounds them and the tables shown so far.
type tableChoice struct {
	h         *Hybrid
	cands     []cand
	seen      map[*schema.Table]bool // the candidates' tables
	valueRank map[*schema.Table]int  // position among the value matches
	named     map[*schema.Table]bool // tables the question names
	limit     int                    // MaxTables

	near  map[string]bool // nil: no routing, every namespace may come in
	spill int             // tables of other namespaces still allowed; < 0: any number

	out     []shownTable
	in      map[*schema.Table]bool // the tables of out
	skipped map[*schema.Table]bool // over the budget
	spent   int                    // DDL tokens of out
}

// seed lists the candidates in order: the tables of the items, best item
// first, then those of the fused table ranking, then the value-matched
// tables, each once.
func (h *Hybrid) seed(items []text2sql.Item, tableCands []candidate, valued []*schema.Table, named map[*schema.Table]bool) *tableChoice {
	c := &tableChoice{h: h, seen: map[*schema.Table]bool{}, valueRank: make(map[*schema.Table]int, len(valued)), named: named,
		limit: h.maxTables, spill: -1, in: map[*schema.Table]bool{}, skipped: map[*schema.Table]bool{}}
	for _, it := range items {
		i, ok := h.byID[it.ID]
		if !ok {
			continue
		}
		ref := text2sql.TableRef{Reason: text2sql.ReasonRetrieved, Score: it.Score}
		if d := h.docs[i]; d.Kind == text2sql.ItemExample {
			ref = text2sql.TableRef{Reason: text2sql.ReasonExample, Example: strings.TrimPrefix(d.ID, "example:")}
		}
		for _, t := range h.docTables[i] {
			c.push(t, ref)
		}
	}
	for i, t := range valued {
		c.valueRank[t] = i
	}
	for _, tc := range tableCands {
		for _, t := range h.docTables[tc.doc] {
			c.push(t, text2sql.TableRef{Reason: text2sql.ReasonRetrieved, Score: tc.score})
		}
	}
	for _, t := range valued {
		c.push(t, text2sql.TableRef{Reason: text2sql.ReasonValue})
	}
	return c
}

// push adds t as a candidate unless it is one already.
func (c *tableChoice) push(t *schema.Table, ref text2sql.TableRef) {
	if t != nil && !c.seen[t] {
		c.seen[t] = true
		c.cands = append(c.cands, cand{t, ref})
	}
}

// route puts the routed namespace's best candidate first and sets which
// other namespaces may follow and how many of their tables, by how sure
// the routing is (the routing confidence constants).
func (c *tableChoice) route(valued []*schema.Table, nsScore map[string]float64) {
	cands, order, share := c.h.route(c.cands, valued, nsScore)
	c.cands = cands
	if order == nil {
		return
	}
	c.near = make(map[string]bool, 1+hedgeNamespaces)
	for _, ns := range order[:min(len(order), 1+hedgeNamespaces)] {
		c.near[ns] = true
	}
	switch {
	case share < confidentShare:
		c.spill = 0
	case share < hedgeShare:
		c.spill = hedgeTables
	}
}

// fits reports whether ts fit the budget beside the tables shown; the
// first table always fits.
func (c *tableChoice) fits(ts ...*schema.Table) bool {
	n := c.spent
	for _, t := range ts {
		n += c.h.ddlTokens[t]
	}
	return c.h.budget < 0 || c.h.wholeSchema || len(c.out) == 0 || n <= c.h.budget
}

// show appends t to the tables shown.
func (c *tableChoice) show(t *schema.Table, ref text2sql.TableRef) {
	c.in[t] = true
	c.spent += c.h.ddlTokens[t]
	ref.Name = t.QualifiedName()
	c.out = append(c.out, shownTable{t, ref})
}

// showPath shows the tables of a join path not shown yet, if the whole
// path fits the slots (limit) and the budget.
func (c *tableChoice) showPath(path []*schema.Table, limit int) {
	if len(c.out)+len(path) > limit || !c.fits(path...) {
		return
	}
	for _, b := range path {
		if !c.in[b] {
			c.show(b, text2sql.TableRef{Reason: text2sql.ReasonJoinPath})
		}
	}
}

// add shows t, unless it is shown, the slots (limit) are taken or, unless
// always, its DDL overflows the budget; then its bridges to the tables
// shown before it.
func (c *tableChoice) add(t *schema.Table, ref text2sql.TableRef, limit int, always bool) {
	if t == nil || c.in[t] || len(c.out) >= limit {
		return
	}
	if !always && !c.fits(t) {
		c.skipped[t] = true
		return
	}
	path, _ := c.h.bridges(t, c.in)
	c.show(t, ref)
	c.showPath(path, limit)
}

// pin shows a reporting reranker's selection first, in its order, then
// the bridges joining each selected table to those before it.
func (c *tableChoice) pin(selected []string) {
	var pinned []*schema.Table
	for _, name := range selected {
		t := c.h.db.Lookup(name)
		if t == nil || c.in[t] || !c.seen[t] || len(c.out) >= c.limit {
			continue
		}
		if !c.fits(t) {
			c.skipped[t] = true
			continue
		}
		c.show(t, c.cands[slices.IndexFunc(c.cands, func(x cand) bool { return x.t == t })].ref) // seen: a candidate
		pinned = append(pinned, t)
	}
	before := map[*schema.Table]bool{}
	for _, t := range pinned {
		path, _ := c.h.bridges(t, before)
		before[t] = true
		c.showPath(path, c.limit)
	}
}

// fill chooses greedily: at each step the candidate with the best
// position (next), with its bridges, until the slots are taken or no
// candidate is left.
func (c *tableChoice) fill() {
	for len(c.out) < c.limit {
		best, byValue := c.next()
		if best < 0 {
			return
		}
		ref := c.cands[best].ref
		if byValue {
			ref.Reason = text2sql.ReasonValue
		}
		t := c.cands[best].t
		c.add(t, ref, c.limit, false)
		if c.in[t] && c.h.namespaces[t] != c.h.namespaces[c.out[0].table] && c.spill > 0 {
			c.spill--
		}
	}
}

// next returns the index of the candidate to try next, -1 when none is
// left, and whether it leads as a value match: the candidate with the
// best position among those the routing allows, where a value match
// counts as the first candidates after the first while value matches
// lead (valueLead), and a neighbour of a shown table or a named table
// counts neighbourLead positions ahead.
func (c *tableChoice) next() (best int, byValue bool) {
	valueLead := c.valueLead()
	best, bestPos := -1, 0
	for i, cd := range c.cands {
		if c.in[cd.t] || c.skipped[cd.t] || !c.allowed(cd, valueLead) {
			continue
		}
		r, valued := c.valueRank[cd.t]
		pos, lead := i, false
		switch {
		case len(c.out) == 0:
		case valued && valueLead:
			pos, lead = min(i, r)-c.h.neighbourLead, true
		case c.h.adjacent(cd.t, c.in) || c.named[cd.t]:
			pos -= c.h.neighbourLead
		}
		if best < 0 || pos < bestPos {
			best, bestPos, byValue = i, pos, lead
		}
	}
	return best, byValue
}

// valueLead reports whether value-matched tables come next: the slots
// left exceed the named candidates still to choose, so a value match
// never pushes out a table the question names.
func (c *tableChoice) valueLead() bool {
	pending := 0
	for _, cd := range c.cands {
		if c.named[cd.t] && !c.in[cd.t] && !c.skipped[cd.t] {
			pending++
		}
	}
	return c.limit-len(c.out) > pending
}

// allowed reports whether the routing lets candidate cd follow the first
// table shown: in a catalog as routed describes, in a routed schema as
// hedges does; a value match is evidence of its own and may come from
// any namespace while it leads.
func (c *tableChoice) allowed(cd cand, valueLead bool) bool {
	if len(c.out) == 0 {
		return true
	}
	if c.h.catalog && !c.h.routed(cd, c.out[0], c.named) {
		return false
	}
	_, valued := c.valueRank[cd.t]
	return c.near == nil || (valued && valueLead) || c.h.hedges(cd.t, c.out[0].table, c.in, c.near, c.spill)
}

// scope returns the tables to show in whole after the greedy choice: the
// whole schema when it fits the budget, else the first table's namespace
// when it fits beside the tables shown and has no more than MaxTables
// tables, else nil.
func (c *tableChoice) scope() []*schema.Table {
	h := c.h
	if h.wholeSchema {
		return h.db.Tables
	}
	if len(c.out) == 0 || h.namespaces == nil || h.budget < 0 {
		return nil
	}
	var scope []*schema.Table
	ns, n := h.namespaces[c.out[0].table], c.spent
	for _, t := range h.db.Tables {
		if h.namespaces[t] == ns {
			scope = append(scope, t)
			if !c.in[t] {
				n += h.ddlTokens[t]
			}
		}
	}
	if n > h.budget || len(scope) > c.limit {
		return nil
	}
	return scope
}

// fillScope shows every table of scope not shown yet ("whole schema"):
// the remaining candidates in order, then the rest in schema order.
func (c *tableChoice) fillScope(scope []*schema.Table) {
	if scope == nil {
		return
	}
	inScope := make(map[*schema.Table]bool, len(scope))
	for _, t := range scope {
		inScope[t] = true
	}
	whole := func(t *schema.Table, score float64) {
		if inScope[t] && !c.in[t] {
			c.in[t] = true
			c.out = append(c.out, shownTable{t, text2sql.TableRef{Name: t.QualifiedName(), Reason: text2sql.ReasonWholeSchema, Score: score}})
		}
	}
	for _, cd := range c.cands {
		whole(cd.t, cd.ref.Score)
	}
	for _, t := range scope {
		whole(t, 0)
	}
}

// require shows each required table not shown yet, beyond MaxTables and
// the budget, with its bridges while room is left.
func (c *tableChoice) require(required []string) {
	for _, name := range required {
		t := c.h.db.Lookup(strings.TrimSpace(name))
		if t == nil || c.in[t] {
			continue
		}
		c.add(t, text2sql.TableRef{Reason: text2sql.ReasonRequired}, max(c.limit, len(c.out)+1), true) // always shown
	}
}

// cand is a table chooseTables may show, with why: the fused score of the
// best item about it; no name yet.
type cand struct {
	t   *schema.Table
	ref text2sql.TableRef
}

// Weights of the namespace score (route), relative to the best table's
// fused score, which counts 1. Measured by `eval --recall --catalog` at 6
// tables (hashing embedder), as the share of questions whose first table
// is in their own database: the best table alone routes 77.6% of Spider
// dev (166 databases) and 96.4% of BIRD mini-dev (11); with the BM25
// score at 0.5, 84.6% and 99.4%; with a value match at 0.25 too, 87.6% on
// Spider (BIRD's catalog has no rows). Tried: BM25 at 0.25, 0.75, 1 and 2
// route 86.9%, 87.1%, 87.0% and 85.1% of Spider; a value match at 0.5,
// 87.6%; both at 1, 86.0%. The value weight stays small because only
// Spider's 20 dev databases have rows there, which flatters it.
const (
	routeBM25Weight  = 0.5
	routeValueWeight = 0.25
)

// Routing confidence: share is the runner-up namespace's route score over
// the routed one's (0 to 1). Below confidentShare only the routed
// namespace's tables are shown (a declared key into it aside); below
// hedgeShare at most hedgeTables of other namespaces; above, any number.
// Tables of other namespaces come only from the hedgeNamespaces next best.
// Measured by `eval --recall --catalog` with the defaults (6 tables):
// below a share of 0.75 the routing is right for 99.6% of the Spider dev
// questions, and of the 477 above 0.8 the gold database ranks first for
// 364, second for 49, third for 24. Strict recall, tables shown: Spider
// dev's 873-table catalog 93.3% at 5.17, BIRD mini-dev's 75 tables 97.2%
// at 5.38. Tried: confidentShare 0.75, 93.6% at 5.46 and 97.0% at 5.51;
// 0.7, 93.5% at 5.66 and 96.6% at 5.70; no hedgeTables cap, 93.6% at
// 5.49 and 96.8% at 5.41; hedgeNamespaces 1, 92.3% at 4.94 on Spider; 3,
// 92.9% at 5.23. Without the confidence rule (other namespaces after
// every routed candidate, the last third of the slots to a close
// runner-up) it was 92.1% and 96.8% at 6 tables.
const (
	confidentShare  = 0.8
	hedgeShare      = 0.9
	hedgeTables     = 2
	hedgeNamespaces = 2
)

// route returns cands with the best candidate of the namespace the
// question is about first, so that the namespace chosen for the rest
// (see chooseTables) is that one. A namespace scores its best table's
// fused score over the best of all, plus routeBM25Weight times its BM25
// score (nsScore: the question against all of a namespace's documents as
// one, over the best namespace's), plus routeValueWeight when a value of
// its data matched the question: a namespace that covers more of the
// question wins over one that has only the best-named table (a question
// about countries and their official languages belongs to the database
// with country and countrylanguage tables, not to one of the many with a
// country table). Ties keep the fused order. order is the candidates'
// namespaces, the routed one first, then by score (ties by name), nil when
// no candidate has a score (nothing to route by); share is the second's
// score over the first's (0 with one namespace).
func (h *Hybrid) route(cands []cand, valued []*schema.Table, nsScore map[string]float64) (out []cand, order []string, share float64) {
	top, bm25Top := 0.0, 0.0
	for _, c := range cands {
		top = max(top, c.ref.Score)
	}
	for _, v := range nsScore {
		bm25Top = max(bm25Top, v)
	}
	if top == 0 || len(cands) == 0 {
		return cands, nil, 0
	}
	score := map[string]float64{}
	for _, c := range cands {
		ns := h.namespaces[c.t]
		score[ns] = max(score[ns], c.ref.Score/top)
	}
	if bm25Top > 0 {
		for ns, v := range nsScore {
			score[ns] += routeBM25Weight * v / bm25Top
		}
	}
	valuedNS := map[string]bool{}
	for _, t := range valued {
		if ns := h.namespaces[t]; !valuedNS[ns] {
			valuedNS[ns] = true
			score[ns] += routeValueWeight
		}
	}
	best, bestScore := -1, 0.0
	for i, c := range cands {
		if v := score[h.namespaces[c.t]]; best < 0 || v > bestScore {
			best, bestScore = i, v
		}
	}
	routed := h.namespaces[cands[best].t]
	order = []string{routed}
	listed := map[string]bool{routed: true}
	for _, c := range cands {
		if ns := h.namespaces[c.t]; !listed[ns] {
			listed[ns] = true
			order = append(order, ns)
		}
	}
	slices.SortFunc(order[1:], func(a, b string) int {
		return cmp.Or(cmp.Compare(score[b], score[a]), strings.Compare(a, b))
	})
	if len(order) > 1 {
		share = score[order[1]] / bestScore
	}
	if best == 0 {
		return cands, order, share
	}
	out = make([]cand, 0, len(cands))
	out = append(out, cands[best])
	out = append(out, cands[:best]...)
	return append(out, cands[best+1:]...), order, share
}

// hedges reports whether t may be shown beside first, the routed
// namespace's first table (see the routing confidence above): t is in
// first's namespace, or has a declared key into it (a key across schemas,
// PostgreSQL's sales.orders → crm.customers, says the two are queried
// together), or its namespace is near and spill (tables of other
// namespaces still allowed; < 0: any) is not exhausted.
func (h *Hybrid) hedges(t, first *schema.Table, in map[*schema.Table]bool, near map[string]bool, spill int) bool {
	ns := h.namespaces[first]
	switch {
	case h.namespaces[t] == ns, h.adjacentIn(t, in, ns):
		return true
	}
	return near[h.namespaces[t]] && spill != 0
}

// routed reports whether a catalog may show candidate c once first is
// shown: c is in first's database; or c scores at least half of first
// (with Reciprocal Rank Fusion, about as well ranked: a table only one
// ranking found scores at most half of one both ranked first); or the
// question names c's table and first's database has none of that name (a
// question about singers routed to a database with a singer table does
// not pull in every other database's singer table).
func (h *Hybrid) routed(c cand, first shownTable, named map[*schema.Table]bool) bool {
	ns := h.namespaces[first.table]
	switch {
	case h.namespaces[c.t] == ns:
		return true
	case c.ref.Score >= first.ref.Score/2 && c.ref.Score > 0:
		return true
	}
	return named[c.t] && !h.nsTables[ns][strings.ToLower(c.t.Name)]
}

// adjacent reports whether t has a declared foreign key to or from a
// table of set: the neighbour preference trusts declared keys only (the
// inferred ones, right about nine times in ten, made it pull in wrong
// neighbours: BIRD's keyless catalog lost 0.8 points of recall with them).
func (h *Hybrid) adjacent(t *schema.Table, set map[*schema.Table]bool) bool {
	for _, n := range h.declared[t] {
		if set[n] {
			return true
		}
	}
	return false
}

// adjacentIn reports whether t has a declared foreign key to or from a
// table of set in namespace ns: a key across schemas (PostgreSQL's
// sales.orders → crm.customers) says the two are queried together.
func (h *Hybrid) adjacentIn(t *schema.Table, set map[*schema.Table]bool, ns string) bool {
	for _, n := range h.declared[t] {
		if set[n] && h.namespaces[n] == ns {
			return true
		}
	}
	return false
}

// namespaces returns each table's namespace (Table.Schema, lower-cased)
// when the schema has tables in at least two; nil otherwise.
func namespaces(db *schema.Database) map[*schema.Table]string {
	ns := make(map[*schema.Table]string, len(db.Tables))
	seen := map[string]bool{}
	for _, t := range db.Tables {
		n := strings.ToLower(t.Schema)
		ns[t] = n
		seen[n] = true
	}
	if len(seen) < 2 {
		return nil
	}
	return ns
}
