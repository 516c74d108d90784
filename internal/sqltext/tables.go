package sqltext

import "strings"

// TableRef is a table a query reads, as written in a FROM or JOIN clause.
type TableRef struct {
	Schema string // qualifier, if written ("sales" in sales.orders)
	Name   string // identifier without quotes
	Alias  string // alias, if any
}

// clauseEnd are the words that end a FROM list at the same nesting depth.
var clauseEnd = map[string]bool{
	"where": true, "group": true, "order": true, "having": true, "limit": true, "offset": true,
	"union": true, "except": true, "intersect": true, "window": true, "select": true,
	"fetch": true, "for": true, "returning": true, "qualify": true,
}

// notAlias are words that can follow a table name but are not its alias.
var notAlias = map[string]bool{
	"where": true, "group": true, "order": true, "having": true, "limit": true, "offset": true,
	"union": true, "except": true, "intersect": true, "window": true, "join": true, "inner": true,
	"left": true, "right": true, "full": true, "outer": true, "cross": true, "natural": true,
	"on": true, "using": true, "as": true, "select": true, "fetch": true, "for": true, "tablesample": true,
	"indexed": true, "not": true, "straight_join": true, "lateral": true, "returning": true, "set": true,
}

// funcsWithFrom are functions whose arguments use FROM: EXTRACT(YEAR FROM d).
var funcsWithFrom = map[string]bool{"extract": true, "substring": true, "trim": true, "overlay": true, "position": true}

// Tables returns the tables sql reads, in order of first appearance, each
// once (case-insensitive), excluding the names of common table expressions.
// It is a lexical scan, not a full parse: it finds names after FROM, JOIN
// and commas of a FROM list at any nesting depth, and skips table-valued
// function calls and subqueries (whose own FROM clauses are scanned).
func Tables(sql string) []TableRef {
	toks := Significant(Lex(sql))
	ctes := cteNames(toks)
	var (
		out    []TableRef
		seen   = map[string]bool{}
		parens []string        // word before each open paren
		active = []bool{false} // FROM list open at each depth
	)
	add := func(r TableRef) {
		key := strings.ToLower(r.Schema + "." + r.Name)
		if r.Schema == "" && ctes[strings.ToLower(r.Name)] {
			return
		}
		if !seen[key] {
			seen[key] = true
			out = append(out, r)
		}
	}
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		depth := len(parens)
		switch {
		case t.Kind == Punct && t.Text == "(":
			prev := ""
			if i > 0 && toks[i-1].Kind == Word {
				prev = strings.ToLower(toks[i-1].Text)
			}
			parens = append(parens, prev)
			active = append(active, false)
		case t.Kind == Punct && t.Text == ")":
			if len(parens) > 0 {
				parens = parens[:len(parens)-1]
				active = active[:len(active)-1]
			}
		case t.Is("from"):
			if i > 0 && toks[i-1].Is("distinct") {
				continue
			}
			if depth > 0 && funcsWithFrom[parens[depth-1]] {
				continue
			}
			active[depth] = true
			if r, ok := tableAt(toks, i+1); ok {
				add(r)
			}
		case t.Is("join"):
			active[depth] = true
			if r, ok := tableAt(toks, i+1); ok {
				add(r)
			}
		case t.Kind == Punct && t.Text == ",":
			if active[depth] {
				if r, ok := tableAt(toks, i+1); ok {
					add(r)
				}
			}
		case t.Kind == Word && clauseEnd[strings.ToLower(t.Text)]:
			active[depth] = false
		}
	}
	return out
}

// tableAt reads a table reference starting at toks[i]: a possibly qualified
// name not followed by "(", then an optional alias.
func tableAt(toks []Token, i int) (TableRef, bool) {
	if i < len(toks) && (toks[i].Is("lateral") || toks[i].Is("only")) {
		i++
	}
	var parts []string
	for i < len(toks) {
		name, ok := toks[i].Ident()
		if !ok || (toks[i].Kind == Word && notAlias[strings.ToLower(name)]) {
			break
		}
		parts = append(parts, name)
		i++
		if i < len(toks) && toks[i].Kind == Punct && toks[i].Text == "." {
			i++
			continue
		}
		break
	}
	if len(parts) == 0 || (i < len(toks) && toks[i].Kind == Punct && toks[i].Text == "(") {
		return TableRef{}, false
	}
	r := TableRef{Name: parts[len(parts)-1]}
	if len(parts) > 1 {
		r.Schema = parts[len(parts)-2]
	}
	if i < len(toks) && toks[i].Is("as") {
		i++
	}
	if i < len(toks) {
		if a, ok := toks[i].Ident(); ok && !(toks[i].Kind == Word && notAlias[strings.ToLower(a)]) {
			r.Alias = a
		}
	}
	return r, true
}

// cteNames returns the lower-cased names of the common table expressions
// declared anywhere in toks.
func cteNames(toks []Token) map[string]bool {
	names := map[string]bool{}
	for i := 0; i < len(toks); i++ {
		if !toks[i].Is("with") {
			continue
		}
		j := i + 1
		if j < len(toks) && toks[j].Is("recursive") {
			j++
		}
		for j < len(toks) {
			name, ok := toks[j].Ident()
			if !ok {
				break
			}
			j++
			if j < len(toks) && toks[j].Text == "(" { // column list
				j = skipParens(toks, j)
			}
			if j >= len(toks) || !toks[j].Is("as") {
				break
			}
			names[strings.ToLower(name)] = true
			j++
			for j < len(toks) && (toks[j].Is("not") || toks[j].Is("materialized")) {
				j++
			}
			if j >= len(toks) || toks[j].Text != "(" {
				break
			}
			j = skipParens(toks, j)
			if j < len(toks) && toks[j].Text == "," {
				j++
				continue
			}
			break
		}
	}
	return names
}

// skipParens returns the index after the parenthesis group opening at toks[i].
func skipParens(toks []Token, i int) int {
	depth := 0
	for ; i < len(toks); i++ {
		switch toks[i].Text {
		case "(":
			depth++
		case ")":
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return i
}
