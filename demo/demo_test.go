package demo_test

import (
	"bytes"
	"context"
	"database/sql"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/demo"
	"github.com/text2sql-go/text2sql/executor/sqlite"
	"github.com/text2sql-go/text2sql/internal/demotest"
	"github.com/text2sql-go/text2sql/knowledge"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func query(t *testing.T, ex *sqlite.Executor, q string) [][]any {
	t.Helper()
	res, err := ex.Execute(context.Background(), text2sql.ExecuteRequest{SQL: q})
	require.NoError(t, err)
	require.Nil(t, res.Error, q)
	return res.Rows
}

func count(t *testing.T, ex *sqlite.Executor, q string) int64 {
	t.Helper()
	rows := query(t, ex, q)
	n, ok := rows[0][0].(int64)
	require.True(t, ok, "%s: %T %v", q, rows[0][0], rows[0][0])
	return n
}

func TestDatabase(t *testing.T) {
	_, ex := demotest.Open(t)
	sch := ex.Schema()
	var names []string
	for _, tb := range sch.Tables {
		names = append(names, tb.Name)
	}
	require.Equal(t, []string{"courses", "departments", "enrollments", "instructors", "students"}, names, "tables")
	// A few hundred rows, with realistic proportions.
	total := int64(0)
	for table, bounds := range map[string][2]int64{
		"departments": {4, 10}, "instructors": {15, 40}, "courses": {25, 60},
		"students": {150, 300}, "enrollments": {300, 900},
	} {
		n := count(t, ex, "SELECT COUNT(*) FROM "+table)
		assert.GreaterOrEqual(t, n, bounds[0], "%s: rows", table)
		assert.LessOrEqual(t, n, bounds[1], "%s: rows", table)
		total += n
	}
	assert.GreaterOrEqual(t, total, int64(300), "rows in all")
	assert.LessOrEqual(t, total, int64(1500), "rows in all")
	// grade_points is on 0.00–4.00 or NULL, and NULL exactly when the
	// course is not completed.
	assert.Zero(t, count(t, ex, "SELECT COUNT(*) FROM enrollments WHERE grade_points < 0 OR grade_points > 4"), "grades out of range")
	assert.Zero(t, count(t, ex, "SELECT COUNT(*) FROM enrollments WHERE (grade_points IS NULL) <> (status <> 'completed')"), "grades inconsistent with status")
	for name, q := range map[string]string{
		"NULL grades (in progress)":   "SELECT COUNT(*) FROM enrollments WHERE grade_points IS NULL AND status = 'enrolled'",
		"NULL grades (withdrawn)":     "SELECT COUNT(*) FROM enrollments WHERE grade_points IS NULL AND status = 'withdrawn'",
		"a title with an apostrophe":  "SELECT COUNT(*) FROM courses WHERE title = 'Children''s Literature'",
		"a surname with apostrophe":   "SELECT COUNT(*) FROM students WHERE last_name LIKE '%''%'",
		"students in no course":       "SELECT COUNT(*) FROM students s WHERE NOT EXISTS (SELECT 1 FROM enrollments e WHERE e.student_id = s.student_id)",
		"instructors with 3 courses":  "SELECT COUNT(*) FROM (SELECT instructor_id FROM courses GROUP BY instructor_id HAVING COUNT(*) >= 3)",
		"instructors with no course":  "SELECT COUNT(*) FROM instructors i WHERE NOT EXISTS (SELECT 1 FROM courses c WHERE c.instructor_id = i.instructor_id)",
		"undeclared majors":           "SELECT COUNT(*) FROM students WHERE major_department_id IS NULL",
		"an F":                        "SELECT COUNT(*) FROM enrollments WHERE grade_points = 0",
		"a straight A":                "SELECT COUNT(*) FROM enrollments WHERE grade_points = 4",
		"a retaken course after drop": "SELECT COUNT(*) FROM enrollments WHERE status = 'withdrawn'",
	} {
		assert.NotZero(t, count(t, ex, q), "no %s", name)
	}
	// Foreign keys hold (Create checks them; this reads them back).
	assert.Zero(t, count(t, ex, `SELECT COUNT(*) FROM enrollments e LEFT JOIN students s USING (student_id)
		LEFT JOIN courses c USING (course_id) WHERE s.student_id IS NULL OR c.course_id IS NULL`), "dangling enrollments")
	// The executor keeps the demo read-only like any database.
	res, err := ex.Execute(context.Background(), text2sql.ExecuteRequest{SQL: "DELETE FROM enrollments"})
	if assert.NoError(t, err, "DELETE") && assert.NotNil(t, res.Error, "DELETE: %v", res) {
		assert.ErrorIs(t, res.Error, text2sql.ErrRefused, "DELETE")
	}
}

func TestKnowledgeValidatesAndExamplesRun(t *testing.T) {
	ctx := context.Background()
	_, ex := demotest.Open(t)
	b, err := demo.Knowledge()
	require.NoError(t, err)
	require.NoError(t, b.Validate(ctx, ex.Schema(), ex))
	require.GreaterOrEqual(t, len(b.Examples), 5, "examples")
	for _, e := range b.Examples {
		res, err := ex.Execute(ctx, text2sql.ExecuteRequest{SQL: e.SQL})
		require.NoError(t, err)
		if !assert.Nil(t, res.Error, e.ID) {
			continue
		}
		assert.NotZero(t, res.RowCount, "%s: no rows", e.ID)
	}
	// Spot checks of the verified answers.
	rows := query(t, ex, exampleSQL(t, b, "course-instructor"))
	if assert.Len(t, rows, 1, "course-instructor: %v", rows) {
		assert.Equal(t, "Adeyemi", rows[0][1], "course-instructor: %v", rows)
	}
	rows = query(t, ex, exampleSQL(t, b, "students-per-course"))
	assert.Equal(t, 36, len(rows), "students-per-course: rows")
	unenrolled := query(t, ex, exampleSQL(t, b, "students-without-courses"))
	n := count(t, ex, "SELECT COUNT(*) FROM students s WHERE NOT EXISTS (SELECT 1 FROM enrollments e WHERE e.student_id = s.student_id)")
	assert.GreaterOrEqual(t, int64(len(unenrolled)), n, "students-without-courses: rows, against those never enrolled")
	// Above the average student: some students, not all.
	above := query(t, ex, exampleSQL(t, b, "above-average-students"))
	graded := count(t, ex, "SELECT COUNT(DISTINCT student_id) FROM enrollments WHERE grade_points IS NOT NULL")
	assert.NotEmpty(t, above, "above-average-students")
	assert.Less(t, int64(len(above)), graded, "above-average-students: of %d graded students", graded)
	// Nothing in the base trips the guard's re-check before a prompt.
	for _, e := range b.Examples {
		assert.NoError(t, ex.Check(ctx, e.SQL), e.ID)
	}
}

func exampleSQL(t *testing.T, b *knowledge.Base, id string) string {
	t.Helper()
	for _, e := range b.Examples {
		if e.ID == id {
			return e.SQL
		}
	}
	require.FailNow(t, "no example", "%q", id)
	return ""
}

// "How many students take each class?" must reach enrollments: courses is
// called "class", and a verified example about students per course reads
// both enrollments and courses, so its tables are linked.
func TestKnowledgeLinksClassQuestion(t *testing.T) {
	_, ex := demotest.Open(t)
	b, err := demo.Knowledge()
	require.NoError(t, err)
	docs := b.Documents(ex.Schema())
	byID := map[string]knowledge.Document{}
	kinds := map[text2sql.ItemKind]int{}
	for _, d := range docs {
		byID[d.ID] = d
		kinds[d.Kind]++
	}
	assert.Equal(t, [4]int{5, len(b.Examples), len(b.Rules), len(b.Columns)},
		[4]int{kinds[text2sql.ItemTable], kinds[text2sql.ItemExample], kinds[text2sql.ItemRule], kinds[text2sql.ItemColumn]},
		"documents per kind (table, example, rule, column): %v", kinds)
	ex1 := byID["example:students-per-course"]
	assert.Equal(t, "How many students are enrolled in each course?", ex1.Text, "example: %+v", ex1)
	assert.Equal(t, []string{"courses", "enrollments"}, ex1.Tables, "example: %+v", ex1)
	for id, words := range map[string][]string{
		"table:courses":                   {"class", "enrollments.course_id = courses.course_id", "How many students take each class?"},
		"table:students":                  {"pupil", "learner"},
		"table:instructors":               {"professor", "teacher"},
		"table:enrollments":               {"References: students (by student_id), courses (by course_id)"},
		"column:enrollments.grade_points": {"0.00 to 4.00", "AVG(grade_points)"},
		"rule:above-average-student":      {"scalar subquery"},
	} {
		d, ok := byID[id]
		if !assert.True(t, ok, "no document %s", id) {
			continue
		}
		for _, w := range words {
			assert.Contains(t, d.Text, w, "%s lacks %q", id, w)
		}
	}
}

func TestCreateRefusesToOverwrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.sqlite")
	require.NoError(t, os.WriteFile(path, []byte("precious"), 0o644))
	assert.ErrorIs(t, demo.Create(path), fs.ErrExist)
	data, _ := os.ReadFile(path)
	assert.Equal(t, "precious", string(data), "file overwritten")
	assert.Error(t, demo.Create(filepath.Join(t.TempDir(), "no", "such", "dir.sqlite")), "missing directory accepted")
	// No temporary files are left behind.
	entries, _ := os.ReadDir(filepath.Dir(path))
	assert.Len(t, entries, 1, "left behind: %v", entries)
}

