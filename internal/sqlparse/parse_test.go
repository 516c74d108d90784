package sqlparse

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql"
)

// dump renders n as an s-expression: leaves as their source text, inner
// nodes as (label children…).
func dump(n Node) string {
	cs := Children(n)
	switch n.(type) {
	case *Ident, *Literal, *Param, *Hint, *Frame, *Lock:
		return n.Text()
	case *Star:
		return n.Text()
	}
	label := strings.ToLower(strings.TrimPrefix(fmt.Sprintf("%T", n), "*sqlparse."))
	switch v := n.(type) {
	case *Binary:
		label = v.Op
	case *Unary:
		label = v.Op
	case *Like:
		label = v.Op
		if v.Not {
			label = "NOT " + label
		}
	case *Is:
		label = "IS"
		if v.Not {
			label += " NOT"
		}
		if v.Distinct {
			label += " DISTINCT FROM"
		}
	case *In:
		label = "IN"
		if v.Not {
			label = "NOT IN"
		}
	case *Between:
		label = "BETWEEN"
		if v.Not {
			label = "NOT BETWEEN"
		}
	case *Join:
		label = strings.TrimSpace(v.Kind + " JOIN")
		if v.Natural {
			label = "NATURAL " + label
		}
	case *SetOp:
		label = v.Op
		if v.All {
			label += " ALL"
		}
	case *Cast:
		label = v.Op
	case *TypeName:
		if len(cs) == 0 {
			return v.Name
		}
		label = v.Name
	case *OrderTerm:
		label = "term"
		if v.Desc {
			label += " DESC"
		}
		if v.Nulls != "" {
			label += " NULLS " + v.Nulls
		}
	case *Select:
		if v.Distinct {
			label += " DISTINCT"
		}
	case *Limit:
		if v.Fetch {
			label = "fetch"
		}
	}
	parts := []string{label}
	for _, c := range cs {
		parts = append(parts, dump(c))
	}
	return "(" + strings.Join(parts, " ") + ")"
}

func parseOne(t *testing.T, sql string, d text2sql.Dialect) *Query {
	t.Helper()
	s := Parse(sql, d)
	require.Empty(t, s.Errors, errorText(s))
	require.Len(t, s.Stmts, 1)
	q, ok := s.Stmts[0].(*Query)
	require.True(t, ok, "%T", s.Stmts[0])
	return q
}

