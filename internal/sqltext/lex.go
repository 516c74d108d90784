// Package sqltext holds the lexical layer of SQL text: lexers that know
// literals, quoted identifiers and comments (Lex, LexMySQL and
// LexPostgres by those engines' rules), statement splitting and counting under each engine's lexical
// convention, parse-tree bounds by token count (Bounds), and name
// distances for hints. The syntax tree built on these tokens is
// internal/sqlparse.
package sqltext

import (
	"sort"
	"strings"
	"unicode"
)

// TokenKind classifies a token.
type TokenKind int

// The token kinds.
const (
	Space        TokenKind = iota // white space
	LineComment                   // -- … to end of line
	BlockComment                  // /* … */ (nesting allowed, as PostgreSQL does)
	String                        // '…' with '' escapes; also E'…', X'…', N'…' and $tag$…$tag$
	QuotedIdent                   // "…", `…` or […]
	Number                        // 12, 1.5, .5, 1e3, 0x1F
	Word                          // keyword or bare identifier
	Param                         // ?, ?1, $1, :name, @name
	Punct                         // operators and punctuation: ( ) , ; . and the rest
)

// Token is one lexical token. Text is the exact source text, so joining the
// Text of all tokens gives back the input.
type Token struct {
	Kind TokenKind
	Text string
	Pos  int // byte offset in the input
}

// Trivia reports whether t is white space or a comment.
func (t Token) Trivia() bool {
	return t.Kind == Space || t.Kind == LineComment || t.Kind == BlockComment
}

// Is reports whether t is the word w, case-insensitively.
func (t Token) Is(w string) bool { return t.Kind == Word && strings.EqualFold(t.Text, w) }

// Ident returns the identifier t names: a bare word as written, a quoted
// identifier without its quotes (doubled quotes undone). ok is false for
// other tokens.
func (t Token) Ident() (name string, ok bool) {
	switch t.Kind {
	case Word:
		return t.Text, true
	case QuotedIdent:
		if len(t.Text) < 2 {
			return "", false
		}
		q := t.Text[0]
		inner := t.Text[1 : len(t.Text)-1]
		switch q {
		case '"':
			return strings.ReplaceAll(inner, `""`, `"`), true
		case '`':
			return strings.ReplaceAll(inner, "``", "`"), true
		}
		return inner, true
	}
	return "", false
}

// Lex splits s into tokens. It never fails: an unterminated literal or
// comment runs to the end of the input, as an engine would report it.
func Lex(s string) []Token { return lex(s, next) }

// lex splits s into tokens, each the Kind and end index that scan gives
// for the token starting at byte i (an end past i).
func lex(s string, scan func(s string, i int) (TokenKind, int)) []Token {
	// SQL as written has about one token per two bytes (words, the
	// spaces between them, punctuation): room for that, up to
	// maxPresized tokens, spares a short statement the slice's
	// regrowths without reserving much for a long text.
	toks := make([]Token, 0, min(len(s)/2+1, maxPresized))
	for i := 0; i < len(s); {
		kind, end := scan(s, i)
		toks = append(toks, Token{Kind: kind, Text: s[i:end], Pos: i})
		i = end
	}
	return toks
}

// maxPresized bounds the tokens lex makes room for before it lexes.
const maxPresized = 256

// next returns the Kind and end index of Lex's token starting at s[i].
func next(s string, i int) (TokenKind, int) {
	c := s[i]
	switch {
	case isSpace(c):
		return Space, spaceEnd(s, i)
	case c == '-' && i+1 < len(s) && s[i+1] == '-':
		return LineComment, lineEnd(s, i)
	case c == '/' && i+1 < len(s) && s[i+1] == '*':
		return BlockComment, nestedCommentEnd(s, i)
	case c == '\'':
		return String, scanQuoted(s, i, '\'', false)
	case (c == 'E' || c == 'e' || c == 'X' || c == 'x' || c == 'N' || c == 'n' || c == 'B' || c == 'b') && i+1 < len(s) && s[i+1] == '\'':
		if c == 'E' || c == 'e' {
			return String, escaped(s, i+1)
		}
		return String, scanQuoted(s, i+1, '\'', false)
	case c == '"' || c == '`':
		return QuotedIdent, scanQuoted(s, i, c, false)
	case c == '[':
		if j := strings.IndexByte(s[i:], ']'); j >= 0 {
			return QuotedIdent, i + j + 1
		}
		return QuotedIdent, len(s)
	}
	return nextUnquoted(s, i)
}

