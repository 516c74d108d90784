package lint_test

// Valid PostgreSQL and MariaDB queries over real schemas (the demo
// registrar database and Spider's concert_singer, loaded into each
// server): the front end reads each without an error node, the checks
// refuse none, and the server runs each, so the corpus is proven valid.

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/demo"
	"github.com/text2sql-go/text2sql/guard"
	"github.com/text2sql-go/text2sql/internal/dbtest"
	"github.com/text2sql-go/text2sql/internal/pgload"
	"github.com/text2sql-go/text2sql/internal/shareddata"
	"github.com/text2sql-go/text2sql/internal/sqlparse"
	"github.com/text2sql-go/text2sql/lint"
	"github.com/text2sql-go/text2sql/schema"
)

// postgresCorpus are valid PostgreSQL 15 queries, by syntax class.
var postgresCorpus = []string{
	// ROWS FROM, WITH ORDINALITY, column definition lists, LATERAL.
	`SELECT * FROM ROWS FROM (generate_series(1,3), unnest(ARRAY['a','b'])) AS t(n, s)`,
	`SELECT t.n, t.s, t.i FROM ROWS FROM (generate_series(1,3), unnest(ARRAY['a','b'])) WITH ORDINALITY AS t(n, s, i)`,
	`SELECT u.v, u.i FROM unnest(ARRAY[10, 20]) WITH ORDINALITY AS u(v, i) ORDER BY u.i`,
	`SELECT r.a, r.b FROM json_to_record('{"a":1,"b":"x"}') AS r(a int, b text)`,
	`SELECT x.a FROM ROWS FROM (json_to_record('{"a":1}') AS (a int), generate_series(1, 2)) AS x(a, g)`,
	`SELECT d.name, c.code FROM departments d, LATERAL (SELECT code FROM courses WHERE courses.department_id = d.department_id ORDER BY credits DESC LIMIT 1) c`,
	`SELECT d.name, g FROM departments d CROSS JOIN LATERAL generate_series(1, d.department_id) AS g`,
	`SELECT d.name, s.n FROM departments d LEFT JOIN LATERAL (SELECT count(*) AS n FROM students WHERE major_department_id = d.department_id) s ON true`,
	`SELECT * FROM ONLY departments WHERE department_id > 1`,
	`SELECT count(*) FROM students TABLESAMPLE SYSTEM (100) REPEATABLE (7)`,
	`SELECT count(*) FROM students s TABLESAMPLE BERNOULLI (100) WHERE s.entry_year > 2000`,
	// Typed literals, :: casts, AT TIME ZONE.
	`SELECT now() AT TIME ZONE 'UTC', '2014-01-01'::date`,
	`SELECT '2014-01-01'::date + 1, '12.5'::numeric(10,2), '3'::double precision, '{1,2}'::int[]`,
	`SELECT DATE '2024-01-01', TIMESTAMP '2024-01-01 10:00', TIME '10:00', INTERVAL '1 day', numeric '1.5', int '5', jsonb '{"a":1}'`,
	`SELECT TIMESTAMP WITH TIME ZONE '2024-01-01 10:00+02', DOUBLE PRECISION '1.5', CHARACTER VARYING 'x', bool 'true'`,
	`SELECT timestamp '2024-01-01 10:00' AT TIME ZONE 'Europe/Paris' AT TIME ZONE 'UTC'`,
	`SELECT '2024-02-01 10:00'::timestamp(0) without time zone, '10:00'::time with time zone, 'x'::character varying(20), '{a}'::varchar[]`,
	`SELECT CAST(hire_year AS double precision) / 2, CAST('1' AS numeric(5,1)), CAST(ARRAY[1,2] AS text[]) FROM instructors`,
	`SELECT INTERVAL '1' YEAR, INTERVAL '1-2' YEAR TO MONTH, INTERVAL '3 4:05' DAY TO MINUTE`,
	`SELECT '1 hour'::interval hour to minute, CAST('3 days' AS interval day), '1.5'::interval second(1)`,
	`SELECT first_name::text || ' ' || last_name AS full_name, entry_year::text FROM students ORDER BY full_name LIMIT 5`,
	`SELECT make_interval(days => 10), make_date(2024, 1, 1) - 1`,
	// Arrays: literals, subscripts, slices, ANY/ALL.
	`SELECT (ARRAY[1,2,3])[2], (ARRAY[1,2,3])[1:2], ARRAY[[1,2],[3,4]], array_length(ARRAY[1,2], 1)`,
	`SELECT a[1], a[2:], a[:1] FROM (SELECT ARRAY[hire_year, instructor_id] AS a FROM instructors) x`,
	`SELECT name FROM departments WHERE department_id = ANY(ARRAY[1, 2, 3]) AND department_id <> ALL('{9,10}'::int[])`,
	`SELECT title FROM courses WHERE title LIKE ANY (ARRAY['Intro%', '%Data%'])`,
	`SELECT ARRAY(SELECT code FROM courses ORDER BY code LIMIT 3), ARRAY[1,2] && ARRAY[2,3], ARRAY[1,2] @> ARRAY[1]`,
	`SELECT string_to_array('a,b', ',') || ARRAY['c'], cardinality(ARRAY[1,2])`,
	`SELECT ARRAY[[department_id], [department_id]], ARRAY[name] FROM departments`,
	// JSON and JSONB operators.
	`SELECT '{"a":1}'::jsonb ? 'a', '{"a":1}'::jsonb ?| array['a','c'], '{"a":1}'::jsonb ?& array['a']`,
	`SELECT '{"a":{"b":2}}'::jsonb -> 'a' ->> 'b', '{"a":[1,2]}'::jsonb #> '{a,0}', '{"a":[1,2]}'::jsonb #>> '{a,1}'`,
	`SELECT '{"a":1,"b":2}'::jsonb @> '{"a":1}'::jsonb, '{"a":1}'::jsonb <@ '{"a":1,"b":2}', '{"a":1}'::jsonb - 'a', '{"a":[1]}'::jsonb #- '{a,0}'`,
	`SELECT '{"a":1}'::jsonb @? '$.a', '{"a":1}'::jsonb @@ '$.a == 1', jsonb_path_exists('{"a":1}', '$.a')`,
	`SELECT to_jsonb(d) ->> 'name', row_to_json(d) FROM departments d`,
	`SELECT e.key, e.value FROM jsonb_each('{"a":1,"b":2}'::jsonb) AS e ORDER BY e.key`,
	`SELECT jsonb_build_object('name', name, 'n', department_id) -> 'name' FROM departments`,
	// Other operators: regular expressions, ||, ^, prefix operators, ranges, geometry, text search.
	`SELECT name FROM departments WHERE name ~ '^[A-M]' OR name ~* 'history' OR name !~ 'x' OR name !~* 'y'`,
	`SELECT first_name FROM students WHERE first_name SIMILAR TO '(A|B)%' OR last_name NOT SIMILAR TO '%z%'`,
	`SELECT first_name FROM students WHERE first_name ILIKE 'a%' AND last_name NOT ILIKE '%q%'`,
	`SELECT 2 ^ 10, |/ 16.0, @ -3, 5 # 3, ~5, 1 << 3, 10 % 3, 'abc' ^@ 'a', 'a' ~~ 'a%', 'b' !~~ 'a%'`,
	`SELECT int4range(1, 5) @> 3, int4range(1, 5) && int4range(4, 8), point(1,2) <-> point(3,4)`,
	`SELECT to_tsvector('english', title) @@ to_tsquery('english', 'data') FROM courses`,
	`SELECT 'a' || 1 || true, concat_ws('-', code, title) FROM courses`,
	// Predicates.
	`SELECT student_id FROM students WHERE major_department_id IS DISTINCT FROM 1 AND entry_year IS NOT DISTINCT FROM 2022`,
	`SELECT student_id FROM students WHERE entry_year BETWEEN SYMMETRIC 2025 AND 2020`,
	`SELECT (DATE '2001-02-16', DATE '2001-12-21') OVERLAPS (DATE '2001-10-30', DATE '2002-10-30')`,
	`SELECT (d).name, (ARRAY[d])[1].department_id, (d).* FROM departments d`,
	`SELECT e.term, j.student_id FROM students s JOIN enrollments e USING (student_id) AS j`,
	`SELECT enrollment_id FROM enrollments WHERE (grade_points > 3) IS TRUE AND letter_grade IS NOT NULL AND grade_points NOTNULL`,
	`SELECT student_id FROM students WHERE (major_department_id, entry_year) IN (SELECT department_id, 2022 FROM departments) OR ROW(1, 2) < ROW(student_id, 3)`,
	// Aggregates: FILTER, WITHIN GROUP, ordered arguments.
	`SELECT count(*) FILTER (WHERE status = 'completed'), avg(grade_points) FILTER (WHERE term = 'Fall 2024') FROM enrollments`,
	`SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY grade_points), mode() WITHIN GROUP (ORDER BY letter_grade), percentile_disc(ARRAY[0.25, 0.75]) WITHIN GROUP (ORDER BY grade_points) FROM enrollments`,
	`SELECT rank(3.0) WITHIN GROUP (ORDER BY grade_points) FROM enrollments`,
	`SELECT string_agg(code, ', ' ORDER BY code), array_agg(DISTINCT credits ORDER BY credits) FILTER (WHERE credits > 1) FROM courses`,
	// DISTINCT ON, GROUPING SETS, ROLLUP, CUBE.
	`SELECT DISTINCT ON (department_id) department_id, title, credits FROM courses ORDER BY department_id, credits DESC`,
	`SELECT department_id, credits, count(*) FROM courses GROUP BY GROUPING SETS ((department_id), (credits), ())`,
	`SELECT department_id, credits, count(*), grouping(department_id, credits) FROM courses GROUP BY ROLLUP (department_id, credits)`,
	`SELECT department_id, credits, count(*) FROM courses GROUP BY CUBE (department_id, credits) ORDER BY 1 NULLS FIRST, 2 NULLS LAST`,
	`SELECT department_id, credits, count(*) FROM courses GROUP BY DISTINCT department_id, ROLLUP (credits)`,
	// Windows: frames with GROUPS and EXCLUDE, named windows.
	`SELECT course_id, sum(credits) OVER (ORDER BY credits GROUPS BETWEEN 1 PRECEDING AND CURRENT ROW EXCLUDE TIES) FROM courses`,
	`SELECT course_id, avg(credits) OVER (PARTITION BY department_id ORDER BY course_id RANGE BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING EXCLUDE CURRENT ROW) FROM courses`,
	`SELECT course_id, first_value(code) OVER w, lag(credits, 1) OVER (w ORDER BY course_id) FROM courses WINDOW w AS (PARTITION BY department_id)`,
	// LIMIT, OFFSET and FETCH.
	`SELECT code FROM courses ORDER BY credits DESC FETCH FIRST 3 ROWS WITH TIES`,
	`SELECT code FROM courses ORDER BY code OFFSET 2 ROWS FETCH NEXT 3 ROWS ONLY`,
	`SELECT code FROM courses ORDER BY code LIMIT ALL OFFSET 1`,
	`SELECT code FROM courses ORDER BY credits USING >, code USING <`,
	// VALUES, set operations, recursive CTEs.
	`SELECT v.n, v.s FROM (VALUES (1, 'a'), (2, 'b')) AS v(n, s) ORDER BY v.n`,
	`VALUES (1, 'one'), (2, 'two') ORDER BY 1 DESC`,
	`SELECT student_id FROM enrollments EXCEPT ALL SELECT student_id FROM enrollments WHERE status = 'withdrawn' INTERSECT ALL SELECT student_id FROM students`,
	`WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5) SELECT sum(n) FROM r`,
	`WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) SEARCH DEPTH FIRST BY n SET ord SELECT n, ord FROM r ORDER BY ord`,
	`WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) CYCLE n SET is_cycle USING path SELECT n, is_cycle, path FROM r`,
	`WITH d AS MATERIALIZED (SELECT * FROM departments) SELECT name FROM d`,
	// String functions with keyword arguments, COLLATE.
	`SELECT EXTRACT(YEAR FROM current_date), EXTRACT(century FROM now()), EXTRACT(EPOCH FROM INTERVAL '1 day'), date_part('month', now())`,
	`SELECT SUBSTRING(title FROM 1 FOR 3), SUBSTRING(title FROM 2), substring(title, 1, 2), substring('abc' from 'b.') FROM courses`,
	`SELECT POSITION('a' IN title), OVERLAY(title PLACING 'xx' FROM 2 FOR 1), TRIM(BOTH ' ' FROM title), TRIM(LEADING FROM title), trim(trailing 'x' from title) FROM courses`,
	`SELECT name FROM departments ORDER BY name COLLATE "C" DESC`,
	`SELECT name COLLATE "C" < 'M', lower(name) FROM departments`,
	`SELECT date_trunc('month', now()), to_char(now(), 'YYYY-MM'), now() - interval '7 days', current_date - 7, age(timestamp '2020-01-01')`,
	`SELECT E'a\nb', $$dollar 'quoted'$$, B'101', X'1F', U&'d\0061t'`,
	// Spider's concert_singer.
	`SELECT s.name, array_agg(c.concert_name ORDER BY c.year) FROM singer s JOIN singer_in_concert sc ON sc.singer_id = s.singer_id::text JOIN concert c ON c.concert_id = sc.concert_id GROUP BY s.name`,
	`SELECT name, capacity, capacity::numeric / sum(capacity) OVER () AS share FROM stadium ORDER BY share DESC FETCH FIRST 2 ROWS ONLY`,
	`SELECT country, count(*) FILTER (WHERE is_male::text IN ('1', 'T', 'true')) FROM singer GROUP BY country HAVING count(*) > 1`,
}

