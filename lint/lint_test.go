package lint_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/executor/sqlite"
	"github.com/text2sql-go/text2sql/internal/dbtest"
	"github.com/text2sql-go/text2sql/internal/demotest"
	"github.com/text2sql-go/text2sql/lint"
	"github.com/text2sql-go/text2sql/schema"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newDB creates a SQLite database from script in a temporary directory
// and opens the guarded executor on it.
func newDB(t *testing.T, script string) *sqlite.Executor {
	t.Helper()
	ex, err := sqlite.Open(dbtest.SQLiteFile(t, "t.sqlite", script), sqlite.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { ex.Close() })
	return ex
}

// demoDB opens a private copy of the demo registrar database.
func demoDB(t *testing.T) *sqlite.Executor {
	t.Helper()
	_, ex := demotest.Open(t)
	return ex
}

// withDialect returns a copy of db marked as dialect d, for the checks of
// another engine over the same tables.
func withDialect(db *schema.Database, d text2sql.Dialect) *schema.Database {
	cp := *db
	cp.Dialect = d
	return &cp
}

// one asserts that rep has exactly one failure, of kind, and returns it.
func one(t *testing.T, sql string, rep lint.Report, kind text2sql.ErrorKind) *text2sql.SQLError {
	t.Helper()
	require.Len(t, rep.Failures, 1, "%s: want exactly one failure of kind %s", sql, kind)
	f := rep.Failures[0]
	require.Equal(t, kind, f.Kind, "%s: failure %v", sql, f)
	return f
}

// C3 #24a: an unknown table is reported with the closest real name.
func TestUnknownTableHint(t *testing.T) {
	ex := newDB(t, `CREATE TABLE topics(id INTEGER PRIMARY KEY, name TEXT); CREATE TABLE tickets(id INTEGER); CREATE TABLE domains(id INTEGER);`)
	c := lint.New(ex.Schema(), text2sql.DialectSQLite)
	q := "SELECT name FROM topic"
	f := one(t, q, c.Check(q), text2sql.KindUnknownTable)
	assert.Contains(t, f.Message, "topic", "want the table topic named")
	assert.Contains(t, f.Hint, `"topics"`, "want the hint \"topics\"")
	err := c.Check(q).Err()
	assert.True(t, errors.Is(err, f) || err.Kind == text2sql.KindUnknownTable, "Err() = %v", err)
	assert.Empty(t, c.Check("SELECT name FROM topics").Failures, "the repaired query fails")
}

// C3 #24b: an unknown column through an alias is reported on the aliased
// table, with the table that has the column as the hint.
func TestUnknownColumnThroughAlias(t *testing.T) {
	ex := newDB(t, `CREATE TABLE circle_kpi_4g(date TEXT, circle_name TEXT); CREATE TABLE cell_kpi_4g(date TEXT, circle_name TEXT, cell_name TEXT);`)
	c := lint.New(ex.Schema(), text2sql.DialectSQLite)
	q := "SELECT ck.date, COUNT(DISTINCT ck.cell_name) FROM circle_kpi_4g ck GROUP BY ck.date"
	f := one(t, q, c.Check(q), text2sql.KindUnknownColumn)
	assert.Contains(t, f.Message, "cell_name")
	assert.Contains(t, f.Message, "circle_kpi_4g")
	assert.Contains(t, f.Hint, "cell_kpi_4g")
	assert.Error(t, ex.Check(context.Background(), q), "the engine accepts %s", q)
}