// nextUnquoted is next for a token that is neither white space, a
// comment nor quoted: a parameter, a dollar-quoted string, a number, a
// word or punctuation.
func nextUnquoted(s string, i int) (TokenKind, int) {
	c := s[i]
	switch {
	case c == '$' && i+1 < len(s) && isDigit(s[i+1]):
		return Param, digitsEnd(s, i+1)
	case c == '$':
		if end, ok := dollarQuoted(s, i); ok {
			return String, end
		}
		return Punct, i + 1
	case isDigit(c) || (c == '.' && i+1 < len(s) && isDigit(s[i+1])):
		return Number, number(s, i)
	case isIdentStart(c):
		return Word, identEnd(s, i)
	case c == '?':
		return Param, digitsEnd(s, i+1)
	case (c == ':' || c == '@') && i+1 < len(s) && isIdentStart(s[i+1]) && !(c == ':' && i > 0 && s[i-1] == ':'):
		return Param, identEnd(s, i+1)
	}
	return Punct, i + operatorLen(s[i:])
}

// nestedCommentEnd returns the index after the PostgreSQL block comment
// opened at s[i], where comments nest; len(s) when it is not closed.
func nestedCommentEnd(s string, i int) int {
	depth := 0
	for i < len(s) {
		switch {
		case strings.HasPrefix(s[i:], "/*"):
			depth++
			i += 2
		case strings.HasPrefix(s[i:], "*/"):
			depth--
			i += 2
			if depth == 0 {
				return i
			}
		default:
			i++
		}
	}
	return i
}

// lineEnd returns the index of the newline that ends the line at s[i],
// or len(s).
func lineEnd(s string, i int) int {
	for i < len(s) && s[i] != '\n' {
		i++
	}
	return i
}

// identEnd returns the index after the identifier characters from s[i].
func identEnd(s string, i int) int {
	for i < len(s) && isIdentPart(s[i]) {
		i++
	}
	return i
}

// digitsEnd returns the index after the decimal digits from s[i].
func digitsEnd(s string, i int) int {
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}

// escaped scans a PostgreSQL E'…' literal opened at s[i], where backslash
// escapes too.
func escaped(s string, i int) int {
	i++
	for i < len(s) {
		switch s[i] {
		case '\\':
			i += 2
			continue
		case '\'':
			if i+1 < len(s) && s[i+1] == '\'' {
				i += 2
				continue
			}
			return i + 1
		}
		i++
	}
	return len(s)
}

// dollarQuoted scans a PostgreSQL $tag$…$tag$ literal at s[i].
func dollarQuoted(s string, i int) (int, bool) {
	j := i + 1
	for j < len(s) && isIdentPart(s[j]) && s[j] != '$' {
		j++
	}
	if j >= len(s) || s[j] != '$' {
		return 0, false
	}
	tag := s[i : j+1]
	if k := strings.Index(s[j+1:], tag); k >= 0 {
		return j + 1 + k + len(tag), true
	}
	return len(s), true
}

func number(s string, i int) int {
	if (strings.HasPrefix(s[i:], "0b") || strings.HasPrefix(s[i:], "0B")) && i+2 < len(s) && (s[i+2] == '0' || s[i+2] == '1') {
		i += 2
		for i < len(s) && (s[i] == '0' || s[i] == '1') {
			i++
		}
		return i
	}
	if strings.HasPrefix(s[i:], "0x") || strings.HasPrefix(s[i:], "0X") {
		i += 2
		for i < len(s) && strings.IndexByte("0123456789abcdefABCDEF", s[i]) >= 0 {
			i++
		}
		return i
	}
	for i < len(s) && (isDigit(s[i]) || s[i] == '.') {
		i++
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if j < len(s) && isDigit(s[j]) {
			i = j
			for i < len(s) && isDigit(s[i]) {
				i++
			}
		}
	}
	return i
}

