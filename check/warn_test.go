package check_test

import (
	"context"
	"strings"
	"testing"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/check"
	"github.com/text2sql-go/text2sql/executor/sqlite"
)

// kinds returns the kinds of ws.
func kinds(ws []string) map[string]string {
	out := map[string]string{}
	for _, w := range ws {
		out[check.Kind(w)] = w
	}
	return out
}

func run(t *testing.T, ex *sqlite.Executor, q string) *text2sql.Result {
	t.Helper()
	res, err := ex.Execute(context.Background(), text2sql.ExecuteRequest{SQL: q})
	if err != nil || res.Error != nil {
		t.Fatalf("%s: %v %v", q, err, res.Error)
	}
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
	if len(res.Rows) != 1 || res.Rows[0][0] != nil {
		t.Fatalf("SQLite returned %v, want the NULL first", res.Rows)
	}
	c := check.New(ex.Schema(), text2sql.DialectSQLite)

	// With the result only: the NULL is visible, the numbers are not.
	got := kinds(c.Warn(ctx, q, res))
	if w, ok := got[check.WarnNullOrder]; !ok || !strings.Contains(w, "first row has NULL") {
		t.Errorf("warnings %v: want the NULL in the first row reported", got)
	}
	// With a probe: numbers stored as text too.
	got = kinds(c.WithProbe(ex).Warn(ctx, q, res))
	if _, ok := got[check.WarnNullOrder]; !ok {
		t.Errorf("probe warnings %v: want %s", got, check.WarnNullOrder)
	}
	if w, ok := got[check.WarnTextNumbers]; !ok || !strings.Contains(w, "'10'") || !strings.Contains(w, "'9'") || !strings.Contains(w, "CAST(v AS INTEGER)") {
		t.Errorf("probe warnings %v: want numbers stored as text with '9' and '10' and the CAST", got)
	}
	// Before execution, from the schema and the probe alone.
	got = kinds(c.WithProbe(ex).Warn(ctx, q, nil))
	if _, ok := got[check.WarnNullOrder]; !ok {
		t.Errorf("no result: warnings %v, want %s from the probe", got, check.WarnNullOrder)
	}
	if _, ok := got[check.WarnTextNumbers]; !ok {
		t.Errorf("no result: warnings %v, want %s from the probe", got, check.WarnTextNumbers)
	}
	// And from the schema alone: v is not declared NOT NULL.
	got = kinds(c.Warn(ctx, q, nil))
	if w, ok := got[check.WarnNullOrder]; !ok || !strings.Contains(w, "not declared NOT NULL") {
		t.Errorf("schema only: warnings %v", got)
	}
	// The fix: no NULL warning once NULLs are filtered out, and no text
	// warning once the values are cast.
	fixed := "SELECT v FROM t WHERE v IS NOT NULL ORDER BY CAST(v AS INTEGER) LIMIT 1"
	if ws := c.WithProbe(ex).Warn(ctx, fixed, run(t, ex, fixed)); len(ws) != 0 {
		t.Errorf("fixed query: warnings %v", ws)
	}
	// MAX over numbers stored as text.
	got = kinds(c.WithProbe(ex).Warn(ctx, "SELECT MAX(v) FROM t", nil))
	if w, ok := got[check.WarnTextNumbers]; !ok || !strings.Contains(w, "MAX(v)") {
		t.Errorf("MAX(v): warnings %v", got)
	}
	// Text that sorts like its numbers (same length) is fine.
	ex2 := newDB(t, `CREATE TABLE y(v TEXT NOT NULL); INSERT INTO y VALUES ('2001'), ('1999'), ('2010');`)
	c2 := check.New(ex2.Schema(), text2sql.DialectSQLite).WithProbe(ex2)
	if ws := c2.Warn(ctx, "SELECT v FROM y ORDER BY v LIMIT 2", nil); len(ws) != 0 {
		t.Errorf("years as text: warnings %v, want none", ws)
	}
}

