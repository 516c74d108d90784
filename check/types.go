package check

import (
	"strings"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/sqlparse"
	"github.com/text2sql-go/text2sql/internal/sqltext"
)

// valueType is what the checker knows of an expression's type.
type valueType int

const (
	typeUnknown valueType = iota
	typeInt
	typeReal
)

// combine is the type of an arithmetic expression over a and b: real wins
// (1.0 * x is real whatever x is), then unknown.
func combine(a, b valueType) valueType {
	switch {
	case a == typeReal || b == typeReal:
		return typeReal
	case a == typeInt && b == typeInt:
		return typeInt
	}
	return typeUnknown
}

// declaredType classifies a declared column type by the dialect's rules
// (SQLite's type affinity: a name containing INT is an integer).
func declaredType(d text2sql.Dialect, typ string) valueType {
	t := strings.ToLower(typ)
	switch {
	case d == text2sql.DialectSQLite && strings.Contains(t, "int"):
		return typeInt
	case t == "integer" || t == "int" || t == "bigint" || t == "smallint" || t == "tinyint" || t == "mediumint" ||
		t == "int2" || t == "int4" || t == "int8" || t == "serial" || t == "bigserial" || t == "smallserial" ||
		strings.HasPrefix(t, "int(") || strings.HasPrefix(t, "bigint(") || strings.HasPrefix(t, "smallint(") || strings.HasPrefix(t, "tinyint("):
		return typeInt
	case strings.Contains(t, "real") || strings.Contains(t, "floa") || strings.Contains(t, "doub"):
		return typeReal
	case d != text2sql.DialectSQLite && (strings.Contains(t, "numeric") || strings.Contains(t, "decimal")):
		return typeReal
	}
	return typeUnknown
}

// textual reports whether a declared type stores text: SQLite's TEXT
// affinity (CHAR, CLOB, TEXT) or no type at all, and the text types of the
// other engines.
func textual(d text2sql.Dialect, typ string) bool {
	t := strings.ToLower(strings.TrimSpace(typ))
	if t == "" {
		return d == text2sql.DialectSQLite
	}
	return strings.Contains(t, "char") || strings.Contains(t, "clob") || strings.Contains(t, "text") || t == "string"
}

// comparisonOps make an expression a truth value (an integer in SQLite).
var comparisonOps = map[string]bool{"=": true, "==": true, "<": true, ">": true, "<=": true, ">=": true, "<>": true, "!=": true}

// maxTypeDepth bounds the nesting type inference follows.
const maxTypeDepth = 32

// exprType infers the type of the expression [a, b) at depth 0.
func (p *parser) exprType(a, b int) valueType {
	if a >= b || p.typeDepth >= maxTypeDepth {
		return typeUnknown
	}
	p.typeDepth++
	defer func() { p.typeDepth-- }()
	// A comparison or a logical operator at depth 0 makes a truth value:
	// an integer 0/1 in SQLite and MySQL.
	for k := a; k < b; k++ {
		if p.punct(k, "(") {
			k = p.close(k, b)
			continue
		}
		t := p.toks[k]
		if t.Is("case") {
			k = p.caseEnd(k, b) - 1
			continue
		}
		if (t.Kind == sqltext.Punct && comparisonOps[t.Text]) ||
			t.Is("and") || t.Is("or") || t.Is("like") || t.Is("glob") || t.Is("in") || t.Is("is") || t.Is("between") {
			if p.c.dialect == text2sql.DialectPostgres {
				return typeUnknown
			}
			return typeInt
		}
	}
	// Arithmetic: split at + - * / % and combine the factors.
	ty := valueType(-1)
	k := a
	for k < b {
		for k < b && (p.punct(k, "-") || p.punct(k, "+")) { // unary sign
			k++
		}
		e := p.factorEnd(k, b)
		if e <= k {
			return typeUnknown
		}
		ft := p.factorType(k, e)
		if ty < 0 {
			ty = ft
		} else {
			ty = combine(ty, ft)
		}
		k = e
		if k >= b {
			break
		}
		if !(p.punct(k, "+") || p.punct(k, "-") || p.punct(k, "*") || p.punct(k, "/") || p.punct(k, "%")) {
			return typeUnknown
		}
		k++
	}
	if ty < 0 {
		return typeUnknown
	}
	return ty
}

