package lint

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/sqlparse"
	"github.com/text2sql-go/text2sql/internal/sqltext"
	"github.com/text2sql-go/text2sql/schema"
)

// The warning kinds. Every warning is "kind: message"; Kind returns the
// kind of one.
const (
	// WarnIntegerDivision: an integer divided by an integer (COUNT(*) /
	// COUNT(*), int column / int column) in SQLite or PostgreSQL, which
	// drop the fraction.
	WarnIntegerDivision = "integer division"
	// WarnNullComparison: "x = NULL" or "x <> NULL", which is never true.
	WarnNullComparison = "comparison with NULL"
	// WarnConcatOr: "||" in MySQL, where it means OR unless the server
	// runs with PIPES_AS_CONCAT.
	WarnConcatOr = "|| means OR"
	// WarnNullOrder: ORDER BY … LIMIT over a column with NULLs, sorted
	// where NULLs come first (ascending in SQLite and MySQL, descending in
	// PostgreSQL).
	WarnNullOrder = "NULLs in ORDER BY"
	// WarnTextNumbers: ORDER BY, MIN or MAX over numbers stored as text,
	// which compare as text ('10' < '9').
	WarnTextNumbers = "numbers stored as text"
	// WarnEmptyResult: the query ran and returned no rows.
	WarnEmptyResult = "empty result"
	// WarnNullResult: the query returned one row holding only NULLs,
	// typically an aggregate over no matching rows.
	WarnNullResult = "NULL result"
	// WarnTies: ORDER BY … LIMIT n where row n+1 ties with row n on the
	// ORDER BY keys (from a probe), or may (keys not known to be unique).
	WarnTies = "LIMIT cuts ties"
)

// Kind returns the kind of a warning from Check or Warn: the text before
// the first ": ".
func Kind(warning string) string {
	if i := strings.Index(warning, ": "); i >= 0 {
		return warning[:i]
	}
	return warning
}

func warning(kind, format string, args ...any) string {
	return kind + ": " + fmt.Sprintf(format, args...)
}

// maxDivisions bounds the divisions whose operand types are inferred,
// and maxKeys the ORDER BY keys the data warnings consider.
const (
	maxDivisions = 64
	maxKeys      = 16
)

// maxQuote bounds the SQL fragments quoted in a warning, in bytes.
const maxQuote = 120