func TestShapes(t *testing.T) {
	const sq, pg, my = text2sql.DialectSQLite, text2sql.DialectPostgres, text2sql.DialectMySQL
	cases := []struct {
		d    text2sql.Dialect
		sql  string
		want string
	}{
		{sq, "SELECT a FROM t", "(query (select (selectitem a) (tablename t)))"},
		{sq, "SELECT a AS x, b y, t.* , * FROM s.t AS u", "(query (select (selectitem a x) (selectitem b y) (selectitem t.*) (selectitem *) (tablename s t u)))"},
		// Keywords as names where the grammar says so: the point of the package.
		{my, "SELECT * FROM t WHERE lock IN (1, 2)", "(query (select (selectitem *) (tablename t) (IN lock 1 2)))"},
		{my, "SELECT * FROM t LOCK IN SHARE MODE", "(query (select (selectitem *) (tablename t)) LOCK IN SHARE MODE)"},
		{sq, "SELECT year, name, date, key FROM t WHERE year > 2000", "(query (select (selectitem year) (selectitem name) (selectitem date) (selectitem key) (tablename t) (> year 2000)))"},
		{sq, "SELECT a FROM t WHERE x = 1 OR y = 2 AND NOT z", "(query (select (selectitem a) (tablename t) (OR (= x 1) (AND (= y 2) (NOT z)))))"},
		{sq, "SELECT 1 + 2 * 3 - -4", "(query (select (selectitem (- (+ 1 (* 2 3)) (- 4)))))"},
		{sq, "SELECT a || b || c", "(query (select (selectitem (|| (|| a b) c))))"},
		{sq, "SELECT x IS NOT NULL, y IS NULL, z NOT NULL, w ISNULL", "(query (select (selectitem (IS NOT x NULL)) (selectitem (IS y NULL)) (selectitem (IS NOT z )) (selectitem (IS w ))))"},
		{pg, "SELECT a IS DISTINCT FROM b", "(query (select (selectitem (IS DISTINCT FROM a b))))"},
		{sq, "SELECT * FROM t WHERE a NOT BETWEEN 1 AND 2 AND b LIKE 'x%' ESCAPE '!' AND c NOT IN (SELECT d FROM u) AND e GLOB 'a*'",
			"(query (select (selectitem *) (tablename t) (AND (AND (AND (NOT BETWEEN a 1 2) (LIKE b 'x%' '!')) (NOT IN c (query (select (selectitem d) (tablename u))))) (GLOB e 'a*'))))"},
		{pg, "SELECT a::int, CAST(b AS DOUBLE PRECISION), c::numeric(10, 2), d ILIKE '%x'", "(query (select (selectitem (:: a int)) (selectitem (CAST b DOUBLE PRECISION)) (selectitem (:: c (numeric 10 2))) (selectitem (ILIKE d '%x'))))"},
		{sq, "SELECT CASE WHEN a > 1 THEN 'x' ELSE 'y' END, CASE b WHEN 1 THEN 2 END", "(query (select (selectitem (case (when (> a 1) 'x') 'y')) (selectitem (case b (when 1 2)))))"},
		{sq, "SELECT count(DISTINCT a), count(*), max(b) FILTER (WHERE c > 0) FROM t", "(query (select (selectitem (call count a)) (selectitem (call count)) (selectitem (call max b (> c 0))) (tablename t)))"},
		{sq, "SELECT rank() OVER (PARTITION BY a ORDER BY b DESC ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) FROM t",
			"(query (select (selectitem (call rank (windowspec a (term DESC b) ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW))) (tablename t)))"},
		{sq, "SELECT sum(x) OVER w FROM t WINDOW w AS (ORDER BY y)", "(query (select (selectitem (call sum x w)) (tablename t) (windowdef w (windowspec (term y)))))"},
		{sq, "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 5) SELECT n FROM c",
			"(query (with (cte c n (query (UNION ALL (select (selectitem 1)) (select (selectitem (+ n 1)) (tablename c) (< n 5)))))) (select (selectitem n) (tablename c)))"},
		{sq, "SELECT a FROM t UNION SELECT b FROM u INTERSECT SELECT c FROM v EXCEPT SELECT d FROM w ORDER BY 1 LIMIT 3",
			"(query (EXCEPT (UNION (select (selectitem a) (tablename t)) (INTERSECT (select (selectitem b) (tablename u)) (select (selectitem c) (tablename v)))) (select (selectitem d) (tablename w))) (term 1) (limit 3))"},
		{my, "(SELECT a FROM t ORDER BY a LIMIT 1) UNION (SELECT b FROM u)", "(query (UNION (parenquery (query (select (selectitem a) (tablename t)) (term a) (limit 1))) (parenquery (query (select (selectitem b) (tablename u))))))"},
		{sq, "SELECT * FROM a JOIN b ON a.x = b.x LEFT OUTER JOIN c USING (y) NATURAL JOIN d CROSS JOIN e, f",
			"(query (select (selectitem *) (CROSS JOIN (NATURAL JOIN (LEFT JOIN (JOIN (tablename a) (tablename b) (= (columnref a x) (columnref b x))) (tablename c) y) (tablename d)) (tablename e)) (tablename f)))"},
		{sq, "SELECT * FROM (SELECT a FROM t) AS s JOIN (u JOIN v ON u.id = v.id) ON 1", "(query (select (selectitem *) (JOIN (derivedtable (query (select (selectitem a) (tablename t))) s) (parentable (JOIN (tablename u) (tablename v) (= (columnref u id) (columnref v id)))) 1)))"},
		{sq, `SELECT * FROM "my table" t INDEXED BY i, json_each(x) AS j`, `(query (select (selectitem *) (tablename "my table" t INDEXED BY i) (tablefunc (call json_each x) j)))`},
		{my, "SELECT * FROM `t` USE INDEX (i) FORCE INDEX FOR JOIN (j) WHERE `key` = 1", "(query (select (selectitem *) (tablename `t` USE INDEX (i) FORCE INDEX FOR JOIN (j)) (= `key` 1)))"},
		{my, "SELECT a FROM t LIMIT 5, 10", "(query (select (selectitem a) (tablename t)) (limit 5 10))"},
		{pg, "SELECT a FROM t ORDER BY a DESC NULLS LAST, b COLLATE \"C\" OFFSET 2 ROWS FETCH FIRST 3 ROWS ONLY",
			"(query (select (selectitem a) (tablename t)) (term DESC NULLS LAST a) (term (collate b \"C\")) (fetch 3 2))"},
		{sq, "SELECT TOP 5 a FROM t", "(query (select 5 (selectitem a) (tablename t)))"},
		{sq, "SELECT a FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.a = t.a) AND b = (SELECT max(b) FROM u)",
			"(query (select (selectitem a) (tablename t) (AND (exists (query (select (selectitem 1) (tablename u) (= (columnref u a) (columnref t a))))) (= b (subquery (query (select (selectitem (call max b)) (tablename u))))))))"},
		{pg, "SELECT EXTRACT(YEAR FROM d), SUBSTRING(s FROM 1 FOR 2), POSITION('a' IN s), TRIM(BOTH ' ' FROM s)",
			"(query (select (selectitem (call EXTRACT YEAR d)) (selectitem (call SUBSTRING s 1 2)) (selectitem (call POSITION 'a' s)) (selectitem (call TRIM BOTH ' ' s))))"},
		{my, "SELECT DATE_ADD(d, INTERVAL 1 DAY), GROUP_CONCAT(DISTINCT a ORDER BY a SEPARATOR ','), LEFT(s, 2), a DIV 2, ?",
			"(query (select (selectitem (call DATE_ADD d (interval 1 DAY))) (selectitem (call GROUP_CONCAT a ',' (term a))) (selectitem (call LEFT s 2)) (selectitem (DIV a 2)) (selectitem ?)))"},
		{pg, "SELECT DATE '2020-01-01', $1, a.b.c FROM t", "(query (select (selectitem DATE '2020-01-01') (selectitem $1) (selectitem (columnref a b c)) (tablename t)))"},
		{sq, "SELECT (a, b) IN (VALUES (1, 2)), (a)", "(query (select (selectitem (IN (tuple a b) (query (values (tuple 1 2))))) (selectitem (paren a))))"},
		{sq, "SELECT ((SELECT a FROM t) - (SELECT b FROM u)) * 2", "(query (select (selectitem (* (paren (- (subquery (query (select (selectitem a) (tablename t)))) (subquery (query (select (selectitem b) (tablename u)))))) 2))))"},
		{sq, "SELECT a FROM t GROUP BY a HAVING count(*) > 1", "(query (select (selectitem a) (tablename t) a (> (call count) 1)))"},
	}
	for _, c := range cases {
		t.Run(c.sql, func(t *testing.T) {
			q := parseOne(t, c.sql, c.d)
			assert.Equal(t, c.want, dump(q))
		})
	}
}

