package sqltext

import "strings"

// Convention is a set of lexical rules for comments and literals. Engines
// disagree on a few of them (nested block comments, backslash escapes, "#"
// comments, dollar quoting, MySQL's executable /*! … */ comments), and a
// statement splitter that follows one engine's rules can be fooled by text
// written for another. A guard that must be sure a text holds exactly one
// statement counts under every convention and refuses when any disagrees.
type Convention int

// The conventions CountStatements knows.
const (
	// Standard is Lex's convention: nested /* */ comments, '' escapes,
	// E'…' backslash strings and $tag$…$tag$ strings (PostgreSQL).
	Standard Convention = iota
	// SQLite: /* */ does not nest, no backslash escapes, "$" starts a
	// parameter name rather than a string.
	SQLite
	// MySQL: backslash escapes inside '…' and "…", "#" and "-- " line
	// comments, /* */ does not nest, and /*! … */ or /*+ … */ hold code.
	MySQL
)

// Conventions lists every Convention, for callers that check them all.
var Conventions = []Convention{Standard, SQLite, MySQL}

// CountStatements returns how many statements s holds under convention c:
// the pieces between top-level semicolons that contain anything but white
// space and comments. It never fails; an unterminated literal or comment
// runs to the end of the input.
func CountStatements(s string, c Convention) int {
	if c == Standard {
		return len(Statements(s))
	}
	n := 0
	significant := false
	i := 0
	for i < len(s) {
		ch := s[i]
		switch {
		case ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' || ch == '\v':
			i++
		case ch == '-' && i+1 < len(s) && s[i+1] == '-' && (c != MySQL || i+2 >= len(s) || s[i+2] <= ' '):
			i = lineEnd(s, i)
		case ch == '#' && c == MySQL:
			i = lineEnd(s, i)
		case ch == '/' && i+1 < len(s) && s[i+1] == '*':
			if c == MySQL && i+2 < len(s) && (s[i+2] == '!' || s[i+2] == '+') {
				// Executable comment or optimizer hint: its content is code.
				significant = true
				i += 3
				continue
			}
			j := indexFrom(s, i+2, "*/")
			if j < 0 {
				i = len(s)
			} else {
				i = j + 2
			}
		case ch == '\'' || ch == '"' || ch == '`':
			significant = true
			i = scanQuoted(s, i, ch, c == MySQL && ch != '`')
		case ch == '[' && c == SQLite:
			significant = true
			if j := indexFrom(s, i, "]"); j >= 0 {
				i = j + 1
			} else {
				i = len(s)
			}
		case ch == ';':
			if significant {
				n++
			}
			significant = false
			i++
		default:
			significant = true
			i++
		}
	}
	if significant {
		n++
	}
	return n
}

// scanQuoted returns the index after the literal opened by q at s[i]. A
// doubled q escapes it; with backslash, so does a backslash.
func scanQuoted(s string, i int, q byte, backslash bool) int {
	i++
	for i < len(s) {
		switch {
		case backslash && s[i] == '\\':
			i += 2
			continue
		case s[i] == q:
			if i+1 < len(s) && s[i+1] == q {
				i += 2
				continue
			}
			return i + 1
		}
		i++
	}
	return len(s)
}

func indexFrom(s string, from int, sub string) int {
	if from > len(s) {
		return -1
	}
	if j := strings.Index(s[from:], sub); j >= 0 {
		return from + j
	}
	return -1
}
