package eval

import (
	"strings"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/sqlparse"
)

// spiderAggs are the aggregates Spider's parser knows.
var spiderAggs = map[string]bool{"max": true, "min": true, "count": true, "sum": true, "avg": true}

// SpiderHardnessOfSQL classifies a query as SpiderHardness does, counting
// the same components from the SQL text instead of Spider's parsed form:
// a pass over the syntax tree (internal/sqlparse, SQLite's rules) of the
// first statement's outermost query — its clauses, its FROM units (a
// parenthesised join is one), the AND/OR-separated conditions of ON,
// WHERE and HAVING (BETWEEN … AND … is one condition) and what stands in
// them outside parentheses — for queries written in the Spider subset of
// SQL. It serves datasets without a parsed form (LoadFile, a
// Spider-format file without "sql"); it agrees with SpiderHardness on
// every Spider dev query (see the tests). It never fails: an empty query,
// or a statement that is not a query, is easy.
func SpiderHardnessOfSQL(sql string) string {
	var q *sqlparse.Query
	// Models escape underscores as in Markdown (first\_name); the name
	// is meant, and literals do not count.
	sql = strings.ReplaceAll(sql, `\_`, "_")
	if st := sqlparse.Parse(sql, text2sql.DialectSQLite).Stmts; len(st) > 0 {
		q, _ = st[0].(*sqlparse.Query)
	}
	if q == nil {
		return HardnessEasy
	}
	s := shapeOf(q)
	return hardness(s.component1(), s.component2(), s.others())
}

// sqlShape is what the hardness counts of a query's outermost part.
type sqlShape struct {
	q *sqlparse.Query
	// compound: q is a compound query; sel is then its first part, the
	// rest is nested, and q's ORDER BY and LIMIT belong to no part.
	compound bool
	sel      *sqlparse.Select
	group    []sqlparse.Expr // the GROUP BY terms written
	units    int             // FROM units
	// The conditions of the joins' ON, of WHERE and of HAVING.
	on, where, having []cond
	ors               int // ORs among all of them
	havingConj        int // HAVING's connectives
}

// shapeOf reads q's outermost part.
func shapeOf(q *sqlparse.Query) *sqlShape {
	s := &sqlShape{q: q}
	body := q.Body
	for op, ok := body.(*sqlparse.SetOp); ok; op, ok = body.(*sqlparse.SetOp) {
		s.compound, body = true, op.Left
	}
	s.sel, _ = body.(*sqlparse.Select)
	if s.sel == nil {
		s.sel = &sqlparse.Select{}
	}
	for _, e := range s.sel.GroupBy {
		if present(e) {
			s.group = append(s.group, e)
		}
	}
	var on []sqlparse.Expr
	for _, t := range s.sel.From {
		s.units += fromUnits(t, &on)
	}
	for _, e := range on {
		cs, _, o := conditionsOf(e)
		s.on = append(s.on, cs...)
		s.ors += o
	}
	var wors, hors int
	s.where, _, wors = conditionsOf(s.sel.Where)
	s.having, s.havingConj, hors = conditionsOf(s.sel.Having)
	s.ors += wors + hors
	return s
}

// component1 counts as the evaluator's count_component1: WHERE, GROUP
// BY, ORDER BY and LIMIT written, each join, each OR and each LIKE.
func (s *sqlShape) component1() int {
	n := 0
	if !s.compound {
		if len(s.q.OrderBy) > 0 && present(s.q.OrderBy[0].Expr) {
			n++
		}
		if l := s.q.Limit; l != nil && present(l.Count) && !l.Fetch {
			n++
		}
	}
	if present(s.sel.Where) {
		n++
	}
	if len(s.group) > 0 {
		n++
	}
	if s.units > 0 {
		n += s.units - 1
	}
	n += s.ors
	for _, c := range s.conditions() {
		if c.like {
			n++
		}
	}
	return n
}

// component2 counts as the evaluator's count_component2: the nested
// queries, a compound query's other parts as one.
func (s *sqlShape) component2() int {
	n := 0
	if s.compound {
		n++
	}
	for _, c := range s.conditions() {
		n += c.subqueries
	}
	return n
}

// others counts as the evaluator's count_others: how many of the
// aggregates, select items, WHERE conditions and GROUP BY terms exceed
// one.
func (s *sqlShape) others() int {
	agg := s.havingConj // the evaluator counts every HAVING connective
	for _, conds := range [][]cond{s.where, s.having} {
		for _, c := range conds {
			if c.not {
				agg++
			}
		}
	}
	items := 0
	for _, it := range s.sel.Items {
		if it.From == it.To {
			continue
		}
		items++
		if startsWithAgg(it) {
			agg++
		}
	}
	if !s.compound {
		for _, t := range s.q.OrderBy {
			if startsWithAgg(t.Expr) {
				agg++
			}
		}
	}
	return beyondOne(agg, items, len(s.where), len(s.group))
}