// C4 #25: TOP is named as another dialect's construct on SQLite and
// PostgreSQL; the repair with LIMIT passes.
func TestTopIsDialect(t *testing.T) {
	ex := newDB(t, `CREATE TABLE artists(id INTEGER PRIMARY KEY, name TEXT);`)
	q := "SELECT TOP 5 name FROM artists ORDER BY name"
	for _, d := range []text2sql.Dialect{text2sql.DialectSQLite, text2sql.DialectPostgres, text2sql.DialectMySQL} {
		c := lint.New(withDialect(ex.Schema(), d), d)
		f := one(t, q, c.Check(q), text2sql.KindDialect)
		assert.Contains(t, f.Message, "TOP", d)
		assert.Contains(t, f.Hint, "LIMIT 5", d)
		assert.ErrorIs(t, f, text2sql.ErrRefused, "%s: a dialect failure should be a refusal", d)
		assert.Empty(t, c.Check("SELECT name FROM artists ORDER BY name LIMIT 5").Failures, "%s: the repaired query fails", d)
	}
}

// C4 #26: ILIKE, EXTRACT and NOW() are named on SQLite; the same ILIKE
// query is accepted on PostgreSQL.
func TestPostgresConstructsOnSQLite(t *testing.T) {
	ex := newDB(t, `CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT); CREATE TABLE t(id INTEGER PRIMARY KEY, created TEXT);`)
	lite := lint.New(ex.Schema(), text2sql.DialectSQLite)
	pg := lint.New(withDialect(ex.Schema(), text2sql.DialectPostgres), text2sql.DialectPostgres)
	cases := []struct{ sql, construct, hint string }{
		{"SELECT name FROM users WHERE name ILIKE '%ann%'", "ILIKE", "LIKE"},
		{"SELECT id FROM t WHERE EXTRACT(year FROM created) = 2023", "EXTRACT", "strftime('%Y', created)"},
		{"SELECT NOW() - created FROM t", "NOW()", "datetime('now')"},
	}
	for _, tc := range cases {
		f := one(t, tc.sql, lite.Check(tc.sql), text2sql.KindDialect)
		assert.Contains(t, f.Message, tc.construct, tc.sql)
		assert.Contains(t, f.Hint, strings.Split(tc.hint, "(")[0], "%s: hint does not suggest %s", tc.sql, tc.hint)
		assert.Error(t, ex.Check(context.Background(), tc.sql), "the engine accepts %s", tc.sql)
		assert.Empty(t, pg.Check(tc.sql).Failures, "PostgreSQL: %s", tc.sql)
	}
	// Variants: NOT ILIKE, lower-case, qualified columns.
	for _, q := range []string{
		"select u.name from users u where u.name not ilike 'x%'",
		"SELECT id FROM t WHERE extract(MONTH from t.created) = 1",
		"SELECT id FROM t WHERE created < now()",
	} {
		if rep := lite.Check(q); assert.Len(t, rep.Failures, 1, "SQLite: %s: want one dialect failure", q) {
			assert.Equal(t, text2sql.KindDialect, rep.Failures[0].Kind, "SQLite: %s", q)
		}
		assert.Empty(t, pg.Check(q).Failures, "PostgreSQL: %s", q)
	}
	// A column named like a construct is not one.
	ex2 := newDB(t, `CREATE TABLE w(top INTEGER, ilike TEXT, now TEXT);`)
	c2 := lint.New(ex2.Schema(), text2sql.DialectSQLite)
	for _, q := range []string{"SELECT top, ilike, now FROM w", "SELECT w.top FROM w ORDER BY top LIMIT 2"} {
		assert.Empty(t, c2.Check(q).Failures, q)
	}
}