// PostgreSQL sorts NULLs last ascending and first descending.
func TestWarnNullOrderDirection(t *testing.T) {
	ex := demoDB(t)
	ctx := context.Background()
	asc := "SELECT first_name FROM students ORDER BY major_department_id LIMIT 1"
	desc := "SELECT first_name FROM students ORDER BY major_department_id DESC LIMIT 1"
	lite := check.New(ex.Schema(), text2sql.DialectSQLite).WithProbe(ex)
	if _, ok := kinds(lite.Warn(ctx, asc, nil))[check.WarnNullOrder]; !ok {
		t.Errorf("SQLite ASC: no NULL warning")
	}
	if _, ok := kinds(lite.Warn(ctx, desc, nil))[check.WarnNullOrder]; ok {
		t.Errorf("SQLite DESC: NULLs sort last, no warning expected")
	}
	if _, ok := kinds(lite.Warn(ctx, "SELECT first_name FROM students WHERE major_department_id > 0 ORDER BY major_department_id LIMIT 1", nil))[check.WarnNullOrder]; ok {
		t.Errorf("a filter on the column excludes NULLs: no warning expected")
	}
	pg := check.New(withDialect(ex.Schema(), text2sql.DialectPostgres), text2sql.DialectPostgres).WithProbe(ex)
	if _, ok := kinds(pg.Warn(ctx, desc, nil))[check.WarnNullOrder]; !ok {
		t.Errorf("PostgreSQL DESC: no NULL warning")
	}
	if _, ok := kinds(pg.Warn(ctx, asc, nil))[check.WarnNullOrder]; ok {
		t.Errorf("PostgreSQL ASC: NULLs sort last, no warning expected")
	}
	// A NOT NULL column never warns, with or without data.
	if _, ok := kinds(check.New(ex.Schema(), "").Warn(ctx, "SELECT last_name FROM students ORDER BY entry_year LIMIT 1", nil))[check.WarnNullOrder]; ok {
		t.Errorf("NOT NULL column: unexpected NULL warning")
	}
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
		ws := check.New(db, text2sql.DialectSQLite).Check(tc.sql).Warnings
		got := kinds(ws)[check.WarnIntegerDivision]
		if (got != "") != tc.warn {
			t.Errorf("%s: warnings %v, want integer division %v", tc.sql, ws, tc.warn)
		}
		if tc.warn {
			if !strings.Contains(got, "/") || !strings.Contains(got, "1.0") {
				t.Errorf("%s: %q should quote the division and suggest 1.0", tc.sql, got)
			}
			// Warn repeats the static warnings.
			if _, ok := kinds(check.New(db, "").Warn(ctx, tc.sql, nil))[check.WarnIntegerDivision]; !ok {
				t.Errorf("Warn misses the static warning for %s", tc.sql)
			}
			if _, ok := kinds(check.New(withDialect(db, text2sql.DialectMySQL), "").Check(tc.sql).Warnings)[check.WarnIntegerDivision]; ok {
				t.Errorf("MySQL's / is decimal: no warning expected for %s", tc.sql)
			}
		}
	}
	if _, ok := kinds(check.New(withDialect(db, text2sql.DialectPostgres), "").Check("SELECT COUNT(*) / COUNT(DISTINCT student_id) FROM enrollments").Warnings)[check.WarnIntegerDivision]; !ok {
		t.Errorf("PostgreSQL: no integer division warning")
	}
}

func TestWarnNullComparisonAndEmptyResult(t *testing.T) {
	ex := demoDB(t)
	c := check.New(ex.Schema(), text2sql.DialectSQLite)
	ctx := context.Background()
	q := "SELECT first_name FROM students WHERE major_department_id = NULL"
	w := kinds(c.Check(q).Warnings)[check.WarnNullComparison]
	if !strings.Contains(w, "IS NULL") {
		t.Errorf("NULL comparison: %q", w)
	}
	got := kinds(c.Warn(ctx, q, run(t, ex, q)))
	if _, ok := got[check.WarnEmptyResult]; !ok {
		t.Errorf("empty result: warnings %v", got)
	}
	q = "SELECT AVG(grade_points) FROM enrollments WHERE term = 'Spring 1999'"
	if _, ok := kinds(c.Warn(ctx, q, run(t, ex, q)))[check.WarnNullResult]; !ok {
		t.Errorf("all-NULL row: no warning")
	}
	q = "SELECT COUNT(*) FROM students"
	if ws := c.WithProbe(ex).Warn(ctx, q, run(t, ex, q)); len(ws) != 0 {
		t.Errorf("plain count: warnings %v", ws)
	}
	if _, ok := kinds(check.New(withDialect(ex.Schema(), text2sql.DialectMySQL), "").Check("SELECT first_name || last_name FROM students").Warnings)[check.WarnConcatOr]; !ok {
		t.Errorf("MySQL ||: no warning")
	}
}

// A LIMIT that cuts through ties: decided by a probe when there is one
// (the keys are added to the select list when they are not in it), else
// flagged as possible unless the keys are unique.
func TestWarnTies(t *testing.T) {
	ex := newDB(t, `CREATE TABLE p(id INTEGER PRIMARY KEY, name TEXT NOT NULL, score INTEGER NOT NULL);
		INSERT INTO p VALUES (1, 'a', 3), (2, 'b', 3), (3, 'c', 1), (4, 'd', 0);`)
	ctx := context.Background()
	c := check.New(ex.Schema(), text2sql.DialectSQLite)
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
		_, static := kinds(c.Warn(ctx, tc.sql, res))[check.WarnTies]
		w, probed := kinds(pc.Warn(ctx, tc.sql, res))[check.WarnTies]
		if static != tc.static || probed != tc.probed {
			t.Errorf("%s: ties warning static %v probed %v, want %v %v (%s)", tc.sql, static, probed, tc.static, tc.probed, w)
		}
		if probed && !strings.Contains(w, "score = 3") && !strings.Contains(w, "n = 1") {
			t.Errorf("%s: the tie warning should show the tied value: %s", tc.sql, w)
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
	c := check.New(ex.Schema(), "").WithProbe(broken)
	q := "SELECT v FROM t ORDER BY v LIMIT 1"
	got := kinds(c.Warn(context.Background(), q, nil))
	if _, ok := got[check.WarnTextNumbers]; ok {
		t.Errorf("a failing probe gave %v", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	calls := 0
	counting := text2sql.ExecutorFunc(func(ctx context.Context, req text2sql.ExecuteRequest) (*text2sql.Result, error) {
		calls++
		return ex.Execute(ctx, req)
	})
	check.New(ex.Schema(), "").WithProbe(counting).Warn(ctx, q, nil)
	if calls != 0 {
		t.Errorf("%d probes ran after cancellation", calls)
	}
	// At most DefaultMaxProbes probes per call.
	calls = 0
	check.New(ex.Schema(), "").WithProbe(counting).Warn(context.Background(),
		"SELECT MAX(v), MIN(v) FROM t, (SELECT v AS w FROM t) ORDER BY v LIMIT 1", nil)
	if calls > check.DefaultMaxProbes {
		t.Errorf("%d probes, want at most %d", calls, check.DefaultMaxProbes)
	}
}
