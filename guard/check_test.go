package guard

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/sqltext"
)

func TestCheckText(t *testing.T) {
	ok := []string{
		"SELECT 1",
		"select name from singer;",
		"  SELECT ';' AS x ; -- trailing ; comment",
		"SELECT 1; /* done */",
		"WITH a AS (SELECT 1) SELECT * FROM a",
		"WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 5) SELECT n FROM t",
		"with a(x) as materialized (select 1), b as not materialized (values (2)) select * from a, b",
		"WITH a AS (WITH b AS (SELECT 1) SELECT * FROM b) SELECT * FROM a",
		"VALUES (1), (2)",
		"(SELECT 1) UNION (SELECT 2)",
		"((SELECT 1))",
		`SELECT "insert", t."delete", t.update, [into] FROM t`,
		"SELECT replace(name, 'a', 'b'), insert('abc', 1, 1, 'x') FROM t",
		"SELECT x FROM t WHERE name LIKE '%update%' OR name = 'DELETE FROM t; DROP TABLE t'",
		"SELECT substring(x FROM 1 FOR 2) FROM t",
		"SELECT created_at, updated_by, deleted FROM t",
		"SELECT a -- comment; DROP TABLE t\nFROM t",
		// PostgreSQL's SEARCH and CYCLE clauses after a recursive CTE.
		"WITH RECURSIVE r(n) AS (SELECT 1) SEARCH DEPTH FIRST BY n SET o SELECT * FROM r",
		"WITH RECURSIVE r(n, m) AS (SELECT 1, 2) SEARCH BREADTH FIRST BY n, m SET o CYCLE n, m SET c TO 'y' DEFAULT 'n' USING p, s AS (SELECT 1) SELECT * FROM r, s",
	}
	for _, q := range ok {
		assert.Nil(t, CheckText(q), "CheckText(%q)", q)
	}
	refused := []struct {
		q    string
		kind text2sql.ErrorKind
	}{
		{"", text2sql.KindEmpty},
		{" ;; ", text2sql.KindEmpty},
		{"-- only a comment", text2sql.KindEmpty},
		{"SELECT 1; DROP TABLE employees; SELECT 2;", text2sql.KindMultipleStatements},
		{"SELECT 1;SELECT 2", text2sql.KindMultipleStatements},
		{"DROP TABLE IF EXISTS cmd_exec;CREATE TABLE cmd_exec(o text);COPY cmd_exec FROM PROGRAM 'id';SELECT * FROM cmd_exec;", text2sql.KindMultipleStatements},
		{"SELECT 1 /* /* */ ; DROP TABLE t; -- */", text2sql.KindMultipleStatements},
		{"SELECT $a$; DROP TABLE t; SELECT $a$", text2sql.KindMultipleStatements},
		{"SELECT '\\''; DROP TABLE t; -- '", text2sql.KindMultipleStatements},
		{"SELECT 1 /*! ; DROP TABLE t */", text2sql.KindMultipleStatements},
		{"SELECT 1 # ; DROP TABLE t", text2sql.KindMultipleStatements},
		{"SELECT E'\\'; DROP TABLE t; --'", text2sql.KindMultipleStatements},
		{"SELECT 1 /* /* nested */ */", text2sql.KindDialect},
		{"DROP TABLE Employee;", text2sql.KindNotReadOnly},
		{"\n  drop\ttable city_stats ;  ", text2sql.KindNotReadOnly},
		{"/* x */ DELETE FROM t", text2sql.KindNotReadOnly},
		{"insert into t values (1)", text2sql.KindNotReadOnly},
		{"UPDATE t SET x = 1", text2sql.KindNotReadOnly},
		{"REPLACE INTO t VALUES (1)", text2sql.KindNotReadOnly},
		{"CREATE TABLE x (a)", text2sql.KindNotReadOnly},
		{"ALTER TABLE t ADD COLUMN y", text2sql.KindNotReadOnly},
		{"TRUNCATE t", text2sql.KindNotReadOnly},
		{"(DELETE FROM t)", text2sql.KindNotReadOnly},
		{"WITH x AS (SELECT 1) DELETE FROM messages -- limit", text2sql.KindNotReadOnly},
		{"WITH d AS (DELETE FROM users RETURNING *) SELECT * FROM d", text2sql.KindNotReadOnly},
		{"WITH a AS (SELECT 1), d AS ((UPDATE t SET x = 1 RETURNING x)) SELECT * FROM d", text2sql.KindNotReadOnly},
		{"SELECT * INTO loot FROM users", text2sql.KindNotReadOnly},
		{"SELECT * FROM users FOR UPDATE", text2sql.KindNotReadOnly},
		{"SELECT * FROM users FOR NO KEY UPDATE", text2sql.KindNotReadOnly},
		{"SELECT * FROM users FOR SHARE", text2sql.KindNotReadOnly},
		{"SELECT * FROM users FOR KEY SHARE", text2sql.KindNotReadOnly},
		{"SELECT * FROM users LOCK IN SHARE MODE", text2sql.KindNotReadOnly},
		{"SELECT 1 INTO OUTFILE '/tmp/x'", text2sql.KindNotReadOnly},
		{"SELECT * FROM (SELECT 1) x WHERE EXISTS (INSERT INTO t VALUES (1))", text2sql.KindNotReadOnly},
		{"/* x */ VACUUM INTO '/tmp/exfil.db'", text2sql.KindForbiddenStatement},
		{"-- x\nATTACH DATABASE '/tmp/other.db' AS o", text2sql.KindForbiddenStatement},
		{"PRAGMA user_version = 42", text2sql.KindForbiddenStatement},
		{"PRAGMA writable_schema = ON", text2sql.KindForbiddenStatement},
		{"COPY (SELECT 1) TO PROGRAM 'id'", text2sql.KindForbiddenStatement},
		{"COPY (SELECT 'x') TO '/tmp/pwn.txt'", text2sql.KindForbiddenStatement},
		{"BEGIN", text2sql.KindForbiddenStatement},
		{"COMMIT", text2sql.KindForbiddenStatement},
		{"SET role postgres", text2sql.KindForbiddenStatement},
		{"EXPLAIN ANALYZE DELETE FROM t", text2sql.KindForbiddenStatement},
		{"DETACH o", text2sql.KindForbiddenStatement},
		{"CALL p()", text2sql.KindForbiddenStatement},
		{"FROBNICATE t", text2sql.KindForbiddenStatement},
		{"WITH a AS (SELECT 1) PRAGMA x", text2sql.KindForbiddenStatement},
		{"WITH r(n) AS (SELECT 1) SEARCH DEPTH FIRST BY n SET o DELETE FROM t", text2sql.KindNotReadOnly},
		{"WITH r(n) AS (SELECT 1) CYCLE n SET c USING p UPDATE t SET x = 1", text2sql.KindNotReadOnly},
		{"WITH r(n) AS (SELECT 1) CYCLE n SET c SELECT 1", text2sql.KindForbiddenStatement},
		{"WITH r(n) AS (SELECT 1) SEARCH DEPTH FIRST BY n SELECT 1", text2sql.KindForbiddenStatement},
		{"SELEC name FROM t", text2sql.KindSyntax},
		{"42", text2sql.KindSyntax},
		{"* FROM t", text2sql.KindSyntax},
	}
	for _, c := range refused {
		se := CheckText(c.q)
		if !assert.NotNil(t, se, "CheckText(%q), want %s", c.q, c.kind) {
			continue
		}
		assert.Equal(t, c.kind, se.Kind, "CheckText(%q): %s", c.q, se.Message)
		assert.NotEmpty(t, se.Message, "CheckText(%q): message", c.q)
		if se.Kind.Refusal() {
			assert.ErrorIs(t, se, text2sql.ErrRefused, "CheckText(%q)", c.q)
		}
	}
}