// factorEnd returns the index after the factor (operand) starting at k:
// a literal, a dotted name, a function call, a parenthesised expression,
// CASE … END, CAST(…).
func (p *parser) factorEnd(k, b int) int {
	if k >= b {
		return k
	}
	t := p.toks[k]
	switch {
	case p.punct(k, "("):
		return p.close(k, b) + 1
	case t.Is("case"):
		return p.caseEnd(k, b)
	case t.Kind == sqltext.Number || t.Kind == sqltext.String || t.Kind == sqltext.Param:
		return k + 1
	}
	if _, ok := p.ident(t); !ok {
		return k
	}
	_, j := p.chain(k, b)
	if p.punct(j, "(") {
		j = p.close(j, b) + 1
		for p.word(j, "filter") || p.word(j, "over") { // aggregate modifiers
			j++
			if p.punct(j, "(") {
				j = p.close(j, b) + 1
			} else if j < b {
				j++
			}
		}
	}
	return j
}

// caseEnd returns the index after the END closing the CASE at k.
func (p *parser) caseEnd(k, b int) int {
	depth := 0
	for ; k < b; k++ {
		switch {
		case p.punct(k, "("):
			k = p.close(k, b)
		case p.word(k, "case"):
			depth++
		case p.word(k, "end"):
			depth--
			if depth == 0 {
				return k + 1
			}
		}
	}
	return b
}

// factorType infers the type of the factor [a, b).
func (p *parser) factorType(a, b int) valueType {
	t := p.toks[a]
	switch {
	case t.Kind == sqltext.Number:
		if strings.ContainsAny(t.Text, ".eE") && !strings.HasPrefix(strings.ToLower(t.Text), "0x") {
			return typeReal
		}
		return typeInt
	case p.punct(a, "(") && p.word(a+1, "select"):
		// A scalar subquery has the type of its one item.
		if q := p.queryAt(a + 1); q != nil {
			if sel, ok := q.Body.(*sqlparse.Select); ok && len(sel.Items) == 1 {
				e := p.item(sel.Items[0]).expr
				return p.exprType(e.a, e.b)
			}
		}
		return typeUnknown
	case p.punct(a, "("):
		return p.exprType(a+1, b-1)
	case t.Is("case"):
		return p.caseType(a, b)
	}
	if _, ok := p.ident(t); !ok {
		return typeUnknown
	}
	_, j := p.chain(a, b)
	if !p.punct(j, "(") {
		if r, ok := p.refs[a]; ok && r.column != nil {
			return declaredType(p.c.dialect, r.column.Type)
		}
		return typeUnknown
	}
	fn := strings.ToLower(p.toks[j-1].Text)
	open, closeAt := j, p.close(j, b)
	args := p.args(open+1, closeAt)
	switch fn {
	case "count":
		return typeInt
	case "avg", "total", "julianday", "stddev", "variance":
		return typeReal
	case "length", "char_length", "instr", "unicode", "strpos", "octet_length":
		if p.c.dialect == text2sql.DialectSQLite || fn == "length" {
			return typeInt
		}
	case "sum", "min", "max", "abs", "coalesce", "ifnull", "nullif":
		if fn == "sum" && p.c.dialect != text2sql.DialectSQLite {
			return typeUnknown // PostgreSQL's sum of integers is numeric or bigint; unsure
		}
		ty := valueType(-1)
		for i, s := range args {
			if fn == "nullif" && i > 0 {
				break
			}
			k := s.a
			if p.word(k, "distinct") || p.word(k, "all") {
				k++
			}
			at := p.exprType(k, s.b)
			if ty < 0 {
				ty = at
			} else {
				ty = combine(ty, at)
			}
		}
		if ty < 0 {
			return typeUnknown
		}
		if ty == typeUnknown {
			return typeUnknown
		}
		return ty
	case "iif", "if":
		if len(args) == 3 {
			return combine(p.exprType(args[1].a, args[1].b), p.exprType(args[2].a, args[2].b))
		}
	case "cast", "try_cast":
		for k := open + 1; k < closeAt; k++ {
			if p.word(k, "as") && p.depthZero(open+1, k) {
				var typ []string
				for _, x := range p.toks[k+1 : closeAt] {
					typ = append(typ, x.Text)
				}
				return declaredType(p.c.dialect, strings.Join(typ, " "))
			}
		}
	case "round":
		if p.c.dialect == text2sql.DialectSQLite {
			return typeReal
		}
	}
	return typeUnknown
}