// Constructs of other dialects, per target.
func TestDialectConstructs(t *testing.T) {
	ex := newDB(t, `CREATE TABLE sales(id INTEGER PRIMARY KEY, region TEXT, amount REAL, tags TEXT, day TEXT);`)
	lite := ex.Schema()
	cases := []struct {
		d         text2sql.Dialect
		sql       string
		construct string // "" means accepted
	}{
		{text2sql.DialectSQLite, "SELECT region, COUNT(*) FROM sales GROUP BY region WITH ROLLUP", "WITH ROLLUP"},
		{text2sql.DialectPostgres, "SELECT region, COUNT(*) FROM sales GROUP BY region WITH ROLLUP", "WITH ROLLUP"},
		{text2sql.DialectMySQL, "SELECT region, COUNT(*) FROM sales GROUP BY region WITH ROLLUP", ""},
		{text2sql.DialectPostgres, "SELECT region, COUNT(*) FROM sales GROUP BY ROLLUP (region)", ""},
		{text2sql.DialectSQLite, "SELECT region, COUNT(*) FROM sales GROUP BY ROLLUP (region)", "ROLLUP"},
		{text2sql.DialectSQLite, "SELECT amount::int FROM sales", "::"},
		{text2sql.DialectMySQL, "SELECT amount::int FROM sales", "::"},
		{text2sql.DialectPostgres, "SELECT amount::int, day::date, '{a}'::text[] FROM sales", ""},
		{text2sql.DialectPostgres, "SELECT `region` FROM sales", "backtick"},
		{text2sql.DialectSQLite, "SELECT `region` FROM sales", ""},
		{text2sql.DialectMySQL, "SELECT `region` FROM sales", ""},
		{text2sql.DialectPostgres, "SELECT [region] FROM sales", "square-bracket"},
		{text2sql.DialectSQLite, "SELECT [region] FROM [sales]", ""},
		{text2sql.DialectPostgres, "SELECT (ARRAY[1, 2])[1], region FROM sales", ""},
		{text2sql.DialectPostgres, "SELECT IFNULL(region, '') FROM sales", "IFNULL()"},
		{text2sql.DialectSQLite, "SELECT IFNULL(region, '') FROM sales", ""},
		{text2sql.DialectPostgres, "SELECT region FROM sales LIMIT 10, 5", "LIMIT offset, count"},
		{text2sql.DialectSQLite, "SELECT region FROM sales LIMIT 10, 5", ""},
		{text2sql.DialectSQLite, "SELECT DISTINCT ON (region) region, amount FROM sales", "DISTINCT ON"},
		{text2sql.DialectPostgres, "SELECT DISTINCT ON (region) region, amount FROM sales ORDER BY region, amount DESC", ""},
		{text2sql.DialectMySQL, "SELECT a.region FROM sales a FULL OUTER JOIN sales b ON a.id = b.id", "FULL OUTER JOIN"},
		{text2sql.DialectSQLite, "SELECT a.region FROM sales a FULL OUTER JOIN sales b ON a.id = b.id", ""},
		{text2sql.DialectMySQL, "SELECT region FROM sales ORDER BY amount DESC NULLS LAST", "NULLS LAST"},
		{text2sql.DialectSQLite, "SELECT region FROM sales ORDER BY amount DESC NULLS LAST", ""},
		{text2sql.DialectSQLite, "SELECT region FROM sales FETCH FIRST 3 ROWS ONLY", "FETCH FIRST"},
		{text2sql.DialectMySQL, "SELECT region FROM sales ORDER BY id FETCH FIRST 3 ROWS ONLY", ""}, // MariaDB 10.6+
		{text2sql.DialectMySQL, "SELECT [region] FROM sales", "square-bracket"},
		{text2sql.DialectPostgres, "SELECT region, [first name] FROM sales", "square-bracket"},
		{text2sql.DialectSQLite, "SELECT region FROM sales WHERE day > date('now') - INTERVAL '7 days'", "INTERVAL"},
		{text2sql.DialectPostgres, "SELECT region FROM sales WHERE day::date > current_date - INTERVAL 7 DAY", "INTERVAL 7"},
		{text2sql.DialectMySQL, "SELECT region FROM sales WHERE day > DATE_SUB(CURDATE(), INTERVAL 7 DAY)", ""},
		{text2sql.DialectSQLite, "SELECT region FROM sales WHERE YEAR(day) = 2024", "YEAR()"},
		{text2sql.DialectSQLite, "SELECT strftime('%Y', day) AS year FROM sales WHERE CAST(strftime('%Y', day) AS INTEGER) = 2024", ""},
		{text2sql.DialectPostgres, "SELECT strftime('%Y', day) FROM sales", "STRFTIME()"},
		{text2sql.DialectMySQL, "SELECT strftime('%Y', day) FROM sales", "STRFTIME()"},
		{text2sql.DialectPostgres, "SELECT region FROM sales WHERE region REGEXP '^N'", "REGEXP"},
		{text2sql.DialectSQLite, "SELECT region FROM sales WHERE region <=> 'N'", "<=>"},
		{text2sql.DialectPostgres, "SELECT region FROM sales WHERE id == 1", "=="},
		{text2sql.DialectSQLite, "SELECT region FROM sales WHERE id == 1", ""},
		{text2sql.DialectSQLite, "SELECT value FROM sales, string_split(tags, ',')", "STRING_SPLIT()"},
		{text2sql.DialectSQLite, "SELECT j.value FROM sales, json_each(sales.tags) AS j", ""},
	}
	for _, tc := range cases {
		c := lint.New(withDialect(lite, tc.d), tc.d)
		rep := c.Check(tc.sql)
		if tc.construct == "" {
			assert.Empty(t, rep.Failures, "%s: %s: want accepted", tc.d, tc.sql)
			continue
		}
		f := one(t, string(tc.d)+": "+tc.sql, rep, text2sql.KindDialect)
		assert.Contains(t, f.Message, tc.construct, "%s: %s", tc.d, tc.sql)
		assert.NotEmpty(t, f.Hint, "%s: %s: no hint", tc.d, tc.sql)
		if tc.d == text2sql.DialectSQLite {
			assert.Error(t, ex.Check(context.Background(), tc.sql), "the SQLite engine accepts %s", tc.sql)
		}
	}
}

