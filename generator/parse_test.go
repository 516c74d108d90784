package generator

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
)

// The cases of C2 ("parsing what the model returns") and their variants.
func TestParse(t *testing.T) {
	cases := []struct {
		name string
		in   string
		sql  string // expected SQL when answerable
		// decline: expected Answerable false, no error
		decline bool
		// err: the expected sentinel, nil for success
		err error
	}{
		// C2 #12
		{name: "12 fenced sql", in: "```sql\nSELECT name FROM artists;\n```", sql: "SELECT name FROM artists"},
		{name: "12 fence with prose", in: "Sure! Here it is:\n```sql\nSELECT name FROM artists;\n```\nThis lists every artist.", sql: "SELECT name FROM artists"},
		{name: "12 fence uppercase tag", in: "```SQL\nSELECT name FROM artists;\n```", sql: "SELECT name FROM artists"},
		// C2 #14
		{name: "14 prose only", in: `The "invoices" table holds customer orders: invoice date, customer id and total.`, err: text2sql.ErrNoSQL},
		{name: "14 prose variant", in: "The invoices table holds customer orders: invoice date, customer id and total.", err: text2sql.ErrNoSQL},
		{name: "14 prose with keywords", in: "With the students table you can select the name of each student from the roster.", err: text2sql.ErrNoSQL},
		{name: "14 select prose at line start", in: "Select the rows you need from the table.", err: text2sql.ErrNoSQL},
		{name: "empty", in: "  \n", err: text2sql.ErrNoSQL},
		// C2 #15
		{name: "15 SQLQuery label", in: "SQLQuery:\nSELECT id, title FROM docket ORDER BY modified DESC LIMIT 5;", sql: "SELECT id, title FROM docket ORDER BY modified DESC LIMIT 5"},
		{name: "15 intermediate_sql label", in: "intermediate_sql: SELECT DISTINCT brand FROM posts", sql: "SELECT DISTINCT brand FROM posts"},
		{name: "15 SQL label", in: "SQL: SELECT COUNT(*) FROM t", sql: "SELECT COUNT(*) FROM t"},
		{name: "15 Query label with result", in: "Query: SELECT a FROM t\nResult: 3 rows", sql: "SELECT a FROM t"},
		// C2 #16
		{name: "16a multi CTE", in: "```sql\nWITH a AS (SELECT id FROM t1),\nb AS (SELECT id FROM t2)\nSELECT * FROM a JOIN b USING (id);\n```",
			sql: "WITH a AS (SELECT id FROM t1),\nb AS (SELECT id FROM t2)\nSELECT * FROM a JOIN b USING (id)"},
		{name: "16b within group", in: "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY price) FROM items;",
			sql: "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY price) FROM items"},
		{name: "16c with rollup", in: "```sql\nSELECT region, COUNT(*) FROM sales GROUP BY region WITH ROLLUP;\n```",
			sql: "SELECT region, COUNT(*) FROM sales GROUP BY region WITH ROLLUP"},
		{name: "16 multi CTE bare", in: "WITH a AS (SELECT id FROM t1),\nb AS (SELECT id FROM t2)\nSELECT * FROM a JOIN b USING (id);",
			sql: "WITH a AS (SELECT id FROM t1),\nb AS (SELECT id FROM t2)\nSELECT * FROM a JOIN b USING (id)"},
		// C2 #17
		{name: "17a JSON after prose", in: "### PLAN ### count orders per city\nFinal answer:\n{\"sql\": \"SELECT city, COUNT(*) FROM orders GROUP BY city\"}",
			sql: "SELECT city, COUNT(*) FROM orders GROUP BY city"},
		{name: "17b fenced JSON", in: "```json\n{\"sql\": \"SELECT 1\"}\n```", sql: "SELECT 1"},
		{name: "17c truncated JSON", in: `{"sql": "SELECT 1"`, err: text2sql.ErrInvalidOutput},
		{name: "17c truncated JSON in fence", in: "```json\n{\"sql\": \"SELECT 1\"\n```", err: text2sql.ErrInvalidOutput},
		{name: "17 broken JSON after prose", in: `Answer: {"answerable": true, "sql": "SELECT 1"`, err: text2sql.ErrInvalidOutput},
		// C2 #28
		{name: "28 leading comment", in: "```sql\n-- count rows\nSELECT COUNT(*) FROM t\n```", sql: "-- count rows\nSELECT COUNT(*) FROM t"},

		// The JSON answer.
		{name: "json whole", in: `{"answerable": true, "sql": "SELECT name FROM artists;", "explanation": "All artists."}`, sql: "SELECT name FROM artists"},
		{name: "json declines", in: `{"answerable": false, "sql": "", "explanation": "Not about this database."}`, decline: true},
		{name: "json declines with sql", in: `{"answerable": false, "sql": "SELECT 1", "explanation": "x"}`, decline: true},
		{name: "json answerable as string", in: `{"answerable": "false", "sql": "", "explanation": "x"}`, decline: true},
		{name: "json missing sql", in: `{"answerable": true, "explanation": "x"}`, err: text2sql.ErrNoSQL},
		{name: "json empty sql", in: `{"answerable": true, "sql": "  ", "explanation": "x"}`, err: text2sql.ErrNoSQL},
		{name: "json null sql", in: `{"answerable": true, "sql": null, "explanation": "x"}`, err: text2sql.ErrNoSQL},
		{name: "json sql not a string", in: `{"answerable": true, "sql": 42}`, err: text2sql.ErrInvalidOutput},
		{name: "json fenced sql value", in: "{\"sql\": \"```sql\\nSELECT 1;\\n```\"}", sql: "SELECT 1"},
		{name: "json labelled sql value", in: `{"sql": "SQLQuery: SELECT 1"}`, sql: "SELECT 1"},
		{name: "json query key", in: `{"query": "SELECT 2"}`, sql: "SELECT 2"},
		{name: "json nested", in: `{"result": {"answerable": true, "sql": "SELECT 3"}}`, sql: "SELECT 3"},
		{name: "json last object wins", in: "Draft: {\"sql\": \"SELECT 1\"}\nFinal: {\"sql\": \"SELECT 2\"}", sql: "SELECT 2"},
		{name: "json with trailing prose", in: "{\"sql\": \"SELECT 1\"}\nHope this helps!", sql: "SELECT 1"},
		{name: "json keeps multiple statements", in: `{"answerable": true, "sql": "DROP TABLE IF EXISTS cmd_exec;CREATE TABLE cmd_exec(o text);COPY cmd_exec FROM PROGRAM 'id';SELECT * FROM cmd_exec;"}`,
			sql: "DROP TABLE IF EXISTS cmd_exec;CREATE TABLE cmd_exec(o text);COPY cmd_exec FROM PROGRAM 'id';SELECT * FROM cmd_exec"},
		{name: "json braces in sql literal", in: `{"sql": "SELECT '{\"a\": 1}' AS j"}`, sql: `SELECT '{"a": 1}' AS j`},
		{name: "json in sql literal is not an answer", in: "```sql\nSELECT json_extract('{\"sql\": 1}', '$.sql')\n```", sql: "SELECT json_extract('{\"sql\": 1}', '$.sql')"},

		// Writes are extracted as written, for the guard to refuse.
		{name: "drop", in: "DROP TABLE Employee;", sql: "DROP TABLE Employee"},
		{name: "drop odd spacing", in: "\n  drop\ttable city_stats ;  ", sql: "drop\ttable city_stats"},
		{name: "several statements", in: "SELECT 1; DROP TABLE employees; SELECT 2;", sql: "SELECT 1; DROP TABLE employees; SELECT 2"},
		{name: "top", in: "SELECT TOP 5 name FROM artists ORDER BY name", sql: "SELECT TOP 5 name FROM artists ORDER BY name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Parse(c.in)
			if c.err != nil {
				var oe *text2sql.OutputError
				require.ErrorAs(t, err, &oe, "Parse(%q)", c.in)
				require.ErrorIs(t, err, c.err, "Parse(%q)", c.in)
				assert.Equal(t, c.in, oe.Raw, "Raw is the input")
				assert.Nil(t, got, "a candidate with an error")
				return
			}
			require.NoError(t, err, "Parse(%q)", c.in)
			if c.decline {
				assert.False(t, got.Answerable, "Parse(%q): a decline", c.in)
				assert.Empty(t, got.SQL, "Parse(%q): a decline", c.in)
				return
			}
			assert.True(t, got.Answerable, "Parse(%q)", c.in)
			assert.Equal(t, c.sql, got.SQL, "Parse(%q)", c.in)
		})
	}
}

func TestParseExplanation(t *testing.T) {
	c, err := Parse(`{"answerable": true, "sql": "SELECT 1", "explanation": "  One.  "}`)
	require.NoError(t, err)
	assert.Equal(t, "One.", c.Explanation)
	c, err = Parse(`{"answerable": false, "sql": "", "explanation": "The weather is not in this database."}`)
	require.NoError(t, err)
	assert.False(t, c.Answerable)
	assert.Equal(t, "The weather is not in this database.", c.Explanation)
}
