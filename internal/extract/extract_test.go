package extract

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/internal/sqltext"
)

func TestExtract(t *testing.T) {
	cases := []struct {
		name, in, want string // want "" means no SQL
	}{
		// C2 #12
		{"fenced sql", "```sql\nSELECT name FROM artists;\n```", "SELECT name FROM artists"},
		// C2 #14
		{"prose only", `The "invoices" table holds customer orders: invoice date, customer id and total.`, ""},
		{"prose with label-like colon", "The invoices table holds customer orders: invoice date, customer id and total.", ""},
		// C2 #15
		{"SQLQuery label", "SQLQuery:\nSELECT id, title FROM docket ORDER BY modified DESC LIMIT 5;", "SELECT id, title FROM docket ORDER BY modified DESC LIMIT 5"},
		{"intermediate_sql label", "intermediate_sql: SELECT DISTINCT brand FROM posts", "SELECT DISTINCT brand FROM posts"},
		{"label without space", "SQL:SELECT 1", "SELECT 1"},
		{"bold label", "**SQL Query:** SELECT a FROM t", "SELECT a FROM t"},
		{"Query label then result", "Question: how many?\nSQLQuery: SELECT COUNT(*) FROM t\nSQLResult: [(3,)]\nAnswer: There are 3.", "SELECT COUNT(*) FROM t"},
		// C2 #16
		{"multi CTE fenced", "```sql\nWITH a AS (SELECT id FROM t1),\nb AS (SELECT id FROM t2)\nSELECT * FROM a JOIN b USING (id);\n```", "WITH a AS (SELECT id FROM t1),\nb AS (SELECT id FROM t2)\nSELECT * FROM a JOIN b USING (id)"},
		{"multi CTE bare", "WITH a AS (SELECT id FROM t1),\nb AS (SELECT id FROM t2)\nSELECT * FROM a JOIN b USING (id);", "WITH a AS (SELECT id FROM t1),\nb AS (SELECT id FROM t2)\nSELECT * FROM a JOIN b USING (id)"},
		{"within group", "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY price) FROM items;", "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY price) FROM items"},
		{"with rollup fenced", "```sql\nSELECT region, COUNT(*) FROM sales GROUP BY region WITH ROLLUP;\n```", "SELECT region, COUNT(*) FROM sales GROUP BY region WITH ROLLUP"},
		{"with rollup bare on next line", "SELECT region, COUNT(*) FROM sales GROUP BY region\nWITH ROLLUP;", "SELECT region, COUNT(*) FROM sales GROUP BY region\nWITH ROLLUP"},
		// C2 #28
		{"leading comment kept", "```sql\n-- count rows\nSELECT COUNT(*) FROM t\n```", "-- count rows\nSELECT COUNT(*) FROM t"},
		{"leading comment bare", "-- count rows\nSELECT COUNT(*) FROM t", "-- count rows\nSELECT COUNT(*) FROM t"},
		// writes are extracted whole, for the guard to refuse
		{"multiple statements bare", "SELECT 1; DROP TABLE employees; SELECT 2;", "SELECT 1; DROP TABLE employees; SELECT 2"},
		{"drop with white space", "\n  drop\ttable city_stats ;  ", "drop\ttable city_stats"},
		{"data-modifying CTE", "WITH x AS (SELECT 1) DELETE FROM messages -- limit", "WITH x AS (SELECT 1) DELETE FROM messages"},
		{"vacuum into", "/* x */ VACUUM INTO '/tmp/exfil.db'", "/* x */ VACUUM INTO '/tmp/exfil.db'"},
		{"attach", "-- x\nATTACH DATABASE '/tmp/other.db' AS o", "-- x\nATTACH DATABASE '/tmp/other.db' AS o"},
		{"pragma", "PRAGMA user_version = 42", "PRAGMA user_version = 42"},
		{"copy", "COPY (SELECT 1) TO PROGRAM 'id'", "COPY (SELECT 1) TO PROGRAM 'id'"},
		{"top", "SELECT TOP 5 name FROM artists ORDER BY name", "SELECT TOP 5 name FROM artists ORDER BY name"},
		{"fenced pragma tagged sql", "```sql\nPRAGMA writable_schema = ON\n```", "PRAGMA writable_schema = ON"},
		// prose around SQL
		{"prose before and after", "Here is the query you need:\n\nSELECT name\nFROM artists\nORDER BY name;\n\nThis lists every artist.", "SELECT name\nFROM artists\nORDER BY name"},
		{"prose after without semicolon", "SELECT name FROM artists\nThis lists every artist.", "SELECT name FROM artists"},
		{"prose after blank line", "SELECT name FROM artists\n\nAnd that is all.", "SELECT name FROM artists"},
		{"semicolon then prose", "SELECT name FROM artists; This lists every artist.", "SELECT name FROM artists"},
		{"inline after colon", "The answer is: SELECT COUNT(*) FROM t", "SELECT COUNT(*) FROM t"},
		{"apostrophe in prose before", "Here's the query:\nSELECT name FROM t WHERE x = 'it''s'", "SELECT name FROM t WHERE x = 'it''s'"},
		{"inline code", "Run `SELECT COUNT(*) FROM t` to count them.", "SELECT COUNT(*) FROM t"},
		{"untagged fence", "```\nSELECT 1\n```", "SELECT 1"},
		{"one-line fence", "```sql SELECT name FROM t```", "SELECT name FROM t"},
		{"one-line untagged fence", "```SELECT name FROM t```", "SELECT name FROM t"},
		{"unclosed fence", "```sql\nSELECT name FROM t", "SELECT name FROM t"},
		{"last fence wins", "First try:\n```sql\nSELECT a FROM t\n```\nCorrected:\n```sql\nSELECT b FROM t\n```", "SELECT b FROM t"},
		{"python fence skipped", "```python\nprint('hi')\n```\n```sql\nSELECT 1\n```", "SELECT 1"},
		{"multiline select", "SELECT\n  a.name,\n  COUNT(*) AS n\nFROM artists a\nJOIN albums b\n  ON a.id = b.artist_id\nWHERE b.year > 2000\n  AND b.title LIKE 'A%'\nGROUP BY a.name\nORDER BY n DESC, a.name\nLIMIT 5", "SELECT\n  a.name,\n  COUNT(*) AS n\nFROM artists a\nJOIN albums b\n  ON a.id = b.artist_id\nWHERE b.year > 2000\n  AND b.title LIKE 'A%'\nGROUP BY a.name\nORDER BY n DESC, a.name\nLIMIT 5"},
		{"case expression", "SELECT CASE\n  WHEN x > 1 THEN 'a'\n  ELSE 'b'\nEND AS y\nFROM t", "SELECT CASE\n  WHEN x > 1 THEN 'a'\n  ELSE 'b'\nEND AS y\nFROM t"},
		{"keywords in literals", "SELECT 'a; DROP TABLE x' AS s, \"with\" FROM t", "SELECT 'a; DROP TABLE x' AS s, \"with\" FROM t"},
		{"parenthesised union", "(SELECT a FROM t) UNION (SELECT b FROM u)", "(SELECT a FROM t) UNION (SELECT b FROM u)"},
		{"values", "VALUES (1), (2)", "VALUES (1), (2)"},
		{"recursive cte", "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 5) SELECT n FROM t", "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 5) SELECT n FROM t"},
		{"select without from", "SELECT date('now')", "SELECT date('now')"},
		{"string as table", "SELECT count(*) FROM 'flights' WHERE x = 1", "SELECT count(*) FROM 'flights' WHERE x = 1"},
		// a parenthesis the model left open: the whole query, not the line
		// where a parenthesised subquery starts
		{"unclosed parenthesis", "SELECT\n  ((SELECT COUNT(*) FROM t) * 100 / (SELECT COUNT(*) FROM u) AS pct", "SELECT\n  ((SELECT COUNT(*) FROM t) * 100 / (SELECT COUNT(*) FROM u) AS pct"},
		{"unclosed call", "SQLQuery: SELECT COUNT(x FROM t", "SELECT COUNT(x FROM t"},
		{"cast and operators", "SELECT CAST(a AS REAL) / b, x::int, -y FROM t WHERE z IS NOT NULL AND w NOT IN (1, 2)", "SELECT CAST(a AS REAL) / b, x::int, -y FROM t WHERE z IS NOT NULL AND w NOT IN (1, 2)"},
		{"numbered list", "Steps:\n1. SELECT name FROM artists", "SELECT name FROM artists"},
		{"bullet", "- SELECT name FROM artists\n- done", "SELECT name FROM artists"},
		{"think then answer", "<think>maybe SELECT a FROM t</think>\nSELECT b FROM t", "SELECT b FROM t"},
		// prose that must not be taken as SQL
		{"with prose", "With the students table you can list every enrolment.", ""},
		{"select prose", "Select the rows you need from the table.", ""},
		{"select prose 2", "Select all customers from Germany.", ""},
		{"update prose", "Update: the table has no such column.", ""},
		{"drop prose", "Drop me a line if this is wrong.", ""},
		{"show prose", "Show me the data first.", ""},
		{"explain prose", "Explain: the question is about weather, not this database.", ""},
		{"create prose", "Create a table first.", ""},
		{"set prose", "Set the limit higher.", ""},
		{"values prose", "Values are stored in cents.", ""},
		{"begin prose", "Begin by counting rows.", ""},
		{"use prose", "Use the LIKE operator.", ""},
		{"table label", "Table: students\nColumns: id, name", ""},
		{"copy prose", "Copy the query below.", ""},
		{"mid-sentence select", "You can select the name from the artists table.", ""},
		{"json is not sql", `{"sql": "SELECT 1"`, ""},
		{"empty", "", ""},
		{"comment only", "```sql\n-- nothing to do\n```", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := SQL(c.in)
			assert.Equal(t, c.want, got, "SQL(%q)", c.in)
			assert.Equal(t, c.want != "", ok, "SQL(%q) ok", c.in)
		})
	}
}