// Valid queries over the demo database: every name resolves (CTEs and
// their columns, subquery aliases, select-list aliases in ORDER BY /
// GROUP BY / HAVING / WHERE, quoted and qualified names, correlated
// subqueries, window functions, table-valued functions). The engine
// accepts each, and so must the checker.
func TestValidQueriesPass(t *testing.T) {
	ex := demoDB(t)
	c := lint.New(ex.Schema(), text2sql.DialectSQLite)
	ctx := context.Background()
	for _, q := range []string{
		`SELECT s.first_name AS name, COUNT(*) AS n FROM students s JOIN enrollments e ON e.student_id = s.student_id GROUP BY name HAVING n > 2 ORDER BY n DESC, name`,
		`WITH per(course, n) AS (SELECT course_id, COUNT(*) FROM enrollments GROUP BY course_id) SELECT c.title, per.n FROM per JOIN courses c ON c.course_id = per.course ORDER BY per.n DESC LIMIT 3`,
		`WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 5) SELECT n FROM t`,
		`WITH x AS (SELECT student_id, AVG(grade_points) AS avg_gp FROM enrollments GROUP BY student_id) SELECT s.last_name, x.avg_gp FROM x JOIN students s USING (student_id) WHERE x.avg_gp > (SELECT AVG(avg_gp) FROM x)`,
		`SELECT sub.dept, sub.total FROM (SELECT d.name AS dept, SUM(c.credits) AS total FROM departments d JOIN courses c ON c.department_id = d.department_id GROUP BY d.name) AS sub WHERE sub.total > 10`,
		`SELECT "first_name", [last_name], ` + "`email`" + ` FROM "students" WHERE "students".entry_year = 2023`,
		`SELECT main.students.first_name FROM main.students`,
		`SELECT first_name FROM students WHERE last_name = "O'Connor"`,
		`SELECT first_name FROM students s WHERE EXISTS (SELECT 1 FROM enrollments e WHERE e.student_id = s.student_id AND e.status = 'completed')`,
		`SELECT first_name FROM students WHERE student_id NOT IN (SELECT student_id FROM enrollments)`,
		`SELECT title, RANK() OVER w AS r, SUM(credits) OVER (PARTITION BY department_id ORDER BY credits ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS running FROM courses WINDOW w AS (ORDER BY credits DESC)`,
		`SELECT CASE WHEN grade_points >= 3.5 THEN 'high' ELSE 'low' END AS band, COUNT(*) FROM enrollments WHERE grade_points IS NOT NULL GROUP BY band`,
		`SELECT CAST(COUNT(*) AS REAL) / (SELECT COUNT(*) FROM students) FROM enrollments WHERE status = 'withdrawn'`,
		`SELECT title FROM courses WHERE title = 'databases' COLLATE NOCASE ORDER BY title COLLATE NOCASE`,
		`SELECT rowid, first_name FROM students ORDER BY rowid LIMIT 2`,
		`SELECT j.value FROM json_each('[1,2,3]') AS j`,
		`SELECT value FROM json_each('[1,2]')`,
		`SELECT first_name FROM students UNION SELECT first_name FROM instructors ORDER BY first_name`,
		`SELECT d.name FROM departments d NATURAL JOIN courses LIMIT 1`,
		`SELECT i.last_name FROM instructors i LEFT JOIN courses c ON c.instructor_id = i.instructor_id WHERE c.course_id IS NULL`,
		`SELECT strftime('%Y', 'now') AS year, date('now', '-1 month'), julianday('now') - julianday('2020-01-01')`,
		`SELECT * FROM (VALUES (1, 'a'), (2, 'b'))`,
		`SELECT s.* FROM students AS s WHERE s.major_department_id IS NULL`,
		`SELECT e.term, COUNT(DISTINCT e.student_id) FILTER (WHERE e.status = 'completed') FROM enrollments e GROUP BY 1 ORDER BY 2 DESC`,
		`SELECT title FROM courses WHERE course_id IN courses_ids`,
		`SELECT (SELECT COUNT(*) FROM enrollments e WHERE e.course_id = c.course_id) AS n, c.title FROM courses c ORDER BY n DESC`,
		`SELECT first_name AS fn FROM students WHERE fn LIKE 'A%'`,
		`SELECT first_name || ' ' || last_name AS full FROM students ORDER BY full`,
		`SELECT COUNT(*) FROM students, departments WHERE students.major_department_id = departments.department_id`,
		`SELECT x.n FROM (SELECT COUNT(*) AS n FROM students) x, (SELECT 1) y`,
		`SELECT total(credits), group_concat(code, ', ') FROM courses`,
		`SELECT iif(credits > 3, 'heavy', 'light') AS load, typeof(credits) FROM courses`,
		`SELECT first_name FROM students WHERE entry_year BETWEEN 2020 AND 2023 AND email GLOB '*@*'`,
	} {
		if q == `SELECT title FROM courses WHERE course_id IN courses_ids` {
			continue // a table that does not exist is an engine error; kept out
		}
		if !assert.NoError(t, ex.Check(ctx, q), "test case invalid, the engine rejects it: %s", q) {
			continue
		}
		assert.Empty(t, c.Check(q).Failures, "false failure in %s", q)
	}
}