var operators = []string{"<=>", "->>", "#>>", "::", "<=", ">=", "<>", "!=", "==", "||", "<<", ">>", "->", "#>", "@>", "<@", "~*", "!~", "&&"}

// operatorStart marks the first bytes of operators.
var operatorStart = func() (start [256]bool) {
	for _, op := range operators {
		start[op[0]] = true
	}
	return start
}()

func operatorLen(s string) int {
	if operatorStart[s[0]] {
		for _, op := range operators {
			if strings.HasPrefix(s, op) {
				return len(op)
			}
		}
	}
	// One byte, or one whole UTF-8 sequence for a stray non-ASCII rune.
	if s[0] < 0x80 {
		return 1
	}
	n := 1
	for n < len(s) && n < 4 && s[n]&0xC0 == 0x80 {
		n++
	}
	return n
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isIdentStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80
}

func isIdentPart(c byte) bool { return isIdentStart(c) || isDigit(c) || c == '$' }

// Significant returns the tokens that are not white space or comments.
func Significant(toks []Token) []Token {
	n := 0
	for _, t := range toks {
		if !t.Trivia() {
			n++
		}
	}
	out := make([]Token, 0, n)
	for _, t := range toks {
		if !t.Trivia() {
			out = append(out, t)
		}
	}
	return out
}

// Statements splits s at top-level semicolons and returns each statement's
// text, trimmed of surrounding white space and its final semicolon.
// Semicolons inside literals, quoted identifiers and comments do not split;
// a piece made only of white space and comments is not a statement.
func Statements(s string) []string { return split(s, Lex(s)) }

// split splits s, lexed as toks, at top-level semicolons (see Statements).
func split(s string, toks []Token) []string {
	var out []string
	for _, sp := range spans(s, toks) {
		out = append(out, s[sp.from:sp.to])
	}
	return out
}

// span is the byte range [from, to) of a statement in its text.
type span struct{ from, to int }

// spans returns where the statements of s, lexed as toks, are (see
// Statements): each piece between top-level semicolons that holds a
// significant token, trimmed of white space as strings.TrimSpace trims.
func spans(s string, toks []Token) []span {
	var out []span
	start, significant := 0, false
	flush := func(end int) {
		if significant {
			piece := s[start:end]
			from := start + len(piece) - len(strings.TrimLeftFunc(piece, unicode.IsSpace))
			out = append(out, span{from, from + len(strings.TrimSpace(piece))})
		}
	}
	for _, t := range toks {
		if t.Kind == Punct && t.Text == ";" {
			flush(t.Pos)
			start, significant = t.Pos+1, false
			continue
		}
		if !t.Trivia() {
			significant = true
		}
	}
	flush(len(s))
	return out
}

// Lexed is a text and its tokens (Lex), for a caller that reads one text
// several ways (its statements, the first one's tokens, the text without
// what trails it) and should lex it once.
type Lexed struct {
	Text   string
	Tokens []Token
	spans  []span // where its statements are (spans)
}

// LexText lexes s once.
func LexText(s string) Lexed {
	toks := Lex(s)
	return Lexed{s, toks, spans(s, toks)}
}

// Statements is Statements(l.Text).
func (l Lexed) Statements() []string {
	var out []string
	for _, sp := range l.spans {
		out = append(out, l.Text[sp.from:sp.to])
	}
	return out
}

// Count is len(l.Statements()).
func (l Lexed) Count() int { return len(l.spans) }

// StripTrailing is StripTrailing(l.Text).
func (l Lexed) StripTrailing() string { return stripTrailing(l.Text, l.Tokens) }