func TestCountStatementsConventions(t *testing.T) {
	cases := []struct {
		s    string
		want [3]int // Standard, SQLite, MySQL
	}{
		{"SELECT 1", [3]int{1, 1, 1}},
		{"SELECT 1; ", [3]int{1, 1, 1}},
		{"SELECT 1 /* /* */ ; SELECT 2 */", [3]int{1, 2, 2}},
		{"SELECT $a$;$a$", [3]int{1, 2, 2}},
		{"SELECT '\\'; SELECT 2; '", [3]int{3, 3, 1}},
		{"SELECT 1 # ; x", [3]int{2, 2, 1}},
		{"SELECT 1 --x\n; SELECT 2", [3]int{2, 2, 2}},
		{"SELECT [a;b]", [3]int{1, 1, 2}},
		{"SELECT `a;b`", [3]int{1, 1, 1}},
		{"/*! SELECT 1 */", [3]int{0, 0, 1}},
	}
	for _, c := range cases {
		var got [3]int
		for i, conv := range sqltext.Conventions {
			got[i] = sqltext.CountStatements(c.s, conv)
		}
		assert.Equal(t, c.want, got, "CountStatements(%q)", c.s)
	}
}

func FuzzCheckText(f *testing.F) {
	for _, s := range []string{
		"SELECT 1", "SELECT 1; DROP TABLE t", "WITH a AS (SELECT 1) SELECT * FROM a", "SELECT ';'",
		"SELECT 1 /* /* */ ; x */", "SELECT '\\'; x; '", "SELECT $a$;$a$", "VALUES (1)", "(SELECT 1)",
		"WITH x AS (SELECT 1) DELETE FROM t", "SELECT * FROM t FOR UPDATE", "PRAGMA x", "", ";", "--",
		"SELECT \"a;b\" FROM [c;d] WHERE e = `f;g`", "/*! ; */", "SELECT 1 # ;",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		se := CheckText(s)
		if se == nil {
			for _, c := range sqltext.Conventions {
				require.Equal(t, 1, sqltext.CountStatements(s, c), "accepted %q: statements under convention %d", s, c)
			}
			toks := sqltext.Significant(sqltext.Lex(sqltext.Statements(s)[0]))
			i := skipOpenParens(toks, 0)
			require.True(t, i < len(toks) && (toks[i].Is("select") || toks[i].Is("with") || toks[i].Is("values")),
				"accepted %q, which does not start with a query keyword", s)
			return
		}
		require.NotEmpty(t, se.Message, "CheckText(%q) = %+v", s, se)
		require.NotEmpty(t, se.Kind, "CheckText(%q) = %+v", s, se)
		if strings.TrimSpace(s) == "" {
			require.Equal(t, text2sql.KindEmpty, se.Kind, "blank %q", s)
		}
	})
}