// The PostgreSQL and MariaDB syntax classes issue 36 found misread: each
// parses without an error node, into the shape its engine gives it.
func TestDialectShapes(t *testing.T) {
	const sq, pg, my = text2sql.DialectSQLite, text2sql.DialectPostgres, text2sql.DialectMySQL
	cases := []struct {
		d    text2sql.Dialect
		sql  string
		want string
	}{
		// FROM items: ROWS FROM, WITH ORDINALITY, column definitions, ONLY, TABLESAMPLE.
		{pg, "SELECT * FROM ROWS FROM (f(1), g(2) AS (a int)) WITH ORDINALITY AS t(x, y, n)", "(query (select (selectitem *) (tablefunc (call f 1) (call g 2) t x y n)))"},
		{pg, "SELECT * FROM json_to_record(j) AS r(a int, b text[])", "(query (select (selectitem *) (tablefunc (call json_to_record j) r a b)))"},
		{pg, "SELECT * FROM json_to_record(j) AS (a int)", "(query (select (selectitem *) (tablefunc (call json_to_record j) a)))"},
		{pg, "SELECT * FROM ONLY t TABLESAMPLE SYSTEM (10) REPEATABLE (7)", "(query (select (selectitem *) (tablename t (call SYSTEM 10) 7)))"},
		{pg, "SELECT * FROM t, LATERAL unnest(t.a) WITH ORDINALITY u", "(query (select (selectitem *) (tablename t) (tablefunc (call unnest (columnref t a)) u)))"},
		// Typed literals, casts, AT TIME ZONE, operators.
		{pg, "SELECT jsonb '{}', DOUBLE PRECISION '1', TIMESTAMP WITH TIME ZONE 'x', x::int[], y::timestamp(0) without time zone",
			"(query (select (selectitem jsonb '{}') (selectitem DOUBLE PRECISION '1') (selectitem TIMESTAMP WITH TIME ZONE 'x') (selectitem (:: x int)) (selectitem (:: y (timestamp without time zone 0)))))"},
		{pg, "SELECT now() AT TIME ZONE 'UTC' AT TIME ZONE z", "(query (select (selectitem (AT TIME ZONE (AT TIME ZONE (call now) 'UTC') z))))"},
		{pg, "SELECT a ? 'k', a ?| b, a @> b AND c <-> d < 1, |/ 16, 2 ^ 3 * 4, a && b", "(query (select (selectitem (? a 'k')) (selectitem (?| a b)) (selectitem (AND (@> a b) (< (<-> c d) 1))) (selectitem (|/ 16)) (selectitem (* (^ 2 3) 4)) (selectitem (&& a b))))"},
		{pg, "SELECT a<-1, b !~* 'x'", "(query (select (selectitem (< a (- 1))) (selectitem (!~* b 'x'))))"},
		{my, "SELECT a && b, 2 ^ 3 * 4", "(query (select (selectitem (&& a b)) (selectitem (* (^ 2 3) 4))))"},
		{my, "SELECT j->'$.a', j->>'$.b' FROM t WHERE a <=> b", "(query (select (selectitem (-> j '$.a')) (selectitem (->> j '$.b')) (tablename t) (<=> a b)))"},
		// Arrays and subscripts.
		{pg, "SELECT ARRAY[1, 2][1], a[1:2], a[:n], ARRAY[[1], [2]]", "(query (select (selectitem (subscript (array 1 2) 1)) (selectitem (subscript a 1 2)) (selectitem (subscript a n)) (selectitem (array (array 1) (array 2)))))"},
		{sq, "SELECT [a] FROM [t]", "(query (select (selectitem [a]) (tablename [t])))"},
		// Predicates, GROUP BY, ORDER BY, LIMIT.
		{pg, "SELECT * FROM t WHERE a BETWEEN SYMMETRIC 2 AND 1", "(query (select (selectitem *) (tablename t) (BETWEEN a 2 1)))"},
		{my, "SELECT * FROM t WHERE a SOUNDS LIKE 'x'", "(query (select (selectitem *) (tablename t) (SOUNDS LIKE a 'x')))"},
		{pg, "SELECT a FROM t GROUP BY DISTINCT GROUPING SETS ((a), (), ROLLUP (b))", "(query (select (selectitem a) (tablename t) (call GROUPING SETS (paren a) (tuple) (call ROLLUP b))))"},
		{pg, "SELECT a FROM t ORDER BY a USING >, b LIMIT ALL", "(query (select (selectitem a) (tablename t)) (term a) (term b) (limit))"},
		{my, "SELECT SQL_NO_CACHE a FROM t ORDER BY a OFFSET 1 ROWS FETCH NEXT 2 ROWS WITH TIES", "(query (select (selectitem a) (tablename t)) (term a) (fetch 2 1))"},
		// Keyword arguments and table functions with COLUMNS.
		{pg, "SELECT TRIM(LEADING FROM s), OVERLAY(s PLACING 'x' FROM 2 FOR 1), INTERVAL '1-2' YEAR TO MONTH",
			"(query (select (selectitem (call TRIM LEADING s)) (selectitem (call OVERLAY s 'x' 2 1)) (selectitem (interval '1-2' YEAR MONTH))))"},
		{my, "SELECT * FROM JSON_TABLE(d, '$[*]' COLUMNS (id INT PATH '$.id', o FOR ORDINALITY, NESTED PATH '$.b' COLUMNS (b INT PATH '$'))) AS jt",
			"(query (select (selectitem *) (tablefunc (call JSON_TABLE d '$[*]' id o b) jt)))"},
		{pg, "SELECT * FROM XMLTABLE('/r' PASSING x COLUMNS id int PATH '@id', v text) AS t", "(query (select (selectitem *) (tablefunc (call XMLTABLE '/r' x id v) t)))"},
		{my, "SELECT X'41', _utf8mb4'a', CAST(a AS CHAR CHARACTER SET utf8mb4)", "(query (select (selectitem X'41') (selectitem _utf8mb4'a') (selectitem (CAST a CHAR))))"},
		{pg, "SELECT (a, b) OVERLAPS (c, d), (x).f, (x).*, a[1].g, '1'::interval hour to minute", "(query (select (selectitem (OVERLAPS (tuple a b) (tuple c d))) (selectitem (field (paren x) f)) (selectitem (field (paren x))) (selectitem (field (subscript a 1) g)) (selectitem (:: '1' interval hour to minute))))"},
		{pg, "SELECT j.a FROM t JOIN u USING (a) AS j", "(query (select (selectitem (columnref j a)) (JOIN (tablename t) (tablename u) a j)))"},
		{my, "SELECT @@version, @@session.sql_mode FROM t PARTITION (p0) WHERE MATCH (a, b) AGAINST ('x' IN BOOLEAN MODE) GROUP BY a DESC LIMIT 2 ROWS EXAMINED 100",
			"(query (select (selectitem @@version) (selectitem @@session.sql_mode) (tablename t PARTITION (p0)) (call MATCH a b 'x') a) (limit 2 100))"},
		{pg, "WITH RECURSIVE r(n) AS (SELECT 1) SEARCH DEPTH FIRST BY n SET o CYCLE n SET c USING p SELECT o, c, p FROM r",
			"(query (with (cte r n (query (select (selectitem 1))) o c p)) (select (selectitem o) (selectitem c) (selectitem p) (tablename r)))"},
	}
	for _, c := range cases {
		t.Run(c.sql, func(t *testing.T) {
			q := parseOne(t, c.sql, c.d)
			assert.Equal(t, c.want, dump(q))
		})
	}
}