// text returns the source text of tokens [a, b), cut to maxQuote.
func (p *parser) text(a, b int) string {
	if a < 0 || b <= a || b > len(p.toks) {
		return ""
	}
	s := p.sql[p.toks[a].Pos : p.toks[b-1].Pos+len(p.toks[b-1].Text)]
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > maxQuote {
		cut := maxQuote
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// staticWarnings are the warnings that need neither data nor a result.
func staticWarnings(c *Checker, p *parser) []string {
	if p == nil || len(p.toks) == 0 {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	add := func(w string) {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	// The warnings in the order of their operator tokens.
	found := map[int]string{}
	if c.dialect != text2sql.DialectMySQL {
		p.divisions(found)
	}
	for k, t := range p.toks {
		if t.Kind != sqltext.Punct {
			continue
		}
		switch t.Text {
		case "=", "<>", "!=", "==":
			if p.word(k+1, "null") || p.word(k-1, "null") {
				op := "IS NULL"
				if t.Text != "=" && t.Text != "==" {
					op = "IS NOT NULL"
				}
				lo, hi := max(k-1, 0), min(k+2, len(p.toks))
				found[k] = warning(WarnNullComparison, "%s is never true (a comparison with NULL is NULL); write %s", p.text(lo, hi), op)
			}
		case "||":
			if c.dialect == text2sql.DialectMySQL {
				found[k] = warning(WarnConcatOr, "in MySQL || is a logical OR unless the server sets PIPES_AS_CONCAT; join strings with CONCAT(a, b)")
			}
		}
	}
	at := make([]int, 0, len(found))
	for k := range found {
		at = append(at, k)
	}
	sort.Ints(at)
	for _, k := range at {
		add(found[k])
	}
	return out
}

// divisions adds to found, by the index of the "/" token, a warning for
// each division of an integer by an integer (at most maxDivisions are
// looked at).
func (p *parser) divisions(found map[int]string) {
	var divs []*sqlparse.Binary
	sqlparse.Inspect(p.tree, func(n sqlparse.Node) bool {
		if b, ok := n.(*sqlparse.Binary); ok && b.Op == "/" {
			divs = append(divs, b)
		}
		return true
	})
	// The operator follows the left operand.
	sort.Slice(divs, func(i, j int) bool { return divs[i].X.Extent().To < divs[j].X.Extent().To })
	if len(divs) > maxDivisions {
		divs = divs[:maxDivisions]
	}
	for _, d := range divs {
		right := d.Y
		for {
			u, ok := right.(*sqlparse.Unary)
			if !ok || u.Op != "-" && u.Op != "+" {
				break
			}
			right = u.X
		}
		if p.typeOf(d.X) != typeInt || p.typeOf(right) != typeInt {
			continue
		}
		fix := "multiply by 1.0 first or CAST(… AS REAL)"
		if p.c.dialect == text2sql.DialectPostgres {
			fix = "cast to numeric first (x::numeric) or multiply by 1.0"
		}
		found[d.X.Extent().To] = warning(WarnIntegerDivision, "%s divides an integer by an integer, so %s drops the fraction (1 / 2 = 0); for a ratio or a share, %s",
			p.text(d.X.Extent().From, right.Extent().To), dialectName[p.c.dialect], fix)
	}
}

// warner computes the warnings of one Warn call.
type warner struct {
	c      *Checker
	a      *analysis
	res    *text2sql.Result
	ctx    context.Context
	probes int
	out    []string
	seen   map[string]bool
}

func (w *warner) add(s string) {
	if w.seen == nil {
		w.seen = map[string]bool{}
	}
	if !w.seen[s] {
		w.seen[s] = true
		w.out = append(w.out, s)
	}
}

func (w *warner) run() []string {
	for _, s := range w.a.warnings {
		w.add(s)
	}
	if r := w.res; r != nil && r.Error == nil {
		switch {
		case len(r.Rows) == 0:
			w.add(warning(WarnEmptyResult, "the query returned no rows; check that the filter values match the data exactly (spelling, letter case, date and number formats) and that the joins do not drop every row"))
		case len(r.Rows) == 1 && allNull(r.Rows[0]):
			w.add(warning(WarnNullResult, "the only row holds only NULLs, which usually means an aggregate over no matching rows; check the filters"))
		}
	}
	p := w.a.p
	if p == nil || p.unsure || p.top == nil || len(p.top.cores) != 1 || p.top.cores[0] == nil {
		return w.out
	}
	blk := p.top.cores[0]
	keys := w.keys(blk)
	w.nullOrder(blk, keys)
	w.textNumbers(blk, keys)
	w.ties(blk, keys)
	return w.out
}

func allNull(row []any) bool {
	for _, v := range row {
		if v != nil {
			return false
		}
	}
	return len(row) > 0
}

// keyInfo is an ORDER BY key of the top-level query.
type keyInfo struct {
	orderKey
	ref    colRef // the column a plain-column key names; zero otherwise
	resIdx int    // the result column that holds the key, or -1
	text   string
}

// keys resolves the ORDER BY keys of blk.
func (w *warner) keys(blk *block) []keyInfo {
	p := w.a.p
	// Result column indices are known when no item is a star.
	mappable := true
	for _, it := range blk.items {
		if it.star || it.starQual != nil {
			mappable = false
		}
	}
	if w.res != nil && w.res.Error == nil && len(w.res.Columns) != len(blk.items) {
		mappable = false
	}
	var out []keyInfo
	order := blk.order
	if len(order) > maxKeys {
		order = order[:maxKeys]
	}
	for _, k := range order {
		ki := keyInfo{orderKey: k, resIdx: -1, text: p.text(k.expr.a, k.expr.b)}
		e := k.expr
		item := -1
		switch {
		case e.b-e.a == 1 && p.toks[e.a].Kind == sqltext.Number:
			if n, err := strconv.Atoi(p.toks[e.a].Text); err == nil && n >= 1 && n <= len(blk.items) {
				item = n - 1
			}
		default:
			if r, ok := p.refs[e.a]; ok && p.plainName(e) {
				ki.ref = r
			}
			norm := p.norm(e)
			for i, it := range blk.items {
				if it.star || it.starQual != nil {
					break
				}
				if (e.b-e.a == 1 && it.alias != "" && strings.EqualFold(it.alias, p.tok(e.a).Text)) || p.norm(it.expr) == norm ||
					(e.b-e.a == 1 && strings.EqualFold(it.name, identText(p.tok(e.a)))) {
					item = i
					break
				}
			}
		}
		if item >= 0 {
			it := blk.items[item]
			if ki.ref.column == nil && it.expr.ok() && p.plainName(it.expr) {
				ki.ref = p.refs[it.expr.a]
			}
			if mappable {
				ki.resIdx = item
			}
		}
		out = append(out, ki)
	}
	return out
}

func identText(t sqltext.Token) string {
	n, _ := t.Ident()
	return n
}

// plainName reports whether s is the span of a (qualified) name of the
// tree.
func (p *parser) plainName(s span) bool {
	switch x := p.exprAt[s.a].(type) {
	case *sqlparse.Ident, *sqlparse.ColumnRef:
		return s.ok() && x.Extent().To == s.b
	}
	return false
}

// norm is the text of s lower-cased without white space, for comparing
// expressions.
func (p *parser) norm(s span) string {
	if !s.ok() {
		return ""
	}
	var b strings.Builder
	for k := s.a; k < s.b; k++ {
		b.WriteString(strings.ToLower(p.toks[k].Text))
	}
	return b.String()
}

// nullsFirst reports whether the dialect sorts NULLs first in the
// direction.
func nullsFirst(d text2sql.Dialect, desc bool) bool {
	if d == text2sql.DialectPostgres {
		return desc
	}
	return !desc
}

// limitCount returns the row count of blk's LIMIT, or -1 when it is not
// a literal.
func limitCount(blk *block) int {
	if blk.count == nil {
		return -1
	}
	n, err := strconv.Atoi(blk.count.Text())
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// excludesNull reports whether blk's WHERE or ON conditions filter out
// the NULLs of column r: "x IS NOT NULL", or a comparison of x, in a
// condition with no OR outside parentheses.
func (p *parser) excludesNull(blk *block, r colRef) bool {
	for _, cond := range blk.conds {
		if hasOr(cond) {
			continue
		}
		found := false
		sqlparse.Inspect(cond, func(n sqlparse.Node) bool {
			switch n.(type) {
			case *sqlparse.Ident, *sqlparse.ColumnRef:
			default:
				return !found
			}
			if ref, ok := p.refs[n.Extent().From]; !ok || ref.column != r.column {
				return false
			}
			e := n.Extent().To
			next, prev := p.tok(e), p.tok(n.Extent().From-1)
			found = found || p.word(e, "is") && p.word(e+1, "not") && p.word(e+2, "null") || p.word(e, "notnull") ||
				next.Kind == sqltext.Punct && comparisonOps[next.Text] || next.Is("like") || next.Is("in") || next.Is("between") || next.Is("glob") ||
				prev.Kind == sqltext.Punct && comparisonOps[prev.Text]
			return false
		})
		if found {
			return true
		}
	}
	return false
}

// hasOr reports whether x has an OR outside parentheses.
func hasOr(x sqlparse.Expr) bool {
	b, ok := x.(*sqlparse.Binary)
	if !ok {
		return false
	}
	return b.Op == "OR" || hasOr(b.X) || hasOr(b.Y)
}

// nullOrder warns when the first ORDER BY key of a LIMIT query may put
// NULLs first.
func (w *warner) nullOrder(blk *block, keys []keyInfo) {
	p := w.a.p
	n := limitCount(blk)
	if len(keys) == 0 || !blk.limit {
		return
	}
	k := keys[0]
	r := k.ref
	if r.column == nil || k.nulls || !nullsFirst(w.c.dialect, k.desc) || p.excludesNull(blk, r) {
		return
	}
	dir := "ASC"
	if k.desc {
		dir = "DESC"
	}
	limit := "LIMIT"
	if n >= 0 {
		limit = "LIMIT " + strconv.Itoa(n)
	}
	col := r.table.QualifiedName() + "." + r.column.Name
	fix := fmt.Sprintf("add WHERE %s IS NOT NULL (or NULLS LAST)", k.text)
	if w.c.dialect == text2sql.DialectMySQL {
		fix = fmt.Sprintf("add WHERE %s IS NOT NULL", k.text)
	}
	if res := w.res; res != nil && res.Error == nil && k.resIdx >= 0 && len(res.Rows) > 0 {
		if k.resIdx < len(res.Rows[0]) && res.Rows[0][k.resIdx] == nil {
			w.add(warning(WarnNullOrder, "the first row has NULL in %s: ORDER BY %s %s puts NULLs first, so %s returns rows without a value; %s",
				k.text, k.text, dir, limit, fix))
		}
		return
	}
	if w.c.probe != nil {
		q := "SELECT 1 FROM " + schema.QuoteTable(w.c.dialect, r.table) + " WHERE " + schema.Quote(w.c.dialect, r.column.Name) + " IS NULL LIMIT 1"
		if pr := w.probe(q, 1); pr != nil {
			if len(pr.Rows) > 0 {
				w.add(warning(WarnNullOrder, "column %s holds NULLs and ORDER BY %s %s puts them first, so %s may return rows without a value; %s",
					col, k.text, dir, limit, fix))
			}
			return
		}
	}
	if r.column.NotNull || w.rowidKey(r) {
		return
	}
	w.add(warning(WarnNullOrder, "column %s is not declared NOT NULL; if it holds NULLs, ORDER BY %s %s puts them first and %s returns them; %s",
		col, k.text, dir, limit, fix))
}

// rowidKey reports whether r is SQLite's INTEGER PRIMARY KEY, which is
// never NULL.
func (w *warner) rowidKey(r colRef) bool {
	t := r.table
	return w.c.dialect == text2sql.DialectSQLite && len(t.PrimaryKey) == 1 && strings.EqualFold(t.PrimaryKey[0], r.column.Name) &&
		strings.EqualFold(strings.TrimSpace(r.column.Type), "integer")
}

// textNumbers warns about ORDER BY keys of the top-level query and MIN or
// MAX arguments that are text columns holding numbers.
func (w *warner) textNumbers(blk *block, keys []keyInfo) {
	p := w.a.p
	type cand struct {
		ref    colRef
		use    string // "ORDER BY v", "MAX(v)"
		resIdx int
	}
	var cands []cand
	seen := map[*schema.Column]bool{}
	for _, k := range keys {
		if k.ref.column != nil && textual(w.c.dialect, k.ref.column.Type) && !seen[k.ref.column] {
			seen[k.ref.column] = true
			cands = append(cands, cand{k.ref, "ORDER BY " + k.text, k.resIdx})
		}
	}
	sqlparse.Inspect(p.tree, func(n sqlparse.Node) bool {
		call, ok := n.(*sqlparse.Call)
		if !ok || len(call.Args) != 1 || call.Distinct {
			return true
		}
		name := call.Name[len(call.Name)-1]
		if fn := strings.ToLower(name.Name); fn != "min" && fn != "max" || name.Quoted {
			return true
		}
		arg := call.Args[0].Extent()
		closeAt := p.close(name.To, len(p.toks))
		r, ok := p.refs[arg.From]
		if !ok || arg.To != closeAt || !p.plainName(span{arg.From, arg.To}) || !textual(w.c.dialect, r.column.Type) || seen[r.column] {
			return true
		}
		seen[r.column] = true
		cands = append(cands, cand{r, p.text(name.From, closeAt+1), -1})
		return true
	})
	for _, c := range cands {
		col := c.ref.table.QualifiedName() + "." + c.ref.column.Name
		var vals []any
		if res := w.res; c.resIdx >= 0 && res != nil && res.Error == nil {
			for _, row := range res.Rows {
				if c.resIdx < len(row) {
					vals = append(vals, row[c.resIdx])
				}
			}
		}
		a, b, ok := misordered(vals)
		if !ok && w.c.probe != nil {
			qc := schema.Quote(w.c.dialect, c.ref.column.Name)
			q := "SELECT " + qc + " FROM " + schema.QuoteTable(w.c.dialect, c.ref.table) + " WHERE " + qc + " IS NOT NULL LIMIT " + strconv.Itoa(probeSample)
			if pr := w.probe(q, probeSample); pr != nil {
				vals = vals[:0]
				for _, row := range pr.Rows {
					if len(row) > 0 {
						vals = append(vals, row[0])
					}
				}
				a, b, ok = misordered(vals)
			}
		}
		if ok {
			cast := "INTEGER"
			if strings.ContainsAny(a+b, ".eE") {
				cast = "REAL"
			}
			if w.c.dialect != text2sql.DialectSQLite {
				cast = "numeric"
			}
			w.add(warning(WarnTextNumbers, "column %s holds numbers as text ('%s', '%s'); %s compares them as text, so '%s' sorts before '%s'; use CAST(%s AS %s)",
				col, b, a, c.use, a, b, c.ref.column.Name, cast))
		}
	}
}

// misordered reports whether vals are numbers stored as text whose text
// order differs from their numeric order, and returns two values a, b
// with a < b as text but a > b as numbers. Any value that is not a
// numeric string (a real number, a word) means no.
func misordered(vals []any) (a, b string, ok bool) {
	type num struct {
		s string
		f float64
	}
	var ns []num
	for _, v := range vals {
		var s string
		switch x := v.(type) {
		case nil:
			continue
		case string:
			s = x
		case []byte:
			s = string(x)
		default:
			return "", "", false
		}
		f, good := numeric(s)
		if !good {
			return "", "", false
		}
		ns = append(ns, num{s, f})
	}
	if len(ns) < 2 {
		return "", "", false
	}
	sort.SliceStable(ns, func(i, j int) bool { return ns[i].s < ns[j].s })
	for i := 0; i+1 < len(ns); i++ {
		for j := i + 1; j < len(ns); j++ {
			if ns[i].s < ns[j].s && ns[i].f > ns[j].f {
				return ns[i].s, ns[j].s, true
			}
		}
	}
	return "", "", false
}

// numeric parses s as a decimal number written plainly: digits, an
// optional sign, point and exponent.
func numeric(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 40 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9') && c != '.' && c != '-' && c != '+' && c != 'e' && c != 'E' {
			return 0, false
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil
}

// ties warns when the LIMIT of the top-level query cuts through rows tied
// on the ORDER BY keys.
func (w *warner) ties(blk *block, keys []keyInfo) {
	p := w.a.p
	n := limitCount(blk)
	if len(keys) == 0 || n <= 0 || p.keysUnique(blk, keys) {
		return
	}
	if res := w.res; res != nil && res.Error == nil && len(res.Rows) < n && !res.Truncated {
		return // every row fits under the limit: nothing is cut
	}
	var keyTexts []string
	for _, k := range keys {
		keyTexts = append(keyTexts, k.text)
	}
	order := strings.Join(keyTexts, ", ")
	if w.c.probe != nil && n <= 1000 {
		if tied, vals, decided := w.tieProbe(blk, keys, n); decided {
			if tied {
				w.add(warning(WarnTies, "LIMIT %d keeps %d row(s), but the next row ties with the last one kept on ORDER BY %s (%s), so which of the tied rows are returned is arbitrary; if ties matter, return every tied row (e.g. WHERE key = (SELECT MAX(key) …)) or add a tie-breaker",
					n, n, order, vals))
			}
			return
		}
	}
	w.add(warning(WarnTies, "LIMIT %d after ORDER BY %s: the keys are not known to be unique, so rows tied at the cut may be dropped arbitrarily; check whether ties matter for the question",
		n, order))
}

// keysUnique reports whether the ORDER BY keys identify a row: they
// include every GROUP BY expression, or the primary key of the only table
// read, or every item of a SELECT DISTINCT.
func (p *parser) keysUnique(blk *block, keys []keyInfo) bool {
	norms := map[string]bool{}
	cols := map[*schema.Column]bool{}
	for _, k := range keys {
		norms[p.norm(k.expr)] = true
		if k.ref.column != nil {
			cols[k.ref.column] = true
		}
	}
	if len(blk.group) > 0 {
		all := true
		for _, g := range blk.group {
			r, ok := p.refs[g.a]
			if !norms[p.norm(g)] && !(ok && p.plainName(g) && cols[r.column]) {
				all = false
			}
		}
		if all {
			return true
		}
	}
	if len(blk.sc.sources) == 1 && len(blk.group) == 0 {
		if t := blk.sc.sources[0].table; t != nil && len(t.PrimaryKey) > 0 {
			all := true
			for _, pk := range t.PrimaryKey {
				if c := t.Column(pk); c == nil || !cols[c] {
					all = false
				}
			}
			if all {
				return true
			}
		}
	}
	if blk.distinct {
		all := len(blk.items) > 0
		for _, it := range blk.items {
			if it.star || it.starQual != nil || !(norms[p.norm(it.expr)] || (it.alias != "" && norms[strings.ToLower(it.alias)])) {
				all = false
			}
		}
		if all {
			return true
		}
	}
	return false
}

// tieProbe reruns the query with LIMIT n+1 (and the keys that are not in
// the select list added to it) and compares rows n and n+1 on the keys.
// decided is false when the probe could not run.
func (w *warner) tieProbe(blk *block, keys []keyInfo, n int) (tied bool, vals string, decided bool) {
	p := w.a.p
	var extra []int // indices into keys of the keys to add
	for i, k := range keys {
		if k.resIdx < 0 {
			extra = append(extra, i)
		}
	}
	if len(extra) > 0 && (blk.distinct || blk.from < 0) {
		return false, "", false
	}
	ct := blk.count
	var b strings.Builder
	pos := 0
	if len(extra) > 0 {
		fromPos := p.toks[blk.from].Pos
		b.WriteString(p.sql[:fromPos])
		for _, i := range extra {
			k := keys[i]
			b.WriteString(", " + p.sql[p.toks[k.expr.a].Pos:p.toks[k.expr.b-1].Pos+len(p.toks[k.expr.b-1].Text)])
		}
		b.WriteString(" ")
		pos = fromPos
	}
	b.WriteString(p.sql[pos:ct.Pos])
	b.WriteString(strconv.Itoa(n + 1))
	b.WriteString(p.sql[ct.End:])
	res := w.probe(b.String(), n+1)
	if res == nil {
		return false, "", false
	}
	if len(res.Rows) <= n {
		return false, "", true
	}
	last, next := res.Rows[n-1], res.Rows[n]
	var shown []string
	ei := 0
	for i, k := range keys {
		idx := k.resIdx
		if idx < 0 {
			idx = len(res.Columns) - len(extra) + ei
			ei++
		}
		_ = i
		if idx < 0 || idx >= len(last) || idx >= len(next) {
			return false, "", false
		}
		if !sameValue(last[idx], next[idx]) {
			return false, "", true
		}
		shown = append(shown, k.text+" = "+show(last[idx]))
	}
	return true, strings.Join(shown, ", "), true
}

func sameValue(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return fmt.Sprint(a) == fmt.Sprint(b)
}

func show(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		if len(x) > 40 {
			x = x[:40] + "…"
		}
		return "'" + x + "'"
	case []byte:
		return fmt.Sprintf("<%d bytes>", len(x))
	}
	return fmt.Sprint(v)
}

// probe runs one probe query, or returns nil when there is no probe, the
// budget is spent, ctx has ended or the query failed.
func (w *warner) probe(sql string, maxRows int) *text2sql.Result {
	if w.c.probe == nil || w.probes <= 0 || w.ctx == nil || w.ctx.Err() != nil {
		return nil
	}
	w.probes--
	res, err := w.c.probe.Execute(w.ctx, text2sql.ExecuteRequest{SQL: sql, MaxRows: max(maxRows, 1), Timeout: w.c.probeTimeout})
	if err != nil || res == nil || res.Error != nil {
		return nil
	}
	return res
}