// conditions returns the conditions of ON, WHERE and HAVING.
func (s *sqlShape) conditions() []cond {
	return append(append(append([]cond(nil), s.on...), s.where...), s.having...)
}

// present reports whether a clause's expression was written: not absent
// and not an empty error node.
func present(e sqlparse.Expr) bool {
	return e != nil && e.Extent().From < e.Extent().To
}

// fromUnits returns the number of table units of a FROM item (tables and
// subqueries joined by JOIN; a parenthesised join is one unit) and adds
// the ON conditions of its joins to on.
func fromUnits(t sqlparse.TableExpr, on *[]sqlparse.Expr) int {
	j, ok := t.(*sqlparse.Join)
	if !ok {
		return 1
	}
	n := fromUnits(j.Left, on) + fromUnits(j.Right, on)
	if present(j.On) {
		*on = append(*on, j.On)
	}
	return n
}

// cond is what the count needs of one condition: whether NOT or LIKE is
// written at its outermost level (outside parentheses), and how many
// subqueries in parentheses of its own it has there.
type cond struct {
	not, like  bool
	subqueries int
}

// conditionsOf splits a condition at its outermost AND and OR (the
// operands of BETWEEN are not split) and returns the conditions, the
// number of connectives and the number of ORs among them.
func conditionsOf(e sqlparse.Expr) (conds []cond, conj, ors int) {
	if !present(e) {
		return nil, 0, 0
	}
	var split func(e sqlparse.Expr)
	split = func(e sqlparse.Expr) {
		if b, ok := e.(*sqlparse.Binary); ok && (b.Op == "AND" || b.Op == "OR") {
			split(b.X)
			split(b.Y)
			conj++
			if b.Op == "OR" {
				ors++
			}
			return
		}
		conds = append(conds, condOf(e))
	}
	split(e)
	return conds, conj, ors
}

// condOf reads one condition at its outermost level: it does not look
// inside parentheses (a parenthesised expression, a call's arguments, an
// IN list, a subquery).
func condOf(e sqlparse.Expr) cond {
	var c cond
	var walk func(n sqlparse.Node)
	walk = func(n sqlparse.Node) {
		switch v := n.(type) {
		case nil:
		case *sqlparse.Unary:
			c.not = c.not || v.Op == "NOT"
			walk(v.X)
		case *sqlparse.Binary:
			walk(v.X)
			walk(v.Y)
		case *sqlparse.Is:
			// NOT written: IS NOT y or x NOT NULL, not the one word NOTNULL.
			c.not = c.not || v.Not && !strings.HasSuffix(strings.ToLower(v.Text()), "notnull")
			walk(v.X)
			walk(v.Y)
		case *sqlparse.Between:
			c.not = c.not || v.Not
			walk(v.X)
			walk(v.Lo)
			walk(v.Hi)
		case *sqlparse.In:
			c.not = c.not || v.Not
			if v.Query != nil {
				c.subqueries++
			}
			walk(v.X)
		case *sqlparse.Like:
			c.not = c.not || v.Not
			c.like = c.like || v.Op == "LIKE"
			walk(v.X)
			walk(v.Pattern)
			walk(v.Escape)
		case *sqlparse.Call:
			// x < ANY (SELECT …): the call's parenthesis holds the query.
			for _, a := range v.Args {
				if sq, ok := a.(*sqlparse.Subquery); ok && !strings.HasPrefix(sq.Text(), "(") {
					c.subqueries++
				}
			}
		case *sqlparse.Subquery, *sqlparse.Exists:
			c.subqueries++
		case *sqlparse.Case, *sqlparse.When, *sqlparse.Collate, *sqlparse.Interval:
			for _, k := range sqlparse.Children(v) {
				walk(k)
			}
		case *sqlparse.Cast:
			if v.Op == "::" {
				walk(v.X)
			}
		}
	}
	walk(e)
	return c
}

// startsWithAgg reports whether the expression of a select item or ORDER
// BY term begins with a call of one of Spider's aggregates.
func startsWithAgg(n sqlparse.Node) bool {
	from := n.Extent().From
	found := false
	sqlparse.Inspect(n, func(m sqlparse.Node) bool {
		if m == nil || found || m.Extent().From != from {
			return false
		}
		if c, ok := m.(*sqlparse.Call); ok && len(c.Name) == 1 && spiderAggs[strings.ToLower(c.Name[0].Name)] {
			found = true
		}
		return !found
	})
	return found
}