// Invalid names over the demo database: each is reported with the right
// kind, and the engine rejects each too.
func TestInvalidNamesFail(t *testing.T) {
	ex := demoDB(t)
	c := lint.New(ex.Schema(), text2sql.DialectSQLite)
	ctx := context.Background()
	cases := []struct {
		sql  string
		kind text2sql.ErrorKind
		want string // in message or hint
	}{
		{`SELECT first_name FROM student`, text2sql.KindUnknownTable, `"students"`},
		{`SELECT s.first_name FROM students s JOIN enrolments e ON e.student_id = s.student_id`, text2sql.KindUnknownTable, `"enrollments"`},
		{`SELECT s.firstname FROM students s`, text2sql.KindUnknownColumn, `"first_name"`},
		{`SELECT grade FROM enrollments`, text2sql.KindUnknownColumn, "grade"},
		{`SELECT title FROM courses ORDER BY credit DESC`, text2sql.KindUnknownColumn, `"credits"`},
		{`SELECT title FROM courses WHERE department_id IN (SELECT id FROM departments)`, text2sql.KindUnknownColumn, "no such column: id"},
		{`WITH per AS (SELECT course_id, COUNT(*) AS n FROM enrollments GROUP BY course_id) SELECT per.total FROM per`, text2sql.KindUnknownColumn, "per.total"},
		{`SELECT sub.total FROM (SELECT COUNT(*) AS n FROM students) AS sub`, text2sql.KindUnknownColumn, "sub.total"},
		{`SELECT x.first_name FROM students s`, text2sql.KindUnknownColumn, "s (students)"},
		{`SELECT students.first_name FROM students s`, text2sql.KindUnknownColumn, "students.first_name"},
		{`SELECT c.title, d.name FROM courses c`, text2sql.KindUnknownColumn, "d.name"},
		{`SELECT c.* FROM courses AS co`, text2sql.KindUnknownTable, "c.*"},
		{`SELECT first_name AS fn, fn || '!' FROM students`, text2sql.KindUnknownColumn, "fn"},
		{`SELECT e.grade_points FROM enrollments e WHERE e.statu = 'completed'`, text2sql.KindUnknownColumn, `"status"`},
		{`SELECT title FROM courses c WHERE EXISTS (SELECT 1 FROM enrollments e WHERE e.course = c.course_id)`, text2sql.KindUnknownColumn, "e.course"},
		{`SELECT title FROM courses WHERE credits = (SELECT MAX(credit) FROM courses)`, text2sql.KindUnknownColumn, "credit"},
		{`SELECT d.name, COUNT(*) FROM departments d JOIN courses c USING (dept_id) GROUP BY d.name`, text2sql.KindUnknownColumn, "dept_id"},
	}
	for _, tc := range cases {
		if !assert.Error(t, ex.Check(ctx, tc.sql), "test case invalid, the engine accepts it: %s", tc.sql) {
			continue
		}
		rep := c.Check(tc.sql)
		if !assert.NotEmpty(t, rep.Failures, "not caught: %s", tc.sql) {
			continue
		}
		f := rep.Failures[0]
		assert.Equal(t, tc.kind, f.Kind, tc.sql)
		assert.Contains(t, f.Message+" "+f.Hint, tc.want, tc.sql)
	}
}

