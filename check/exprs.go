package check

import (
	"strings"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/guard"
	"github.com/text2sql-go/text2sql/internal/sqltext"
	"github.com/text2sql-go/text2sql/schema"
)

// castFunctions take "expr AS type": the words after AS are a type.
var castFunctions = wordSet(`cast try_cast safe_cast`)

// exprs checks the names in the expression tokens [a, b) against sc.
// Subqueries are parsed as queries with sc as their parent scope.
func (p *parser) exprs(a, b int, sc *scope, env *cteEnv) {
	type frame struct {
		fn    string
		close int
	}
	var stack []frame
	top := func() *frame {
		if len(stack) == 0 {
			return nil
		}
		return &stack[len(stack)-1]
	}
	for k := a; k < b; k++ {
		t := p.toks[k]
		switch {
		case p.punct(k, "("):
			if p.startsQuery(k + 1) {
				j := p.close(k, b)
				p.subquery(k+1, j, sc, env)
				k = j
				continue
			}
			fn := ""
			if k > a && p.toks[k-1].Kind == sqltext.Word {
				fn = strings.ToLower(p.toks[k-1].Text)
			}
			stack = append(stack, frame{fn, p.close(k, b)})
		case p.punct(k, ")"):
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case p.punct(k, "::"):
			k = p.skipType(k+1, b) - 1
		case t.Is("as") && top() != nil && castFunctions[top().fn]:
			k = max(k, top().close-1) // the type; the ")" pops the frame
		case (p.punct(k, ",") || t.Is("using")) && top() != nil && top().fn == "convert":
			k = max(k, top().close-1)
		case t.Is("using") && p.tok(k+1).Kind == sqltext.Word && !p.punct(k+2, "("):
			k++ // CHAR(x USING utf8mb4)
		case t.Is("collate"):
			k++
		case t.Is("over") && !p.punct(k+1, "("):
			k++ // a window name
		case t.Is("separator"):
		case t.Is("at") && p.word(k+1, "time") && p.word(k+2, "zone"):
			k += 2
		case top() != nil && top().fn == "against":
			// MATCH (…) AGAINST ('text' IN NATURAL LANGUAGE MODE): modifiers
		case t.Kind == sqltext.Word && unitWords[strings.ToLower(t.Text)] && p.unitContext(k, func() string {
			if f := top(); f != nil {
				return f.fn
			}
			return ""
		}()):
		default:
			if _, ok := p.ident(t); ok {
				k = p.reference(k, b, sc, env) - 1
			}
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

// skipType returns the index after a type name starting at k: words,
// an optional modifier list in parentheses, array brackets.
func (p *parser) skipType(k, b int) int {
	if k >= b {
		return k
	}
	if _, ok := p.ident(p.toks[k]); !ok {
		return k
	}
	_, k = p.chain(k, b)
	for k < b && p.toks[k].Kind == sqltext.Word && typeContinuation[strings.ToLower(p.toks[k].Text)] {
		k++
	}
	if p.punct(k, "(") {
		k = p.close(k, b) + 1
	}
	for k < b && p.toks[k].Kind == sqltext.QuotedIdent && strings.HasPrefix(p.toks[k].Text, "[") {
		k++
	}
	return k
}

// reference reads the name (possibly dotted) at k, resolves it unless it
// is a function, a named argument or a typed literal, and returns the
// index after it.
func (p *parser) reference(k, b int, sc *scope, env *cteEnv) int {
	if p.punct(k-1, ".") {
		return k + 1 // a field of something that is not a plain name: (x).f
	}
	first := p.toks[k]
	name, _ := p.ident(first)
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
	switch {
	case p.punct(j, "("): // a function call; its arguments are scanned next
		return j
	case len(parts) == 1 && p.punct(j, "=") && p.punct(j+1, ">") && p.toks[j+1].Pos == p.toks[j].Pos+1:
		return j // a named argument: name => value
	case len(parts) == 1 && first.Kind == sqltext.Word && j < b && p.toks[j].Kind == sqltext.String:
		return j // a typed literal: DATE '2024-01-01', INTERVAL '1 day'
	case len(parts) == 1 && first.Kind == sqltext.Word && p.word(k-1, "interval"):
		return j
	}
	switch len(parts) {
	case 1:
		p.unqualified(name, first, k, sc, env)
	case 2:
		p.qualified(parts[0], parts[1], k, sc, env)
	case 3:
		if src := sc.findQualified(parts[0], parts[1]); src != nil {
			p.checkColumn(src, parts[0]+"."+parts[1], parts[2], k, sc)
		}
	}
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
	if hint := guard.ColumnElsewhere(db, col, read, except); hint != "" {
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
