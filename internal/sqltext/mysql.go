package sqltext

import "strings"

// MySQLMode is the part of a MySQL/MariaDB session's sql_mode that changes
// how a text is split into tokens.
type MySQLMode struct {
	// ANSIQuotes (sql_mode ANSI_QUOTES): "…" quotes an identifier, not a
	// string.
	ANSIQuotes bool
	// NoBackslashEscapes (sql_mode NO_BACKSLASH_ESCAPES): a backslash is
	// an ordinary character inside strings.
	NoBackslashEscapes bool
}

// ParseMySQLMode returns the lexical part of an sql_mode value (the
// comma-separated list @@sql_mode holds). The combination modes ANSI
// (MySQL, MariaDB) and ORACLE, DB2, POSTGRESQL, MSSQL, MAXDB (MariaDB)
// include ANSI_QUOTES.
func ParseMySQLMode(sqlMode string) MySQLMode {
	var m MySQLMode
	for _, f := range strings.Split(strings.ToUpper(sqlMode), ",") {
		switch strings.TrimSpace(f) {
		case "ANSI_QUOTES", "ANSI", "ORACLE", "DB2", "POSTGRESQL", "MSSQL", "MAXDB":
			m.ANSIQuotes = true
		case "NO_BACKSLASH_ESCAPES":
			m.NoBackslashEscapes = true
		}
	}
	return m
}

// LexMySQL splits s into tokens by the rules of MySQL's and MariaDB's
// lexers under mode m, so that joining the Text of all tokens gives back
// s:
//
//   - '…' is a String, and so is "…" unless m.ANSIQuotes (then it is a
//     QuotedIdent, as `…` always is). Inside strings a backslash escapes
//     the next byte unless m.NoBackslashEscapes; a doubled quote escapes
//     itself everywhere.
//   - "#" starts a LineComment, and so does "--" when the byte after it is
//     white space or a control character (or the text ends): "--1" is two
//     minus signs and a number.
//   - "/*" starts a BlockComment that ends at the first "*/" (comments do
//     not nest). The comments whose content the server executes — /*! …
//     */ and /*M! … */, with or without version digits — and optimizer
//     hints /*+ … */ are BlockComments too: see ExecutableComment.
//   - X'…', B'…' and N'…' are Strings (hexadecimal, bit and national
//     literals).
//   - A word starting with a digit that is not a number (1abc) is a Word,
//     as MySQL allows such identifiers; @name, @@name (a system
//     variable, @@session.name too) and ? are Params.
//
// Like Lex it never fails: an unterminated literal or comment runs to the
// end of the input, where the server reports it.
func LexMySQL(s string, m MySQLMode) []Token {
	return lex(s, func(s string, i int) (TokenKind, int) { return nextMySQL(s, i, m) })
}

// nextMySQL returns the Kind and end index of LexMySQL's token starting
// at s[i] under mode m.
func nextMySQL(s string, i int, m MySQLMode) (TokenKind, int) {
	c := s[i]
	switch {
	case isSpace(c):
		return Space, spaceEnd(s, i)
	case c == '#' || c == '-' && i+1 < len(s) && s[i+1] == '-' && (i+2 >= len(s) || s[i+2] <= ' ' || s[i+2] == 0x7f):
		return LineComment, lineEnd(s, i)
	case c == '/' && i+1 < len(s) && s[i+1] == '*':
		if j := indexFrom(s, i+2, "*/"); j >= 0 {
			return BlockComment, j + 2
		}
		return BlockComment, len(s)
	case c == '\'' || c == '"' && !m.ANSIQuotes:
		return String, scanQuoted(s, i, c, !m.NoBackslashEscapes)
	case c == '"' || c == '`':
		return QuotedIdent, scanQuoted(s, i, c, false)
	case c == '?':
		return Param, i + 1
	case c == '@' && i+1 < len(s) && (isIdentPart(s[i+1]) || s[i+1] == '@' && i+2 < len(s) && isIdentPart(s[i+2])):
		return Param, variableEnd(s, i)
	}
	return nextMySQLName(s, i, m)
}

