package guard

import (
	"strings"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/sqltext"
)

// BackslashInString refuses, for PostgreSQL, a string literal that holds a
// backslash unless it is E'…' or dollar-quoted ('…', N'…', U&'…' and
// continued segments alike). The server reads those by its
// standard_conforming_strings, which an executor that does not hold the
// session (PostgREST, an MCP server) cannot pin, and off, \' ends no
// literal: text the check read as a string would run as code. E'…'
// strings and dollar quotes read the same either way. It returns nil or
// a KindForbiddenStatement *text2sql.SQLError.
func BackslashInString(query string) *text2sql.SQLError {
	for _, t := range sqltext.Lex(query) {
		escaped := strings.HasPrefix(t.Text, "E'") || strings.HasPrefix(t.Text, "e'") || strings.HasPrefix(t.Text, "$")
		if t.Kind == sqltext.String && !escaped && strings.Contains(t.Text, `\`) {
			return &text2sql.SQLError{Kind: text2sql.KindForbiddenStatement,
				Message: "a backslash in a '…' string literal is refused: the database may read it as an escape (standard_conforming_strings)",
				Hint:    `write the literal as E'…' with the backslash doubled (E'a\\b'), or without a backslash`}
		}
	}
	return nil
}