// mariadbCorpus are valid MariaDB 10.11 queries, by syntax class.
var mariadbCorpus = []string{
	// The statements of issue 36.
	`SELECT MEDIAN(credits) OVER () FROM courses`,
	`SELECT CAST(grade_points AS INT) FROM enrollments`,
	`VALUES (1),(2)`,
	`SELECT jt.id, jt.name FROM JSON_TABLE('[{"id":1,"name":"a"},{"id":2,"name":"b"}]', '$[*]' COLUMNS (id INT PATH '$.id', name VARCHAR(20) PATH '$.name')) AS jt`,
	`SELECT first_name FROM students WHERE first_name SOUNDS LIKE 'Jon'`,
	`SELECT DISTINCT PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY grade_points) OVER () FROM enrollments`,
	`SELECT code FROM courses ORDER BY code OFFSET 2 ROWS FETCH NEXT 3 ROWS ONLY`,
	`SELECT code FROM courses ORDER BY credits DESC FETCH FIRST 3 ROWS WITH TIES`,
	`SELECT ROWNUM(), code FROM courses`,
	// Casts and conversions.
	`SELECT CAST(hire_year AS SIGNED), CAST(hire_year AS UNSIGNED), CAST(hire_year AS DECIMAL(10,2)), CAST(hire_year AS CHAR(4)), CAST('2024-01-01' AS DATE) FROM instructors`,
	`SELECT CAST(title AS CHAR CHARACTER SET utf8mb4), CONVERT(title, CHAR(10)), CONVERT(title USING utf8mb4), CAST(credits AS DOUBLE) FROM courses`,
	`SELECT CAST(credits AS UNSIGNED INTEGER), CAST(credits AS SIGNED INT), CONVERT(credits, SIGNED) FROM courses`,
	`SELECT X'41', x'4142', B'101', N'text', _utf8mb4'abc', _latin1 'x', 0x41, 'a' 'b'`,
	`SELECT DATE '2024-01-01', TIMESTAMP '2024-01-01 10:00:00', TIME '10:00'`,
	// JSON.
	`SELECT jt.* FROM JSON_TABLE('{"a":[1,2]}', '$.a[*]' COLUMNS (ord FOR ORDINALITY, v INT PATH '$' DEFAULT '0' ON EMPTY)) AS jt`,
	`SELECT jt.* FROM JSON_TABLE('[{"a":1,"b":[1,2]}]', '$[*]' COLUMNS (a INT PATH '$.a', NESTED PATH '$.b[*]' COLUMNS (b INT PATH '$'))) jt`,
	`SELECT d.name, jt.k FROM departments d JOIN JSON_TABLE(CONCAT('[', d.department_id, ']'), '$[*]' COLUMNS (k INT PATH '$')) AS jt ON jt.k = d.department_id`,
	`SELECT JSON_VALUE('{"a":1}', '$.a'), JSON_EXTRACT('{"a":[1,2]}', '$.a[1]'), JSON_ARRAYAGG(code), JSON_OBJECTAGG(code, credits) FROM courses`,
	// Operators and predicates.
	`SELECT first_name FROM students WHERE first_name RLIKE '^A' OR last_name REGEXP 'son$' OR email NOT REGEXP 'x'`,
	`SELECT credits DIV 2, credits MOD 3, credits % 2, 7 ^ 2, 1 << 2, credits & 1, credits | 8, ~credits FROM courses`,
	`SELECT instructor_id <=> NULL, NULL <=> NULL FROM courses`,
	`SELECT first_name FROM students WHERE NOT (entry_year > 2022 XOR major_department_id = 1) && student_id > 0 || student_id < 0`,
	`SELECT first_name FROM students WHERE first_name LIKE 'A!%%' ESCAPE '!' OR first_name NOT LIKE '%z%'`,
	`SELECT enrollment_id FROM enrollments WHERE grade_points IS NOT NULL AND (grade_points > 3) IS TRUE AND letter_grade IS NOT UNKNOWN`,
	// Dates and intervals.
	`SELECT DATE_ADD('2024-01-31', INTERVAL 1 MONTH), DATE_SUB(NOW(), INTERVAL 30 DAY), CURDATE() - INTERVAL 1 WEEK, INTERVAL 1 DAY + '2024-01-01'`,
	`SELECT TIMESTAMPDIFF(MONTH, '2024-01-01', NOW()), EXTRACT(YEAR_MONTH FROM NOW()), EXTRACT(YEAR FROM NOW()), DATE_FORMAT(NOW(), '%Y-%m'), LAST_DAY(NOW())`,
	`SELECT DATE_ADD(NOW(), INTERVAL '1:30' HOUR_MINUTE), NOW() + INTERVAL 2 HOUR, YEAR(NOW()) - hire_year FROM instructors`,
	// Aggregates and windows.
	`SELECT department_id, GROUP_CONCAT(DISTINCT code ORDER BY code SEPARATOR ', ') FROM courses GROUP BY department_id`,
	`SELECT department_id, credits, COUNT(*) FROM courses GROUP BY department_id, credits WITH ROLLUP`,
	`SELECT course_id, SUM(credits) OVER (PARTITION BY department_id ORDER BY course_id ROWS BETWEEN 1 PRECEDING AND CURRENT ROW), NTILE(4) OVER (ORDER BY credits), PERCENT_RANK() OVER (ORDER BY credits), CUME_DIST() OVER w FROM courses WINDOW w AS (ORDER BY credits)`,
	`SELECT PERCENTILE_DISC(0.5) WITHIN GROUP (ORDER BY credits) OVER (PARTITION BY department_id), LAG(code, 1) OVER (ORDER BY code) FROM courses`,
	`SELECT STDDEV_POP(grade_points), VAR_SAMP(grade_points), BIT_AND(credits), BIT_OR(credits) FROM enrollments JOIN courses USING (course_id)`,
	// VALUES, CTEs, set operations, limits.
	`SELECT * FROM (VALUES (1, 'a'), (2, 'b')) AS v`,
	`WITH t(a) AS (VALUES (1), (2)) SELECT a FROM t`,
	`WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5) SELECT SUM(n) FROM r`,
	`SELECT student_id FROM enrollments EXCEPT ALL SELECT student_id FROM enrollments WHERE status = 'withdrawn'`,
	`SELECT student_id FROM enrollments INTERSECT ALL SELECT student_id FROM students INTERSECT SELECT student_id FROM enrollments`,
	`SELECT code FROM courses ORDER BY code LIMIT 2, 3`,
	`SELECT code FROM courses ORDER BY code LIMIT 3 OFFSET 2`,
	`SELECT SQL_NO_CACHE HIGH_PRIORITY SQL_CALC_FOUND_ROWS code FROM courses LIMIT 1`,
	`SELECT seq FROM seq_1_to_5 WHERE seq % 2 = 1`,
	`SELECT d.name, s.seq FROM departments d JOIN seq_1_to_3_step_2 s ON s.seq <= d.department_id`,
	`SELECT 1 FROM DUAL WHERE EXISTS (SELECT 1 FROM courses)`,
	`SELECT code FROM courses ORDER BY code LIMIT 2 ROWS EXAMINED 100`,
	`SELECT department_id, COUNT(*) FROM courses GROUP BY department_id DESC`,
	`SELECT @@version IS NOT NULL, @@session.sql_mode IS NOT NULL, @@global.max_connections > 0`,
	// Strings.
	`SELECT SUBSTRING(title FROM 1 FOR 3), SUBSTRING(title, 2), POSITION('a' IN title), TRIM(BOTH ' ' FROM title), TRIM(LEADING 'x' FROM title), LOCATE('a', title) FROM courses`,
	`SELECT SOUNDEX(last_name), REGEXP_REPLACE(email, '@.*', ''), REGEXP_SUBSTR(email, '[a-z]+'), CHAR(65 USING ascii), CONCAT_WS('-', first_name, last_name) FROM students`,
	`SELECT name FROM departments ORDER BY name COLLATE utf8mb4_bin DESC`,
	`SELECT IF(credits > 3, 'heavy', 'light'), IFNULL(instructor_id, 0), NULLIF(credits, 0), CASE WHEN credits > 3 THEN 1 ELSE 0 END FROM courses`,
	// Spider's concert_singer.
	`SELECT s.Name, GROUP_CONCAT(c.concert_Name ORDER BY c.Year SEPARATOR '; ') FROM singer s JOIN singer_in_concert sc ON sc.Singer_ID = s.Singer_ID JOIN concert c ON c.concert_ID = sc.concert_ID GROUP BY s.Name`,
	`SELECT Name, Capacity, Capacity / SUM(Capacity) OVER () AS share FROM stadium ORDER BY share DESC LIMIT 2`,
	`SELECT Country, MEDIAN(Age) OVER (PARTITION BY Country) FROM singer`,
}

