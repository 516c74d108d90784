package sqlparse

// QueryAt parses the tokens of s from index k on as a query, for an
// analyser that reads a subquery inside text the tree skipped (an
// *Error): the spans of the result index s.Tokens, as the tree's do, and
// it ends where a query would (at the ")" closing it, a ";" or text it
// cannot continue with). It returns nil when no query starts at k. The
// errors of the parse are not added to s.Errors.
func (s *Script) QueryAt(k int) *Query {
	if k < 0 || k >= len(s.Tokens) {
		return nil
	}
	p := &parser{src: s.src, toks: s.Tokens, dialect: s.dialect, i: k}
	if !p.startsQuery() && !(p.punct("(") && p.parenQueryAhead()) {
		return nil
	}
	return p.query()
}

// FromAt parses the tokens of s from index k on as the items of a FROM
// clause (comma-separated, with their joins), for an analyser that reads
// a FROM clause inside text the tree skipped; the spans index s.Tokens.
// It returns nil when k is out of range. The errors of the parse are
// not added to s.Errors.
func (s *Script) FromAt(k int) []TableExpr {
	if k < 0 || k >= len(s.Tokens) {
		return nil
	}
	p := &parser{src: s.src, toks: s.Tokens, dialect: s.dialect, i: k}
	return p.fromList()
}