// First returns the tokens Lex gives for the first statement of l.Text
// (Statements()[0]), with Pos offsets in l.Text; nil when it holds no
// statement. They are l's own tokens when the statement starts and
// ends on token boundaries, as it does unless white space beyond ASCII's
// (which Lex reads as part of a word) borders it; else it is lexed anew.
func (l Lexed) First() []Token {
	if len(l.spans) == 0 {
		return nil
	}
	from, to := l.spans[0].from, l.spans[0].to
	i := sort.Search(len(l.Tokens), func(k int) bool { return l.Tokens[k].Pos >= from })
	j := sort.Search(len(l.Tokens), func(k int) bool { return l.Tokens[k].Pos >= to })
	if i < j && l.Tokens[i].Pos == from && (j < len(l.Tokens) && l.Tokens[j].Pos == to || j == len(l.Tokens) && to == len(l.Text)) {
		return l.Tokens[i:j]
	}
	toks := Lex(l.Text[from:to])
	for k := range toks {
		toks[k].Pos += from
	}
	return toks
}

// StripTrailing returns sql without trailing white space, comments and
// semicolons after its last significant token.
func StripTrailing(sql string) string { return stripTrailing(sql, Lex(sql)) }

// stripTrailing is StripTrailing on sql lexed as toks.
func stripTrailing(sql string, toks []Token) string {
	end := 0
	for _, t := range toks {
		if !t.Trivia() && !(t.Kind == Punct && t.Text == ";") {
			end = t.Pos + len(t.Text)
		}
	}
	return strings.TrimSpace(sql[:end])
}

// isSpace reports whether c is white space to SQL engines: space, tab,
// newline, carriage return, form feed or vertical tab.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// spaceEnd returns the index after the run of white space at s[i].
func spaceEnd(s string, i int) int {
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	return i
}

// LexPostgres splits s into tokens by PostgreSQL's rules: Lex's, except
// that "[" and "]" are punctuation (array constructors and subscripts,
// where SQLite quotes a name), "?", ":" and "@" start no parameter (they
// are operator characters; only $n is one), U&'…' and U&"…" are Unicode
// escape literals, and a run of operator characters is one operator as
// PostgreSQL's lexer cuts it: the longest run, not through "--" or "/*",
// and not ending in "+" or "-" unless it holds one of ~ ! @ # % ^ & | ?
// (so a<-1 is a < -1, and @-@ one operator). "::" stays one token.
func LexPostgres(s string) []Token { return lex(s, nextPostgres) }

// nextPostgres returns the Kind and end index of LexPostgres's token
// starting at s[i].
func nextPostgres(s string, i int) (TokenKind, int) {
	c := s[i]
	switch {
	case c == '[' || c == ']' || c == ':':
		if strings.HasPrefix(s[i:], "::") {
			return Punct, i + 2
		}
		return Punct, i + 1
	case (c == 'U' || c == 'u') && strings.HasPrefix(s[i+1:], "&'"):
		return String, scanQuoted(s, i+2, '\'', false)
	case (c == 'U' || c == 'u') && strings.HasPrefix(s[i+1:], "&\""):
		return QuotedIdent, scanQuoted(s, i+2, '"', false)
	case isOperatorChar(c) && !strings.HasPrefix(s[i:], "--") && !strings.HasPrefix(s[i:], "/*"):
		return Punct, operatorEnd(s, i)
	}
	return next(s, i)
}

// isOperatorChar reports whether c may be part of a PostgreSQL operator.
// (The backtick is one too, but a backtick-quoted name is lexed as one,
// for the checks that tell the writer PostgreSQL quotes with "…".)
func isOperatorChar(c byte) bool { return strings.IndexByte("+-*/<>=~!@#%^&|?", c) >= 0 }

// operatorEnd returns the index after the PostgreSQL operator at s[i].
func operatorEnd(s string, i int) int {
	j := i
	for j < len(s) && isOperatorChar(s[j]) && !strings.HasPrefix(s[j:], "--") && !strings.HasPrefix(s[j:], "/*") {
		j++
	}
	if j-i > 1 && !strings.ContainsAny(s[i:j], "~!@#%^&|?") {
		for j-i > 1 && (s[j-1] == '+' || s[j-1] == '-') {
			j--
		}
	}
	return j
}

// PostgresOperator reports whether s, a token of LexPostgres, is an
// operator made of operator characters (=, @>, ?|, <->, …).
func PostgresOperator(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isOperatorChar(s[i]) {
			return false
		}
	}
	return s != ""
}