// refusal is a query Check must refuse with a failure of kind, which
// the server refuses too.
type refusal struct {
	sql  string
	kind text2sql.ErrorKind
}

// postgresRefusals are mistakes inside the syntax of postgresCorpus.
var postgresRefusals = []refusal{
	{`SELECT t.nope FROM unnest(ARRAY[1]) WITH ORDINALITY AS t(v, i)`, text2sql.KindUnknownColumn},
	{`SELECT x.c FROM ROWS FROM (generate_series(1,2), unnest(ARRAY['a'])) AS x(a, b)`, text2sql.KindUnknownColumn},
	{`SELECT x FROM json_to_record('{"a":1}') AS r(a int)`, text2sql.KindUnknownColumn},
	{`SELECT nope FROM students TABLESAMPLE SYSTEM (10)`, text2sql.KindUnknownColumn},
	{`SELECT * FROM ONLY nosuch`, text2sql.KindUnknownTable},
	{`SELECT now() AT TIME ZONE 'UTC', nope FROM departments`, text2sql.KindUnknownColumn},
	{`SELECT '{"a":1}'::jsonb ? nope FROM departments`, text2sql.KindUnknownColumn},
	{`SELECT name FROM departments WHERE department_id = ANY(ARRAY[nope])`, text2sql.KindUnknownColumn},
	{`SELECT (ARRAY[1,2])[nope] FROM departments`, text2sql.KindUnknownColumn},
	{`SELECT count(*) FILTER (WHERE nope) FROM enrollments`, text2sql.KindUnknownColumn},
	{`SELECT EXTRACT(YEAR FROM nope) FROM departments`, text2sql.KindUnknownColumn},
	{`SELECT name FROM departments ORDER BY name USING >, nope`, text2sql.KindUnknownColumn},
	{`WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) SEARCH DEPTH FIRST BY n SET ord SELECT nope FROM r`, text2sql.KindUnknownColumn},
	{`SELECT strftime('%Y', now())`, text2sql.KindDialect},
	{`SELECT name FROM departments WHERE name REGEXP '^A'`, text2sql.KindDialect},
}

