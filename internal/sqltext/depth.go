package sqltext

// DepthBound bounds from the tokens alone how deep any parser's tree of
// the statement can grow: every significant token but literals,
// parameters and commas may add a level (1+1+…+1, x ISNULL ISNULL …,
// t CROSS JOIN t …, BINARY BINARY …), and a bracketed token ([…], a
// quoted identifier in some dialects, an array subscript in others) counts
// what is inside it as well. A list of literals (IN (1, 2, …)) adds
// nothing. Parsers that recurse on the tree without a bound — libpg_query
// writing its output, a Go parser and the walks over its tree — crash or
// take memory without limit on a deep enough one, so executors refuse a
// statement whose DepthBound passes a limit before they parse it.
func DepthBound(toks []Token) int {
	n := 0
	for _, t := range toks {
		switch {
		case t.Trivia(), t.Kind == Number, t.Kind == String, t.Kind == Param, t.Kind == Punct && t.Text == ",":
		case t.Kind == QuotedIdent && len(t.Text) > 2 && t.Text[0] == '[':
			n += 1 + DepthBound(Lex(t.Text[1:len(t.Text)-1]))
		default:
			n++
		}
	}
	return n
}