func TestEnsure(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	var (
		wg    sync.WaitGroup
		paths [4]string
		errs  [4]error
	)
	for i := range paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			paths[i], errs[i] = demo.Ensure(dir)
		}()
	}
	wg.Wait()
	for i := range paths {
		require.NoError(t, errs[i], "Ensure")
		require.Equal(t, demo.Path(dir), paths[i], "Ensure")
	}
	assert.True(t, strings.HasPrefix(filepath.Base(paths[0]), "demo-registrar-"), "path %s", paths[0])
	st, err := os.Stat(paths[0])
	require.NoError(t, err)
	again, err := demo.Ensure(dir)
	require.NoError(t, err)
	require.Equal(t, paths[0], again)
	st2, _ := os.Stat(again)
	assert.True(t, st2.ModTime().Equal(st.ModTime()), "the database was rebuilt")
	entries, _ := os.ReadDir(dir)
	assert.Len(t, entries, 1, "cache holds %v", entries)
	db, err := sql.Open("sqlite3", demo.DSN(again, "mode=ro"))
	require.NoError(t, err)
	defer db.Close()
	var n int
	if assert.NoError(t, db.QueryRow("SELECT COUNT(*) FROM students").Scan(&n), "students") {
		assert.Equal(t, 200, n, "students")
	}
}

