package lint_test

import (
	"context"
	"strings"
	"testing"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/executor/sqlite"
	"github.com/text2sql-go/text2sql/lint"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// kinds returns the kinds of ws.
func kinds(ws []string) map[string]string {
	out := map[string]string{}
	for _, w := range ws {
		out[lint.Kind(w)] = w
	}
	return out
}

func run(t *testing.T, ex *sqlite.Executor, q string) *text2sql.Result {
	t.Helper()
	res, err := ex.Execute(context.Background(), text2sql.ExecuteRequest{SQL: q})
	require.NoError(t, err, q)
	require.Nil(t, res.Error, q)
	return res
}

// C6 #37: t(v TEXT) holding '9', '10' and NULL; ORDER BY v LIMIT 1 returns
// the NULL. The result shows the NULL first; a probe shows numbers stored
// as text.
func TestWarnNullsAndTextNumbers(t *testing.T) {
	ex := newDB(t, `CREATE TABLE t(v TEXT); INSERT INTO t VALUES ('9'), ('10'), (NULL);`)
	ctx := context.Background()
	q := "SELECT v FROM t ORDER BY v LIMIT 1"
	res := run(t, ex, q)
	require.Len(t, res.Rows, 1, "SQLite returned %v, want the NULL first", res.Rows)
	require.Nil(t, res.Rows[0][0], "SQLite returned %v, want the NULL first", res.Rows)
	c := lint.New(ex.Schema(), text2sql.DialectSQLite)

	// With the result only: the NULL is visible, the numbers are not.
	got := kinds(c.Warn(ctx, q, res))
	if assert.Contains(t, got, lint.WarnNullOrder, "want the NULL in the first row reported") {
		assert.Contains(t, got[lint.WarnNullOrder], "first row has NULL", "want the NULL in the first row reported")
	}
	// With a probe: numbers stored as text too.
	got = kinds(c.WithProbe(ex).Warn(ctx, q, res))
	assert.Contains(t, got, lint.WarnNullOrder, "probe warnings")
	if assert.Contains(t, got, lint.WarnTextNumbers, "probe warnings: want numbers stored as text") {
		w := got[lint.WarnTextNumbers]
		assert.Contains(t, w, "'10'")
		assert.Contains(t, w, "'9'")
		assert.Contains(t, w, "CAST(v AS INTEGER)")
	}
	// Before execution, from the schema and the probe alone.
	got = kinds(c.WithProbe(ex).Warn(ctx, q, nil))
	assert.Contains(t, got, lint.WarnNullOrder, "no result: want the warning from the probe")
	assert.Contains(t, got, lint.WarnTextNumbers, "no result: want the warning from the probe")
	// And from the schema alone: v is not declared NOT NULL.
	got = kinds(c.Warn(ctx, q, nil))
	if assert.Contains(t, got, lint.WarnNullOrder, "schema only") {
		assert.Contains(t, got[lint.WarnNullOrder], "not declared NOT NULL", "schema only")
	}
	// The fix: no NULL warning once NULLs are filtered out, and no text
	// warning once the values are cast.
	fixed := "SELECT v FROM t WHERE v IS NOT NULL ORDER BY CAST(v AS INTEGER) LIMIT 1"
	assert.Empty(t, c.WithProbe(ex).Warn(ctx, fixed, run(t, ex, fixed)), "fixed query: warnings")
	// MAX over numbers stored as text.
	got = kinds(c.WithProbe(ex).Warn(ctx, "SELECT MAX(v) FROM t", nil))
	if assert.Contains(t, got, lint.WarnTextNumbers, "MAX(v)") {
		assert.Contains(t, got[lint.WarnTextNumbers], "MAX(v)")
	}
	// Text that sorts like its numbers (same length) is fine.
	ex2 := newDB(t, `CREATE TABLE y(v TEXT NOT NULL); INSERT INTO y VALUES ('2001'), ('1999'), ('2010');`)
	c2 := lint.New(ex2.Schema(), text2sql.DialectSQLite).WithProbe(ex2)
	assert.Empty(t, c2.Warn(ctx, "SELECT v FROM y ORDER BY v LIMIT 2", nil), "years as text: want no warning")
}

// PostgreSQL sorts NULLs last ascending and first descending.
func TestWarnNullOrderDirection(t *testing.T) {
	ex := demoDB(t)
	ctx := context.Background()
	asc := "SELECT first_name FROM students ORDER BY major_department_id LIMIT 1"
	desc := "SELECT first_name FROM students ORDER BY major_department_id DESC LIMIT 1"
	lite := lint.New(ex.Schema(), text2sql.DialectSQLite).WithProbe(ex)
	assert.Contains(t, kinds(lite.Warn(ctx, asc, nil)), lint.WarnNullOrder, "SQLite ASC: no NULL warning")
	assert.NotContains(t, kinds(lite.Warn(ctx, desc, nil)), lint.WarnNullOrder, "SQLite DESC: NULLs sort last, no warning expected")
	assert.NotContains(t, kinds(lite.Warn(ctx, "SELECT first_name FROM students WHERE major_department_id > 0 ORDER BY major_department_id LIMIT 1", nil)), lint.WarnNullOrder,
		"a filter on the column excludes NULLs: no warning expected")
	pg := lint.New(withDialect(ex.Schema(), text2sql.DialectPostgres), text2sql.DialectPostgres).WithProbe(ex)
	assert.Contains(t, kinds(pg.Warn(ctx, desc, nil)), lint.WarnNullOrder, "PostgreSQL DESC: no NULL warning")
	assert.NotContains(t, kinds(pg.Warn(ctx, asc, nil)), lint.WarnNullOrder, "PostgreSQL ASC: NULLs sort last, no warning expected")
	// A NOT NULL column never warns, with or without data.
	assert.NotContains(t, kinds(lint.New(ex.Schema(), "").Warn(ctx, "SELECT last_name FROM students ORDER BY entry_year LIMIT 1", nil)), lint.WarnNullOrder,
		"NOT NULL column: unexpected NULL warning")
}

// Integer division in SQLite and PostgreSQL, not in MySQL.
func TestWarnIntegerDivision(t *testing.T) {
	ex := demoDB(t)
	db := ex.Schema()
	cases := []struct {
		sql  string
		warn bool
	}{
		{"SELECT COUNT(*) / (SELECT COUNT(*) FROM students) FROM enrollments WHERE status = 'completed'", true},
		{"SELECT SUM(CASE WHEN status = 'completed' THEN 1 ELSE 0 END) / COUNT(*) FROM enrollments", true},
		{"SELECT SUM(IIF(status = 'completed', 1, 0)) * 100 / COUNT(*) FROM enrollments", true},
		{"SELECT SUM(status = 'completed') / COUNT(*) FROM enrollments", true},
		{"SELECT credits / department_id FROM courses", true},
		{"SELECT COUNT(*) * 1.0 / (SELECT COUNT(*) FROM students) FROM enrollments", false},
		{"SELECT CAST(COUNT(*) AS REAL) / COUNT(DISTINCT student_id) FROM enrollments", false},
		{"SELECT 100.0 * SUM(status = 'completed') / COUNT(*) FROM enrollments", false},
		{"SELECT AVG(credits) / 2 FROM courses", false},
		{"SELECT grade_points / credits FROM enrollments JOIN courses USING (course_id)", false},
		{"SELECT title FROM courses WHERE code LIKE 'CS/%'", false},
	}
	ctx := context.Background()
	for _, tc := range cases {
		ws := lint.New(db, text2sql.DialectSQLite).Check(tc.sql).Warnings
		got := kinds(ws)[lint.WarnIntegerDivision]
		assert.Equal(t, tc.warn, got != "", "%s: warnings %v, want integer division %v", tc.sql, ws, tc.warn)
		if tc.warn {
			assert.Contains(t, got, "/", "%s: should quote the division", tc.sql)
			assert.Contains(t, got, "1.0", "%s: should suggest 1.0", tc.sql)
			// Warn repeats the static warnings.
			assert.Contains(t, kinds(lint.New(db, "").Warn(ctx, tc.sql, nil)), lint.WarnIntegerDivision, "Warn misses the static warning for %s", tc.sql)
			assert.NotContains(t, kinds(lint.New(withDialect(db, text2sql.DialectMySQL), "").Check(tc.sql).Warnings), lint.WarnIntegerDivision,
				"MySQL's / is decimal: no warning expected for %s", tc.sql)
		}
	}
	assert.Contains(t, kinds(lint.New(withDialect(db, text2sql.DialectPostgres), "").Check("SELECT COUNT(*) / COUNT(DISTINCT student_id) FROM enrollments").Warnings), lint.WarnIntegerDivision,
		"PostgreSQL: no integer division warning")
}

func TestWarnNullComparisonAndEmptyResult(t *testing.T) {
	ex := demoDB(t)
	c := lint.New(ex.Schema(), text2sql.DialectSQLite)
	ctx := context.Background()
	q := "SELECT first_name FROM students WHERE major_department_id = NULL"
	w := kinds(c.Check(q).Warnings)[lint.WarnNullComparison]
	assert.Contains(t, w, "IS NULL", "NULL comparison")
	assert.Contains(t, kinds(c.Warn(ctx, q, run(t, ex, q))), lint.WarnEmptyResult, "empty result")
	q = "SELECT AVG(grade_points) FROM enrollments WHERE term = 'Spring 1999'"
	assert.Contains(t, kinds(c.Warn(ctx, q, run(t, ex, q))), lint.WarnNullResult, "all-NULL row: no warning")
	q = "SELECT COUNT(*) FROM students"
	assert.Empty(t, c.WithProbe(ex).Warn(ctx, q, run(t, ex, q)), "plain count: warnings")
	assert.Contains(t, kinds(lint.New(withDialect(ex.Schema(), text2sql.DialectMySQL), "").Check("SELECT first_name || last_name FROM students").Warnings), lint.WarnConcatOr,
		"MySQL ||: no warning")
}

// A LIMIT that cuts through ties: decided by a probe when there is one
// (the keys are added to the select list when they are not in it), else
// flagged as possible unless the keys are unique.
func TestWarnTies(t *testing.T) {
	ex := newDB(t, `CREATE TABLE p(id INTEGER PRIMARY KEY, name TEXT NOT NULL, score INTEGER NOT NULL);
		INSERT INTO p VALUES (1, 'a', 3), (2, 'b', 3), (3, 'c', 1), (4, 'd', 0);`)
	ctx := context.Background()
	c := lint.New(ex.Schema(), text2sql.DialectSQLite)
	pc := c.WithProbe(ex)
	cases := []struct {
		sql            string
		static, probed bool
	}{
		{"SELECT name FROM p ORDER BY score DESC LIMIT 1", true, true},        // 'a' and 'b' tie on 3
		{"SELECT name, score FROM p ORDER BY score DESC LIMIT 1", true, true}, // key in the result
		{"SELECT name FROM p ORDER BY score DESC LIMIT 2", true, false},       // 3, 3 | 1: the cut is clean
		{"SELECT name FROM p ORDER BY score DESC, id LIMIT 1", false, false},  // the primary key breaks ties
		{"SELECT name FROM p ORDER BY id LIMIT 1", false, false},
		{"SELECT score, COUNT(*) AS n FROM p GROUP BY score ORDER BY score LIMIT 1", false, false}, // the group key is unique
		{"SELECT score, COUNT(*) AS n FROM p GROUP BY score ORDER BY n DESC LIMIT 1", true, false}, // counts 2, 1, 1
		{"SELECT score, COUNT(*) AS n FROM p GROUP BY score ORDER BY n LIMIT 1", true, true},       // counts 1, 1 tie
		{"SELECT name FROM p ORDER BY score DESC LIMIT 10", false, false},                          // fewer rows than the limit
	}
	for _, tc := range cases {
		res := run(t, ex, tc.sql)
		_, static := kinds(c.Warn(ctx, tc.sql, res))[lint.WarnTies]
		w, probed := kinds(pc.Warn(ctx, tc.sql, res))[lint.WarnTies]
		assert.Equal(t, [2]bool{tc.static, tc.probed}, [2]bool{static, probed}, "%s: ties warning static, probed (%s)", tc.sql, w)
		if probed {
			assert.True(t, strings.Contains(w, "score = 3") || strings.Contains(w, "n = 1"), "%s: the tie warning should show the tied value: %s", tc.sql, w)
		}
	}
}

// A probe that fails (an executor that always errs) gives no warning and
// no error; a cancelled context skips the probes.
func TestWarnProbeFailures(t *testing.T) {
	ex := newDB(t, `CREATE TABLE t(v TEXT); INSERT INTO t VALUES ('9'), ('10'), (NULL);`)
	broken := text2sql.ExecutorFunc(func(context.Context, text2sql.ExecuteRequest) (*text2sql.Result, error) {
		return &text2sql.Result{Error: &text2sql.SQLError{Kind: text2sql.KindRuntime, Message: "boom"}}, nil
	})
	c := lint.New(ex.Schema(), "").WithProbe(broken)
	q := "SELECT v FROM t ORDER BY v LIMIT 1"
	got := kinds(c.Warn(context.Background(), q, nil))
	assert.NotContains(t, got, lint.WarnTextNumbers, "a failing probe gave a warning")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	calls := 0
	counting := text2sql.ExecutorFunc(func(ctx context.Context, req text2sql.ExecuteRequest) (*text2sql.Result, error) {
		calls++
		return ex.Execute(ctx, req)
	})
	lint.New(ex.Schema(), "").WithProbe(counting).Warn(ctx, q, nil)
	assert.Zero(t, calls, "probes ran after cancellation")
	// At most DefaultMaxProbes probes per call.
	calls = 0
	lint.New(ex.Schema(), "").WithProbe(counting).Warn(context.Background(),
		"SELECT MAX(v), MIN(v) FROM t, (SELECT v AS w FROM t) ORDER BY v LIMIT 1", nil)
	assert.LessOrEqual(t, calls, lint.DefaultMaxProbes, "probes")
}