func TestStartsStatement(t *testing.T) {
	yes := []string{
		"SELECT 1", "select * from t", "  -- c\n SELECT a FROM t", "WITH a AS (SELECT 1) SELECT * FROM a",
		"INSERT INTO t VALUES (1)", "UPDATE t SET a = 1", "DELETE FROM t", "DROP TABLE t", "CREATE TABLE t (a int)",
		"ALTER TABLE t ADD COLUMN b int", "TRUNCATE t", "GRANT SELECT ON t TO bob", "ATTACH 'x.db' AS x",
		"PRAGMA table_info(t)", "VACUUM", "BEGIN", "COMMIT", "SET search_path = public", "EXPLAIN SELECT 1",
		"EXPLAIN QUERY PLAN SELECT 1", "SELECT a FROM t WHERE b IN (SELECT c FROM u)", "SELECT left(name, 3) FROM t",
		"SELECT COUNT(*) FILTER (WHERE x) OVER (PARTITION BY y) FROM t", "SELECT a FROM \"My Table\"",
		"SELECT a FROM main.t AS x", "SELECT t.* FROM t", "SELECT 1 AS \"x\"", "SELECT x FROM json_each('[1]')",
		"SELECT DISTINCT ON (a) a, b FROM t", "SELECT a FROM t1, t2", "SELECT a FROM t NATURAL JOIN u",
	}
	no := []string{
		"", "SELECT", "select the rows you want", "With the students table you can",
		"WITH a", "Update the table", "Delete everything", "Drop the duplicates first",
		"Truncate the output", "Grant access to the team", "Attach the file", "Vacuum the room",
		"Begin by counting", "Commit to it", "End of answer", "Set the limit", "Show me the data",
		"Explain it", "Describe the table to me", "Use the LIKE operator", "Table students has 3 rows",
		"Values are in cents", "Call me later", "Execute the query below", "Load the file",
		"Do this first", "The answer is 42", "(see above)", "Select all customers from Germany.",
		"Select one or two.", "Selecting rows", "select name and title from the table", "EXPLAIN EXPLAIN SELECT 1",
	}
	for _, s := range yes {
		assert.True(t, StartsStatement(s), "StartsStatement(%q)", s)
	}
	for _, s := range no {
		assert.False(t, StartsStatement(s), "StartsStatement(%q)", s)
	}
}