// variableEnd returns the index after the MySQL variable at s[i]: @name,
// @@name or @@session.name (a system variable).
func variableEnd(s string, i int) int {
	i++
	if s[i] == '@' {
		i++
	}
	for i < len(s) && (isIdentPart(s[i]) || s[i] == '.') {
		i++
	}
	return i
}

// nextMySQLName is nextMySQL for a token that is neither white space, a
// comment, quoted, a parameter nor a variable: a name, a number, an
// X'…', B'…' or N'…' literal, or punctuation.
func nextMySQLName(s string, i int, m MySQLMode) (TokenKind, int) {
	c := s[i]
	switch {
	case isDigit(c) && afterQualifier(s, i):
		// The name after "name." is an identifier, digits first or not:
		// o.1secret is table 1secret of database o.
		return Word, identEnd(s, i)
	case c == '.' && afterQualifier(s, i+1):
		return Punct, i + 1
	case isDigit(c) || (c == '.' && i+1 < len(s) && isDigit(s[i+1])):
		end := number(s, i)
		// Digits run into letters make an identifier (1abc); a number
		// with a point or an exponent ends before them (1.5INTO is 1.5
		// INTO), as the server reads it.
		if c != '.' && end < len(s) && isIdentPart(s[end]) && !strings.ContainsAny(s[i:end], ".eE") {
			return Word, identEnd(s, end)
		}
		return Number, end
	case strings.IndexByte("xXbBnN", c) >= 0 && i+1 < len(s) && s[i+1] == '\'':
		// X'41', B'101', N'text': one literal, as the server reads it.
		return String, scanQuoted(s, i+1, '\'', (c == 'n' || c == 'N') && !m.NoBackslashEscapes)
	case isIdentStart(c) || c == '$':
		return Word, identEnd(s, i)
	}
	return Punct, i + operatorLen(s[i:])
}

// afterQualifier reports whether s[j-1] is a "." that directly follows a
// name (an identifier's last character or closing quote), so that s[j]
// starts the qualified name.
func afterQualifier(s string, j int) bool {
	if j < 2 || j > len(s) || s[j-1] != '.' {
		return false
	}
	p := s[j-2]
	return isIdentPart(p) && !isNumberTail(s, j-2) || p == '`' || p == '"'
}

// isNumberTail reports whether s[k] ends a number (12.5 is no qualifier).
func isNumberTail(s string, k int) bool {
	i := k
	for i >= 0 && isIdentPart(s[i]) {
		i--
	}
	return i+1 <= k && isDigit(s[i+1]) && strings.Trim(s[i+1:k+1], "0123456789") == ""
}

// ExecutableComment reports whether t is a comment whose content a MySQL
// or MariaDB server reads as SQL: an executable comment (/*! … */,
// /*!50000 … */, MariaDB's /*M! … */ and /*M!100000 … */) or an optimizer
// hint (/*+ … */), which can set session variables (SET_VAR) and change
// how the statement runs. It returns the comment's opening ("/*!",
// "/*M!", "/*+") or "".
func ExecutableComment(t Token) string {
	if t.Kind != BlockComment {
		return ""
	}
	for _, p := range []string{"/*!", "/*M!", "/*m!", "/*+"} {
		if strings.HasPrefix(t.Text, p) {
			return strings.ToUpper(p)
		}
	}
	return ""
}

// StatementsMySQL is Statements with the tokens of LexMySQL.
func StatementsMySQL(s string, m MySQLMode) []string {
	return split(s, LexMySQL(s, m))
}

// StripTrailingMySQL is StripTrailing with the tokens of LexMySQL.
func StripTrailingMySQL(s string, m MySQLMode) string {
	return stripTrailing(s, LexMySQL(s, m))
}
