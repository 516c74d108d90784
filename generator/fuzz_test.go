package generator

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/sqltext"
)

// FuzzParse checks that Parse never panics and keeps its promises: a
// candidate or an OutputError with the raw text; an answerable candidate
// has SQL that is non-empty, trimmed and without a final semicolon; a
// declining one has none.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"```sql\nSELECT name FROM artists;\n```",
		`The "invoices" table holds customer orders: invoice date, customer id and total.`,
		"SQLQuery:\nSELECT id, title FROM docket ORDER BY modified DESC LIMIT 5;",
		"intermediate_sql: SELECT DISTINCT brand FROM posts",
		"```sql\nWITH a AS (SELECT id FROM t1),\nb AS (SELECT id FROM t2)\nSELECT * FROM a JOIN b USING (id);\n```",
		"SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY price) FROM items;",
		"### PLAN ### count orders per city\nFinal answer:\n{\"sql\": \"SELECT city, COUNT(*) FROM orders GROUP BY city\"}",
		"```json\n{\"sql\": \"SELECT 1\"}\n```",
		`{"sql": "SELECT 1"`,
		"```sql\n-- count rows\nSELECT COUNT(*) FROM t\n```",
		`{"answerable": false, "sql": "", "explanation": "no"}`,
		`{"answerable": true, "sql": ";;", "explanation": ""}`,
		"SELECT 'x;",
		"{\"sql\": \"```\"}",
		"[{\"query\": \"SELECT 1 -- c\"}]",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		c, err := Parse(text)
		if err != nil {
			var oe *text2sql.OutputError
			require.ErrorAs(t, err, &oe, "Parse(%q)", text)
			require.Equal(t, text, oe.Raw, "Parse(%q): the OutputError holds the raw text", text)
			require.True(t, errors.Is(err, text2sql.ErrNoSQL) || errors.Is(err, text2sql.ErrInvalidOutput), "Parse(%q): error %v wraps neither ErrNoSQL nor ErrInvalidOutput", text, err)
			require.Nil(t, c, "Parse(%q): candidate and error", text)
			return
		}
		require.NotNil(t, c, "Parse(%q): no candidate, no error", text)
		if !c.Answerable {
			require.Empty(t, c.SQL, "Parse(%q): a decline with SQL", text)
			return
		}
		require.NotEmpty(t, c.SQL, "Parse(%q)", text)
		require.Equal(t, strings.TrimSpace(c.SQL), c.SQL, "Parse(%q): SQL untrimmed", text)
		toks := sqltext.Lex(c.SQL)
		last := toks[len(toks)-1]
		require.False(t, last.Trivia() || (last.Kind == sqltext.Punct && last.Text == ";"), "Parse(%q): SQL %q ends with %q", text, c.SQL, last.Text)
		require.False(t, strings.HasSuffix(c.SQL, ";") && last.Kind != sqltext.String && last.Kind != sqltext.QuotedIdent, "Parse(%q): SQL %q has a trailing semicolon", text, c.SQL)
	})
}