// A long statement is found whole although it runs past the first window.
func TestExtractLong(t *testing.T) {
	var b strings.Builder
	b.WriteString("Answer:\nSELECT id FROM t WHERE id IN (")
	for i := range 3000 {
		if i > 0 {
			b.WriteString(",\n")
		}
		b.WriteString("1")
	}
	b.WriteString(")\nORDER BY id;\nDone.")
	got, ok := SQL(b.String())
	assert.True(t, ok && strings.HasPrefix(got, "SELECT id FROM t") && strings.HasSuffix(got, ")\nORDER BY id"),
		"SQL(long) = %.60q…%q, %v", got, got[max(0, len(got)-20):], ok)
}

func FuzzExtract(f *testing.F) {
	for _, s := range []string{"```sql\nSELECT 1;\n```", "SQL: SELECT a FROM t;", "With the table", "SELECT 'x;",
		"WITH a AS (SELECT 1) SELECT * FROM a", "```", "``````", "SELECT (((", "a:b:c\nSELECT 1; DROP TABLE t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := SQL(s)
		require.Equal(t, got != "", ok, "SQL(%q) = %q, %v", s, got, ok)
		if ok {
			require.Equal(t, got, strings.TrimSpace(got), "SQL(%q): surrounding white space", s)
			toks := sqltext.Lex(got)
			last := toks[len(toks)-1]
			require.False(t, last.Trivia() || (last.Kind == sqltext.Punct && last.Text == ";"), "SQL(%q) = %q: ends with %q", s, got, last.Text)
		}
		StartsStatement(s)
	})
}

// A deeply nested query is still extracted whole, alone and after a
// label.
func TestExtractDeeplyNested(t *testing.T) {
	const n = 40
	q := "SELECT a FROM t WHERE a IN " + strings.Repeat("(SELECT a FROM t WHERE a IN ", n) + "(1)" + strings.Repeat(")", n)
	e := "SELECT " + strings.Repeat("(", 4*n) + "1" + strings.Repeat(")", 4*n)
	for _, text := range []string{q, "Here is the query:\n" + q + "\nIt works.", "Here is the query:\n" + e + "\nIt works."} {
		got, ok := SQL(text)
		require.True(t, ok, text)
		assert.True(t, got == q || got == e, "extracted %q", got)
	}
}