// DeepScan words the refusal of a statement SQLite could not parse from
// the syntax tree: clauses where the tree places them, keywords only in
// the tokens it could not place, and never a column that shares a
// keyword's name (CheckText, for engines without a parser at hand, still
// refuses those).
func TestDeepScan(t *testing.T) {
	refused := map[string]string{
		"SELECT * FROM t FOR UPDATE":                                                         "FOR UPDATE",
		"SELECT * FROM t WHERE x = 1 FOR NO KEY UPDATE":                                      "FOR NO KEY UPDATE",
		"SELECT * FROM (SELECT 1 FOR SHARE) q":                                               "FOR SHARE",
		"SELECT * FROM t LOCK IN SHARE MODE":                                                 "LOCK IN SHARE MODE",
		"SELECT a INTO b FROM t":                                                             "INTO",
		"SELECT a FROM t INTO @v":                                                            "INTO",
		"WITH x AS (DELETE FROM t RETURNING *) SELECT * FROM x":                              "DELETE",
		"WITH a AS (SELECT 1), b AS (INSERT INTO m VALUES (5) RETURNING id) SELECT * FROM b": "INSERT",
	}
	for q, word := range refused {
		se := DeepScan(q)
		if assert.NotNil(t, se, q) {
			assert.Equal(t, text2sql.KindNotReadOnly, se.Kind, q)
			assert.Contains(t, se.Message, word, q)
		}
	}
	for _, q := range []string{
		"SELECT * FROM t WHERE lock IN (1, 2)",
		"SELECT update, t.delete, merge FROM t",
		"SELECT 1",
		"",
	} {
		assert.Nil(t, DeepScan(q), q)
	}
	assert.NotNil(t, CheckText("SELECT update FROM t"), "CheckText stays lexical")
}
