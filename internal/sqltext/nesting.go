package sqltext

// nestingWords are the keywords that join expressions or queries into a
// bigger one, each a level of a parser's tree where they chain.
var nestingWords = map[string]bool{"and": true, "or": true, "not": true, "union": true, "intersect": true,
	"except": true, "is": true, "in": true, "like": true, "ilike": true, "similar": true, "between": true,
	"collate": true, "escape": true}

// Nesting bounds from the tokens alone how deep a parser's tree of the
// statement can grow: the deepest nesting of parentheses plus every
// operator and joining keyword (AND, OR, NOT, UNION, IS, IN, LIKE, …),
// since a chain of n of them (1+1+…+1, SELECT 1 UNION SELECT 1 …) can be
// n levels deep. A sign right after "(" or "," (a negative number in a
// list) joins nothing and is not counted. Parsers that recurse on the
// tree without a bound — libpg_query writing its output, a Go parser's
// stack — crash on a deep enough one, so executors refuse a statement
// whose Nesting passes a limit before they parse it.
func Nesting(toks []Token) int {
	depth, deepest, ops := 0, 0, 0
	prev := ""
	for _, t := range toks {
		if t.Trivia() {
			continue
		}
		switch {
		case t.Kind == Punct && t.Text == "(":
			depth++
			deepest = max(deepest, depth)
		case t.Kind == Punct && t.Text == ")":
			depth--
		case t.Kind == Punct && (t.Text == "," || t.Text == ";" || t.Text == "." || t.Text == "[" || t.Text == "]"):
		case t.Kind == Punct && (t.Text == "-" || t.Text == "+") && (prev == "(" || prev == ","):
		case t.Kind == Punct:
			ops++
		case t.Kind == Word && nestingWords[lower(t.Text)]:
			ops++
		}
		prev = t.Text
	}
	return deepest + ops
}

// lower folds ASCII letters, enough for keywords, without allocating
// when the word is already lower case.
func lower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}
