package sqltext

// Bounds measures from the tokens alone what a parser of the statement
// may have to build: depth bounds how deep its tree can grow — every
// significant token but number and string literals and commas may add a
// level (1+1+…+1, x ISNULL ISNULL …, t CROSS JOIN t …, BINARY BINARY …),
// and so does a string literal right after another (adjacent literals,
// which some parsers join one by one at a cost that grows with the
// square of their number) — and tokens counts every significant token, a
// bound on the tree's size (a list of a million literals is shallow but
// not small). Parsers that recurse on the tree without a bound crash
// (libpg_query writing its output) or take memory and time without limit
// (a Go parser and the walks over its tree), so executors refuse a
// statement whose bounds pass their limits before they parse it. toks
// must come from the engine's own lexical rules (LexMySQL for MySQL): a
// lexer that reads a quote, bracket or comment differently would hide
// tokens.
func Bounds(toks []Token) (depth, tokens int) {
	prevString := false
	for _, t := range toks {
		if t.Trivia() {
			continue
		}
		tokens++
		switch {
		case t.Kind == String && prevString:
			depth++
		case t.Kind == Number, t.Kind == String, t.Kind == Punct && t.Text == ",":
		default:
			depth++
		}
		prevString = t.Kind == String
	}
	return depth, tokens
}