func TestTopIsParsed(t *testing.T) {
	q := parseOne(t, "SELECT TOP 5 a FROM t", text2sql.DialectSQLite)
	s := q.Body.(*Select)
	require.NotNil(t, s.Top)
	assert.Equal(t, "5", s.Top.Text())
}

// Spans give back the source: the text of every node is the source from
// its first token to its last, and the tokens it covers are inside it.
func TestSpanRoundTrip(t *testing.T) {
	sql := "  SELECT a.b AS \"x y\" , count(*) FROM t -- c\n WHERE lock IN (1, 2) ; SELECT 1 ; "
	s := Parse(sql, text2sql.DialectMySQL)
	require.Empty(t, s.Errors)
	require.Len(t, s.Stmts, 2)
	assert.Equal(t, "SELECT a.b AS \"x y\" , count(*) FROM t -- c\n WHERE lock IN (1, 2)", s.Stmts[0].Text())
	assert.Equal(t, "SELECT 1", s.Stmts[1].Text())
	Inspect(s, func(n Node) bool {
		if n == nil {
			return false
		}
		if n == Node(s) {
			return true // the script spans the whole source
		}
		sp := n.Extent()
		require.LessOrEqual(t, 0, sp.Pos)
		require.LessOrEqual(t, sp.Pos, sp.End)
		require.LessOrEqual(t, sp.End, len(sql))
		if sp.From < sp.To {
			assert.Equal(t, s.Tokens[sp.From].Pos, sp.Pos)
			last := s.Tokens[sp.To-1]
			assert.Equal(t, last.Pos+len(last.Text), sp.End)
		}
		return true
	})
	var names []string
	Inspect(s, func(n Node) bool {
		if id, ok := n.(*Ident); ok {
			names = append(names, id.Name)
		}
		return true
	})
	assert.Equal(t, []string{"a", "b", "x y", "count", "t", "lock"}, names)
}