func TestDSN(t *testing.T) {
	assert.Equal(t, "file:/tmp/a%3fb%23c%25d.sqlite?mode=ro&_foreign_keys=1", demo.DSN("/tmp/a?b#c%d.sqlite", "mode=ro", "_foreign_keys=1"), "DSN")
	dir := filepath.Join(t.TempDir(), "we?ird#dir")
	require.NoError(t, os.Mkdir(dir, 0o755))
	path := filepath.Join(dir, "demo.sqlite")
	require.NoError(t, demo.Create(path))
	_, err := os.Stat(path)
	require.NoError(t, err)
}

// The committed SQL is what the generator writes.
func TestGeneratorReproducible(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the generator with the go command")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not found")
	}
	out, err := exec.Command(gobin, "run", "./internal/gen").Output()
	require.NoError(t, err)
	committed, err := os.ReadFile("registrar.sql")
	require.NoError(t, err)
	assert.True(t, bytes.Equal(out, committed), "registrar.sql differs from the generator's output: run go generate ./demo")
}

// Values are collected through the guarded, read-only handle: categorical
// columns only, never e-mails or other high-cardinality text.
func TestCollectValuesOnDemo(t *testing.T) {
	_, ex := demotest.Open(t)
	lists, err := knowledge.CollectValues(context.Background(), ex.DB(), ex.Schema(), knowledge.ValueOptions{})
	require.NoError(t, err)
	got := map[string][]string{}
	for _, l := range lists {
		got[l.Table+"."+l.Column] = l.Values
	}
	assert.Equal(t, []string{"completed", "enrolled", "withdrawn"}, got["enrollments.status"], "values")
	assert.Equal(t, []string{"Fall 2024", "Fall 2025", "Spring 2025"}, got["enrollments.term"], "values")
	assert.Contains(t, got["courses.title"], "Children's Literature", "values")
	assert.Len(t, got["departments.name"], 6, "values")
	assert.Len(t, got["instructors.title"], 4, "values")
	for _, col := range []string{"students.email", "instructors.email", "students.last_name"} {
		assert.NotContains(t, got, col, "%s collected", col)
	}
	b, err := demo.Knowledge()
	require.NoError(t, err)
	for _, l := range lists {
		require.NoError(t, b.AddValues(l))
	}
	require.NoError(t, b.Validate(context.Background(), ex.Schema(), ex))
}
