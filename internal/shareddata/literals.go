package shareddata

import (
	"strings"

	"github.com/text2sql-go/text2sql/internal/sqltext"
)

// Literal is a string literal a query compares a column with.
type Literal struct {
	Column string // the column, unqualified, as written
	Value  string // the literal's text, without quotes and LIKE wildcards
}

// Literals returns the comparisons "col = 'x'", "t.col = 'x'", "col LIKE
// '%x%'" (also with "…" strings, which Spider's gold SQL uses) of sql, in
// order: the value linking a question's words to a column's data needs.
// Literals that hold nothing but wildcards are left out.
func Literals(sql string) []Literal {
	var toks []sqltext.Token
	for _, t := range sqltext.Lex(sql) {
		if !t.Trivia() {
			toks = append(toks, t)
		}
	}
	var out []Literal
	for i := 2; i < len(toks); i++ {
		lit, op, col := toks[i], toks[i-1], toks[i-2]
		if !(op.Kind == sqltext.Punct && op.Text == "=") && !op.Is("like") {
			continue
		}
		var v string
		switch {
		case lit.Kind == sqltext.String && strings.HasPrefix(lit.Text, "'") && len(lit.Text) >= 2:
			v = strings.ReplaceAll(lit.Text[1:len(lit.Text)-1], "''", "'")
		case lit.Kind == sqltext.QuotedIdent && strings.HasPrefix(lit.Text, `"`):
			v, _ = lit.Ident()
		default:
			continue
		}
		name, ok := col.Ident()
		if !ok {
			continue
		}
		if v = strings.Trim(v, "%"); strings.TrimSpace(v) == "" {
			continue
		}
		out = append(out, Literal{Column: name, Value: v})
	}
	return out
}
