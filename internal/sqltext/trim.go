package sqltext

import "strings"

// TrimTerminators removes white space and semicolons from both ends of
// s, and nothing else: unlike StripTrailing it reads no comment, so it
// means the same under every engine's lexical rules (a MySQL executable
// comment /*! … */ at the end stays, for the engine's own check to see).
// Removing a final semicolon never changes what a statement does: it is
// a terminator, or part of a comment or of an unterminated literal.
func TrimTerminators(s string) string {
	return strings.TrimFunc(s, func(r rune) bool {
		return r == ';' || r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f' || r == '\v'
	})
}