// mariadbRefusals are mistakes inside the syntax of mariadbCorpus.
var mariadbRefusals = []refusal{
	{`SELECT jt.nope FROM JSON_TABLE('[1]', '$[*]' COLUMNS (v INT PATH '$')) AS jt`, text2sql.KindUnknownColumn},
	{`SELECT * FROM seq_a_to_b`, text2sql.KindUnknownTable},
	{`SELECT first_name FROM students WHERE nope SOUNDS LIKE 'x'`, text2sql.KindUnknownColumn},
	{`SELECT CAST(nope AS INT) FROM courses`, text2sql.KindUnknownColumn},
	{`SELECT code FROM courses ORDER BY nope OFFSET 1 ROWS FETCH NEXT 2 ROWS ONLY`, text2sql.KindUnknownColumn},
	{`SELECT X'41', nope FROM courses`, text2sql.KindUnknownColumn},
	{`SELECT code::text FROM courses`, text2sql.KindDialect},
	{`SELECT code FROM courses WHERE code ILIKE 'a%'`, text2sql.KindDialect},
	{`SELECT DISTINCT ON (code) code FROM courses`, text2sql.KindDialect},
	{`SELECT strftime('%Y', NOW())`, text2sql.KindDialect},
}

// guardRefusals are writes and second statements dressed in the new
// syntax: the guard's statement check refuses each (they are never sent
// to a server).
var guardRefusals = []string{
	`WITH RECURSIVE r(n) AS (SELECT 1) SEARCH DEPTH FIRST BY n SET o DELETE FROM students`,
	`WITH r(n) AS (SELECT 1) CYCLE n SET c USING p UPDATE students SET entry_year = 1`,
	`WITH r(n) AS (SELECT 1) CYCLE n SET c DELETE FROM students`,
	`WITH r(n) AS (SELECT 1) SEARCH DEPTH FIRST BY n SET o, d AS (DELETE FROM students RETURNING 1) SELECT 1`,
	`SELECT * FROM JSON_TABLE('[1]', '$[*]' COLUMNS (v INT PATH '$')) AS jt; DELETE FROM courses`,
	`SELECT X'41' INTO @v`,
	`SELECT * FROM ROWS FROM (generate_series(1, 2)) AS t(n) FOR UPDATE`,
}