// PostgreSQL folds and quotes differently: a double-quoted name is always
// an identifier; a whole-row reference names a table.
func TestPostgresNames(t *testing.T) {
	db := &schema.Database{Name: "shop", Dialect: text2sql.DialectPostgres, Tables: []*schema.Table{
		{Schema: "public", Name: "users", Columns: []schema.Column{{Name: "id", Type: "integer", NotNull: true}, {Name: "name", Type: "text"}}, PrimaryKey: []string{"id"}},
		{Schema: "sales", Name: "orders", Columns: []schema.Column{{Name: "id", Type: "integer"}, {Name: "user_id", Type: "integer"}, {Name: "total", Type: "numeric"}}},
	}}
	c := lint.New(db, "")
	require.Equal(t, text2sql.DialectPostgres, c.Dialect())
	for _, q := range []string{
		`SELECT u.name, o.total FROM public.users u JOIN sales.orders o ON o.user_id = u.id`,
		`SELECT users FROM users`,
		`SELECT n.nspname FROM pg_catalog.pg_namespace n`,
		`SELECT table_name FROM information_schema.tables`,
		`SELECT g FROM generate_series(1, 3) AS g`,
		`SELECT x.v FROM unnest(ARRAY[1, 2]) AS x(v)`,
		`SELECT name FROM users WHERE name ILIKE 'a%' AND id = ANY('{1,2}'::int[])`,
		`SELECT EXTRACT(YEAR FROM now()), date_trunc('month', now()) AT TIME ZONE 'UTC', now() - INTERVAL '1 day'`,
		`SELECT make_interval(days => 3)`,
		`SELECT name FROM users ORDER BY name NULLS LAST`,
	} {
		assert.Empty(t, c.Check(q).Failures, "false failure in %s", q)
	}
	q := `SELECT name FROM users WHERE name = "Alice"`
	f := one(t, q, c.Check(q), text2sql.KindUnknownColumn)
	assert.Contains(t, f.Hint, "'Alice'", "the hint should suggest single quotes")
	q = `SELECT x FROM sales.nothere`
	one(t, q, c.Check(q), text2sql.KindUnknownTable)
	// An unknown schema is not the checker's to judge.
	assert.Empty(t, c.Check(`SELECT a FROM elsewhere.t`).Failures, "unknown schema")
}

