package lint

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

// typeOf infers the type of the expression x: a comparison or logical
// operator makes a truth value (an integer 0/1 in SQLite and MySQL),
// arithmetic combines its operands, and literals, columns (by their
// declared type), calls, CASE and scalar subqueries have their own.
func (p *parser) typeOf(x sqlparse.Expr) valueType {
	if x == nil || p.typeDepth >= maxTypeDepth {
		return typeUnknown
	}
	p.typeDepth++
	defer func() { p.typeDepth-- }()
	if truthValue(x) {
		if p.c.dialect == text2sql.DialectPostgres {
			return typeUnknown
		}
		return typeInt
	}
	switch v := x.(type) {
	case *sqlparse.Binary:
		switch v.Op {
		case "+", "-", "*", "/", "%":
			return combine(p.typeOf(v.X), p.typeOf(v.Y))
		}
	case *sqlparse.Unary:
		if v.Op == "-" || v.Op == "+" {
			return p.typeOf(v.X)
		}
	case *sqlparse.Literal:
		t := v.Text()
		if v.Kind != sqlparse.Number {
			return typeUnknown
		}
		if strings.ContainsAny(t, ".eE") && !strings.HasPrefix(strings.ToLower(t), "0x") {
			return typeReal
		}
		return typeInt
	case *sqlparse.Subquery:
		// A scalar subquery has the type of its one item.
		if sel, ok := v.Query.Body.(*sqlparse.Select); ok && p.word(v.Query.From, "select") && len(sel.Items) == 1 {
			it := sel.Items[0]
			if _, star := it.Expr.(*sqlparse.Star); !star {
				return p.typeOf(it.Expr)
			}
		}
	case *sqlparse.Paren:
		if os := p.orphansIn(v.X.Extent().To, v.To-1); len(os) > 0 {
			// Text the tree skipped: (COUNT(x) WHERE y = 1) is read as the
			// test it holds, (x AS REAL) as unknown.
			if p.truthTokens(os[0].From, os[0].To) && p.c.dialect != text2sql.DialectPostgres {
				return typeInt
			}
			return typeUnknown
		}
		return p.typeOf(v.X)
	case *sqlparse.Case:
		ty := valueType(-1)
		for _, w := range v.Whens {
			ty = fold(ty, p.typeOf(w.Result))
		}
		if v.Else != nil {
			ty = fold(ty, p.typeOf(v.Else))
		}
		if ty < 0 {
			return typeUnknown
		}
		return ty
	case *sqlparse.Ident, *sqlparse.ColumnRef:
		if r, ok := p.refs[x.Extent().From]; ok && r.column != nil {
			return declaredType(p.c.dialect, r.column.Type)
		}
	case *sqlparse.Cast:
		if v.Op != "::" && v.Type != nil && p.word(v.Type.From-1, "as") && p.punct(v.To-1, ")") {
			// The type as written, its tokens joined by spaces.
			var typ []string
			for _, t := range p.toks[v.Type.From : v.To-1] {
				typ = append(typ, t.Text)
			}
			return declaredType(p.c.dialect, strings.Join(typ, " "))
		}
	case *sqlparse.Call:
		return p.callType(v)
	}
	return typeUnknown
}

// truthValue reports whether x is a comparison, a logical operator or a
// test (LIKE, GLOB, IN, IS, BETWEEN), or NOT over one.
func truthValue(x sqlparse.Expr) bool {
	switch v := x.(type) {
	case *sqlparse.Binary:
		return comparisonOps[v.Op] || v.Op == "AND" || v.Op == "OR"
	case *sqlparse.Like:
		return v.Op == "LIKE" || v.Op == "GLOB"
	case *sqlparse.In, *sqlparse.Between:
		return true
	case *sqlparse.Is:
		return v.Y.Extent().From < v.Y.Extent().To // IS, not ISNULL / NOTNULL / NOT NULL
	case *sqlparse.Unary:
		return v.Op == "NOT" && truthValue(v.X)
	}
	return false
}

// truthTokens reports whether the tokens [a, b) hold a comparison or a
// logical operator outside parentheses.
func (p *parser) truthTokens(a, b int) bool {
	for k := a; k < b; k = p.skipParens(k, b) {
		t := p.toks[k]
		if t.Kind == sqltext.Punct && comparisonOps[t.Text] ||
			t.Is("and") || t.Is("or") || t.Is("like") || t.Is("glob") || t.Is("in") || t.Is("is") || t.Is("between") {
			return true
		}
	}
	return false
}

// fold combines ty (-1 for none yet) with t.
func fold(ty, t valueType) valueType {
	if ty < 0 {
		return t
	}
	return combine(ty, t)
}

// callType infers the type of a function call.
func (p *parser) callType(c *sqlparse.Call) valueType {
	fn := strings.ToLower(c.Name[len(c.Name)-1].Name)
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
		args := c.Args
		if fn == "nullif" && len(args) > 1 {
			args = args[:1]
		}
		ty := valueType(-1)
		for _, a := range args {
			ty = fold(ty, p.typeOf(a))
		}
		if ty < 0 {
			return typeUnknown
		}
		return ty
	case "iif", "if":
		if len(c.Args) == 3 {
			return combine(p.typeOf(c.Args[1]), p.typeOf(c.Args[2]))
		}
	case "round":
		if p.c.dialect == text2sql.DialectSQLite {
			return typeReal
		}
	}
	return typeUnknown
}