// TestDialectCorpora: the front end reads every valid PostgreSQL and
// MariaDB query of the corpora without an error node, Check gives no
// failure, the guard's statement check accepts it, and the server runs
// it (the corpus is valid). The same syntax around an unknown name or a
// construct of another dialect is still refused, as the server refuses
// it; writes in it are refused by the guard.
func TestDialectCorpora(t *testing.T) {
	pgDB, pgSch := postgresFixture(t)
	myDB, mySch := mariadbFixture(t)
	for _, tc := range []struct {
		dialect text2sql.Dialect
		db      *sql.DB
		sch     *schema.Database
		corpus  []string
		least   int
		refuse  []refusal
	}{
		{text2sql.DialectPostgres, pgDB, pgSch, postgresCorpus, 60, postgresRefusals},
		{text2sql.DialectMySQL, myDB, mySch, mariadbCorpus, 45, mariadbRefusals},
	} {
		t.Run(string(tc.dialect), func(t *testing.T) {
			require.GreaterOrEqual(t, len(tc.corpus), tc.least)
			c := lint.New(tc.sch, tc.dialect)
			refused, misread := 0, 0
			for _, q := range tc.corpus {
				_, err := dbtest.Rows(tc.db, q)
				assert.NoError(t, err, "the server refuses %s", q)
				tree := sqlparse.Parse(q, tc.dialect)
				if !assert.Empty(t, errorTexts(tree), "misread: %s", q) {
					misread++
				}
				if !assert.Empty(t, c.Check(q).Failures, "refused: %s", q) {
					refused++
				}
				assert.Nil(t, guard.CheckText(q), "guard refuses %s", q)
			}
			t.Logf("%s: %d queries, %d refused by Check, %d misread by the front end", tc.dialect, len(tc.corpus), refused, misread)
			for _, r := range tc.refuse {
				_, err := dbtest.Rows(tc.db, r.sql)
				assert.Error(t, err, "the server runs %s", r.sql)
				fails := c.Check(r.sql).Failures
				if assert.NotEmpty(t, fails, "not refused: %s", r.sql) {
					assert.Equal(t, r.kind, fails[0].Kind, "%s: %v", r.sql, fails[0])
				}
			}
		})
	}
	for _, q := range guardRefusals {
		assert.NotNil(t, guard.CheckText(q), "guard accepts %s", q)
	}
}