// Errors a model makes leave a tree with error nodes, never a failure.
func TestTolerance(t *testing.T) {
	cases := []struct {
		sql     string
		errors  int    // error nodes wanted
		stmts   int    // statements wanted
		table   string // a table still found, if any
		comment string
	}{
		{"SELECT (a + b FROM t", 1, 1, "t", "unbalanced ("},
		{"SELECT a FROM t WHERE (x = 1", 1, 1, "t", "missing ) at the end"},
		{"SELECT a FROM t)", 1, 2, "t", "stray )"},
		{"SELECT a FROM t WHERE x = 1 This query returns the rows you asked for.", 1, 1, "t", "prose after the statement"},
		{"SELECT a FROM t; This query returns the rows you asked for.", 0, 2, "t", "prose after the semicolon: an Other statement"},
		{"SELECT 3-D Man.name, x FROM t", 1, 1, "t", "garbage between clauses"},
		{"SELECT COUNT(x WHERE y > 1) FROM t", 1, 1, "t", "pseudo-SQL inside a call"},
		{"SELECT a FROM b\\_c JOIN t ON b.x = t.y", 1, 1, "t", "Markdown escape in a FROM item"},
		{"SELECT a FROM b JOIN c\\_d cd ON cd.x\\_y = b.x JOIN t ON 1", 2, 1, "t", "Markdown escapes in a join"},
		{"SELECT a FROM WHERE x = 1", 1, 1, "", "missing FROM item"},
		{"SELECT FROM t", 1, 1, "t", "missing select items"},
		{"SELECT a, FROM t", 1, 1, "t", "trailing comma"},
		{"SELECT CASE WHEN a THEN b FROM t", 1, 1, "t", "CASE without END"},
		{"SELECT a FROM t WHERE a BETWEEN 1", 2, 1, "t", "BETWEEN without AND"},
		{"INSERT INTO t VALUES (1)", 0, 1, "", "not a query: Other"},
	}
	for _, c := range cases {
		t.Run(c.comment, func(t *testing.T) {
			s := Parse(c.sql, text2sql.DialectSQLite)
			assert.Len(t, s.Errors, c.errors, errorText(s))
			assert.Len(t, s.Stmts, c.stmts)
			if c.table != "" {
				found := false
				Inspect(s, func(n Node) bool {
					if tn, ok := n.(*TableName); ok && tn.Parts[len(tn.Parts)-1].Name == c.table {
						found = true
					}
					return true
				})
				assert.True(t, found, "table %s not found: %s", c.table, dump(s))
			}
		})
	}
}