// depthZero reports whether k is at depth 0 relative to a.
func (p *parser) depthZero(a, k int) bool {
	for i := a; i < k; i++ {
		if p.punct(i, "(") {
			i = p.match[i]
			if i < 0 || i >= k {
				return false
			}
		}
	}
	return true
}

// args splits the arguments [a, b) of a call at depth-0 commas.
func (p *parser) args(a, b int) []span {
	var out []span
	start := a
	for k := a; k < b; k++ {
		if p.punct(k, "(") {
			k = p.close(k, b)
			continue
		}
		if p.punct(k, ",") {
			out = append(out, span{start, k})
			start = k + 1
		}
	}
	if b > start {
		out = append(out, span{start, b})
	}
	return out
}

// caseType combines the types of the THEN and ELSE branches of CASE … END
// in [a, b).
func (p *parser) caseType(a, b int) valueType {
	ty := valueType(-1)
	start := -1
	flush := func(end int) {
		if start < 0 {
			return
		}
		bt := p.exprType(start, end)
		if ty < 0 {
			ty = bt
		} else {
			ty = combine(ty, bt)
		}
		start = -1
	}
	for k := a + 1; k < b-1; k++ {
		switch {
		case p.punct(k, "("):
			k = p.close(k, b)
		case p.word(k, "case"):
			k = p.caseEnd(k, b) - 1
		case p.word(k, "then") || p.word(k, "else"):
			flush(k)
			start = k + 1
		case p.word(k, "when"):
			flush(k)
		}
	}
	flush(b - 1)
	if ty < 0 {
		return typeUnknown
	}
	return ty
}

// divisionStart returns the start of the left operand of the "/" at k:
// the multiplicative chain before it ("a * b / c" divides a * b).
func (p *parser) divisionLeft(k int) (start int, ok bool) {
	e := k - 1
	for n := 0; n < maxChain; n++ {
		s, good := p.factorStart(e)
		if !good {
			return 0, false
		}
		if p.punct(s-1, "*") || p.punct(s-1, "/") || p.punct(s-1, "%") {
			e = s - 2
			continue
		}
		return s, true
	}
	return 0, false
}

// maxChain bounds the factors of a multiplicative chain followed left of
// a division.
const maxChain = 32

// factorStart returns the start of the factor ending at e (inclusive).
func (p *parser) factorStart(e int) (int, bool) {
	if e < 0 {
		return 0, false
	}
	t := p.toks[e]
	switch {
	case p.punct(e, ")"):
		o := p.match[e]
		if o < 0 {
			return 0, false
		}
		if o > 0 && p.toks[o-1].Kind == sqltext.Word && (!operatorWords[strings.ToLower(p.toks[o-1].Text)] || p.toks[o-1].Is("cast")) {
			s := o - 1
			for s >= 2 && p.punct(s-1, ".") {
				s -= 2
			}
			return s, true
		}
		return o, true
	case t.Is("end"):
		depth := 0
		for s := e; s >= 0; s-- {
			switch {
			case p.punct(s, ")"):
				if p.match[s] < 0 {
					return 0, false
				}
				s = p.match[s]
			case p.word(s, "end"):
				depth++
			case p.word(s, "case"):
				depth--
				if depth == 0 {
					return s, true
				}
			}
		}
		return 0, false
	case t.Kind == sqltext.Number:
		return e, true
	}
	if _, ok := p.ident(t); ok {
		s := e
		for s >= 2 && p.punct(s-1, ".") {
			if _, ok := p.ident(p.toks[s-2]); !ok {
				break
			}
			s -= 2
		}
		return s, true
	}
	return 0, false
}