func errorTexts(s *sqlparse.Script) []string {
	var out []string
	for _, e := range s.Errors {
		out = append(out, fmt.Sprintf("%s %q", e.Reason, e.Text()))
	}
	return out
}

// corpusSources are the SQLite databases the corpora read: the demo and
// Spider's concert_singer.
func corpusSources(t *testing.T) map[string]*sql.DB {
	path := t.TempDir() + "/demo.db"
	require.NoError(t, demo.Create(path))
	out := map[string]*sql.DB{}
	for name, p := range map[string]string{"registrar": path, "concert_singer": shareddata.SpiderDB(t, "concert_singer")} {
		db, err := sql.Open("sqlite3", "file:"+p+"?mode=ro")
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })
		out[name] = db
	}
	return out
}

// postgresFixture loads the corpus databases into a fresh PostgreSQL
// database, one schema each, and returns a connection whose search path
// holds both, with their schema model.
func postgresFixture(t *testing.T) (*sql.DB, *schema.Database) {
	admin, dsn := dbtest.Postgres(t)
	ctx := context.Background()
	var names []string
	for name, src := range corpusSources(t) {
		_, err := pgload.CopySQLite(ctx, src, admin, name, pgload.CopyOptions{FoldNames: true})
		require.NoError(t, err)
		names = append(names, name)
	}
	db, err := sql.Open("pgx", dbtest.PostgresDSNWith(t, dsn, "search_path", strings.Join(names, ",")))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	sch, err := schema.InspectPostgres(ctx, db, names)
	require.NoError(t, err)
	return db, sch
}