// MySQL reads "…" as a string, so an unresolved one is no failure.
func TestMySQLNames(t *testing.T) {
	db := &schema.Database{Name: "shop", Dialect: text2sql.DialectMySQL, Tables: []*schema.Table{
		{Name: "users", Columns: []schema.Column{{Name: "id", Type: "int"}, {Name: "name", Type: "varchar(40)"}}},
	}}
	c := lint.New(db, "")
	for _, q := range []string{
		`SELECT name FROM users WHERE name = "Alice"`,
		`SELECT shop.users.name FROM shop.users`,
		"SELECT `name` FROM `users` WHERE MATCH (name) AGAINST ('al' IN NATURAL LANGUAGE MODE)",
		`SELECT DATE_ADD(NOW(), INTERVAL id DAY), TIMESTAMPDIFF(YEAR, NOW(), NOW()), CONVERT(name, CHAR), CAST(id AS SIGNED) FROM users`,
		`SELECT 1 FROM dual`,
		`SELECT GROUP_CONCAT(name ORDER BY name SEPARATOR ', ') FROM users`,
		// Lexed by MySQL's rules: backslash escapes, "#" comments.
		`SELECT name FROM users WHERE name = 'a\' OR nam = 1 -- '`,
		"SELECT name FROM users # nam",
	} {
		assert.Empty(t, c.Check(q).Failures, "false failure in %s", q)
	}
	q := `SELECT nam FROM users`
	one(t, q, c.Check(q), text2sql.KindUnknownColumn)
}

// Err combines several failures into one SQLError.
func TestReportErr(t *testing.T) {
	ex := demoDB(t)
	c := lint.New(ex.Schema(), text2sql.DialectSQLite)
	assert.Nil(t, c.Failure("SELECT 1"))
	rep := c.Check("SELECT TOP 3 titel FROM course")
	require.Len(t, rep.Failures, 2)
	e := rep.Err()
	assert.Equal(t, rep.Failures[0].Kind, e.Kind, "Err() = %v", e)
	assert.Contains(t, e.Message, "TOP")
	assert.Contains(t, e.Message, "course")
	assert.Contains(t, e.Hint, `"courses"`)
}

// Text that is not one statement, or that the checker cannot parse, is
// left to the guard and the engine: no failure.
func TestNotOneStatement(t *testing.T) {
	ex := demoDB(t)
	c := lint.New(ex.Schema(), text2sql.DialectSQLite)
	for _, q := range []string{"", ";", "SELECT 1; SELECT nope FROM nothere", "SELECT (", "SELECT nope FROM (", "DROP TABLE nothere", "EXPLAIN SELECT nope FROM nothere"} {
		assert.Empty(t, c.Check(q).Failures, "%q", q)
	}
	// Without a schema, only the dialect checks run.
	nc := lint.New(nil, "")
	assert.Empty(t, nc.Check("SELECT nope FROM nothere").Failures, "nil schema")
	assert.Len(t, nc.Check("SELECT TOP 1 nope FROM nothere").Failures, 1, "nil schema, TOP")
}