// Deep nesting is cut at MaxDepth with an error node, in linear time.
func TestDepthBound(t *testing.T) {
	pg := []string{
		"SELECT ARRAY" + strings.Repeat("[", 50000) + "1" + strings.Repeat("]", 50000),
		"SELECT a" + strings.Repeat("[1]", 50000),
		"SELECT a" + strings.Repeat("::int", 50000),
		"SELECT a" + strings.Repeat(" AT TIME ZONE 'UTC'", 50000),
		"SELECT " + strings.Repeat("|/ ", 50000) + "1",
		"SELECT * FROM JSON_TABLE(d, '$' " + strings.Repeat("COLUMNS (NESTED PATH '$' ", 50000),
	}
	for _, sql := range pg {
		assertDepth(t, Parse(sql, text2sql.DialectPostgres), sql[:20])
	}
	for _, sql := range []string{
		strings.Repeat("(", 100000),
		"SELECT " + strings.Repeat("(", 5000) + "1" + strings.Repeat(")", 5000),
		"SELECT " + strings.Repeat("1+", 50000) + "1",
		"SELECT " + strings.Repeat("- ", 50000) + "1",
		"SELECT " + strings.Repeat("NOT ", 50000) + "1",
		"SELECT * FROM " + strings.Repeat("t JOIN ", 50000) + "t",
		strings.Repeat("SELECT 1 UNION ", 50000) + "SELECT 1",
		"SELECT " + strings.Repeat("(SELECT ", 5000) + "1",
		"SELECT * FROM " + strings.Repeat("(", 50000) + "t",
	} {
		assertDepth(t, Parse(sql, text2sql.DialectSQLite), sql[:20])
	}
}

// assertDepth asserts that the tree s nests no deeper than 4*MaxDepth.
func assertDepth(t *testing.T, s *Script, what string) {
	t.Helper()
	depth := 0
	maxDepth := 0
	Inspect(s, func(n Node) bool {
		if n == nil {
			depth--
			return false
		}
		depth++
		maxDepth = max(maxDepth, depth)
		return true
	})
	assert.LessOrEqual(t, maxDepth, 4*MaxDepth, what)
}

// internal/extract leaves out the parser's "missing )" errors by their
// Reason; the parser must keep recording them so.
func TestReasonMissingParen(t *testing.T) {
	sc := Parse("SELECT (1", text2sql.DialectSQLite)
	require.NotEmpty(t, sc.Errors)
	assert.Equal(t, ReasonMissingParen, sc.Errors[len(sc.Errors)-1].Reason)
}