// mariadbFixture copies the corpus databases into a fresh MariaDB
// database and returns it with its schema model.
func mariadbFixture(t *testing.T) (*sql.DB, *schema.Database) {
	db, _ := dbtest.MySQL(t)
	ctx := context.Background()
	for _, src := range corpusSources(t) {
		copyToMariaDB(t, ctx, src, db)
	}
	sch, err := schema.InspectMySQL(ctx, db)
	require.NoError(t, err)
	return db, sch
}

// copyToMariaDB creates the tables of src in dst (integers as BIGINT,
// reals as DOUBLE, the rest as TEXT) and copies their rows.
func copyToMariaDB(t *testing.T, ctx context.Context, src, dst *sql.DB) {
	model, err := schema.InspectSQLite(ctx, src)
	require.NoError(t, err)
	for _, tb := range model.Tables {
		var defs, names, marks []string
		for _, c := range tb.Columns {
			typ := "TEXT"
			switch u := strings.ToUpper(c.Type); {
			case strings.Contains(u, "INT"):
				typ = "BIGINT"
			case strings.Contains(u, "REAL"), strings.Contains(u, "DOUB"), strings.Contains(u, "FLOA"), strings.Contains(u, "NUM"):
				typ = "DOUBLE"
			}
			defs = append(defs, "`"+c.Name+"` "+typ)
			names = append(names, `"`+c.Name+`"`)
			marks = append(marks, "?")
		}
		dbtest.Exec(t, dst, "CREATE TABLE `"+tb.Name+"` ("+strings.Join(defs, ", ")+")")
		rows, err := dbtest.Rows(src, "SELECT "+strings.Join(names, ", ")+` FROM "`+tb.Name+`"`)
		require.NoError(t, err)
		for _, r := range rows {
			_, err := dst.ExecContext(ctx, "INSERT INTO `"+tb.Name+"` VALUES ("+strings.Join(marks, ", ")+")", r...)
			require.NoError(t, err)
		}
	}
}
