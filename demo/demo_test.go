package demo_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/demo"
	"github.com/text2sql-go/text2sql/executor/sqlite"
	"github.com/text2sql-go/text2sql/knowledge"
)

// demoDB creates the demo database once per test and opens it through the
// guarded executor.
func demoDB(t *testing.T) (string, *sqlite.Executor) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "registrar.sqlite")
	if err := demo.Create(path); err != nil {
		t.Fatal(err)
	}
	ex, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ex.Close() })
	return path, ex
}

func query(t *testing.T, ex *sqlite.Executor, q string) [][]any {
	t.Helper()
	res, err := ex.Execute(context.Background(), text2sql.ExecuteRequest{SQL: q})
	if err != nil {
		t.Fatal(err)
	}
	if res.Error != nil {
		t.Fatalf("%s: %v", q, res.Error)
	}
	return res.Rows
}

func count(t *testing.T, ex *sqlite.Executor, q string) int64 {
	t.Helper()
	rows := query(t, ex, q)
	n, ok := rows[0][0].(int64)
	if !ok {
		t.Fatalf("%s: %T %v", q, rows[0][0], rows[0][0])
	}
	return n
}

func TestDatabase(t *testing.T) {
	_, ex := demoDB(t)
	sch := ex.Schema()
	var names []string
	for _, tb := range sch.Tables {
		names = append(names, tb.Name)
	}
	if want := []string{"courses", "departments", "enrollments", "instructors", "students"}; !slices.Equal(names, want) {
		t.Fatalf("tables %q, want %q", names, want)
	}
	// A few hundred rows, with realistic proportions.
	total := int64(0)
	for table, bounds := range map[string][2]int64{
		"departments": {4, 10}, "instructors": {15, 40}, "courses": {25, 60},
		"students": {150, 300}, "enrollments": {300, 900},
	} {
		n := count(t, ex, "SELECT COUNT(*) FROM "+table)
		if n < bounds[0] || n > bounds[1] {
			t.Errorf("%s: %d rows, want %d–%d", table, n, bounds[0], bounds[1])
		}
		total += n
	}
	if total < 300 || total > 1500 {
		t.Errorf("%d rows in all", total)
	}
	// grade_points is on 0.00–4.00 or NULL, and NULL exactly when the
	// course is not completed.
	if n := count(t, ex, "SELECT COUNT(*) FROM enrollments WHERE grade_points < 0 OR grade_points > 4"); n != 0 {
		t.Errorf("%d grades out of range", n)
	}
	if n := count(t, ex, "SELECT COUNT(*) FROM enrollments WHERE (grade_points IS NULL) <> (status <> 'completed')"); n != 0 {
		t.Errorf("%d grades inconsistent with status", n)
	}
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
		if n := count(t, ex, q); n == 0 {
			t.Errorf("no %s", name)
		}
	}
	// Foreign keys hold (Create checks them; this reads them back).
	if n := count(t, ex, `SELECT COUNT(*) FROM enrollments e LEFT JOIN students s USING (student_id)
		LEFT JOIN courses c USING (course_id) WHERE s.student_id IS NULL OR c.course_id IS NULL`); n != 0 {
		t.Errorf("%d dangling enrollments", n)
	}
	// The executor keeps the demo read-only like any database.
	res, err := ex.Execute(context.Background(), text2sql.ExecuteRequest{SQL: "DELETE FROM enrollments"})
	if err != nil || res.Error == nil || !errors.Is(res.Error, text2sql.ErrRefused) {
		t.Errorf("DELETE: %v %v", res, err)
	}
}

func TestKnowledgeValidatesAndExamplesRun(t *testing.T) {
	ctx := context.Background()
	_, ex := demoDB(t)
	b, err := demo.Knowledge()
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Validate(ctx, ex.Schema(), ex); err != nil {
		t.Fatal(err)
	}
	if len(b.Examples) < 5 {
		t.Fatalf("%d examples", len(b.Examples))
	}
	for _, e := range b.Examples {
		res, err := ex.Execute(ctx, text2sql.ExecuteRequest{SQL: e.SQL})
		if err != nil {
			t.Fatal(err)
		}
		if res.Error != nil {
			t.Errorf("%s: %v", e.ID, res.Error)
			continue
		}
		if res.RowCount == 0 {
			t.Errorf("%s: no rows", e.ID)
		}
	}
	// Spot checks of the verified answers.
	rows := query(t, ex, exampleSQL(t, b, "course-instructor"))
	if len(rows) != 1 || rows[0][1] != "Adeyemi" {
		t.Errorf("course-instructor: %v", rows)
	}
	rows = query(t, ex, exampleSQL(t, b, "students-per-course"))
	if len(rows) != 36 {
		t.Errorf("students-per-course: %d rows", len(rows))
	}
	unenrolled := query(t, ex, exampleSQL(t, b, "students-without-courses"))
	if n := count(t, ex, "SELECT COUNT(*) FROM students s WHERE NOT EXISTS (SELECT 1 FROM enrollments e WHERE e.student_id = s.student_id)"); int64(len(unenrolled)) < n {
		t.Errorf("students-without-courses: %d rows, %d never enrolled", len(unenrolled), n)
	}
	// Above the average student: some students, not all.
	above := query(t, ex, exampleSQL(t, b, "above-average-students"))
	graded := count(t, ex, "SELECT COUNT(DISTINCT student_id) FROM enrollments WHERE grade_points IS NOT NULL")
	if len(above) == 0 || int64(len(above)) >= graded {
		t.Errorf("above-average-students: %d of %d graded students", len(above), graded)
	}
	// Nothing in the base trips the guard's re-check before a prompt.
	for _, e := range b.Examples {
		if err := ex.Check(ctx, e.SQL); err != nil {
			t.Errorf("%s: %v", e.ID, err)
		}
	}
}

func exampleSQL(t *testing.T, b *knowledge.Base, id string) string {
	t.Helper()
	for _, e := range b.Examples {
		if e.ID == id {
			return e.SQL
		}
	}
	t.Fatalf("no example %q", id)
	return ""
}

// "How many students take each class?" must reach enrollments: courses is
// called "class", and a verified example about students per course reads
// both enrollments and courses, so its tables are linked.
func TestKnowledgeLinksClassQuestion(t *testing.T) {
	_, ex := demoDB(t)
	b, err := demo.Knowledge()
	if err != nil {
		t.Fatal(err)
	}
	docs := b.Documents(ex.Schema())
	byID := map[string]knowledge.Document{}
	kinds := map[text2sql.Kind]int{}
	for _, d := range docs {
		byID[d.ID] = d
		kinds[d.Kind]++
	}
	if kinds[text2sql.KindTable] != 5 || kinds[text2sql.KindExample] != len(b.Examples) || kinds[text2sql.KindRule] != len(b.Rules) || kinds[text2sql.KindColumn] != len(b.Columns) {
		t.Errorf("documents per kind: %v", kinds)
	}
	ex1 := byID["example:students-per-course"]
	if ex1.Text != "How many students are enrolled in each course?" || !slices.Equal(ex1.Tables, []string{"courses", "enrollments"}) {
		t.Errorf("example: %+v", ex1)
	}
	for id, words := range map[string][]string{
		"table:courses":                   {"class", "enrollments.course_id = courses.course_id", "How many students take each class?"},
		"table:students":                  {"pupil", "learner"},
		"table:instructors":               {"professor", "teacher"},
		"table:enrollments":               {"References: students (by student_id), courses (by course_id)"},
		"column:enrollments.grade_points": {"0.00 to 4.00", "AVG(grade_points)"},
		"rule:above-average-student":      {"scalar subquery"},
	} {
		d, ok := byID[id]
		if !ok {
			t.Errorf("no document %s", id)
			continue
		}
		for _, w := range words {
			if !strings.Contains(d.Text, w) {
				t.Errorf("%s lacks %q:\n%s", id, w, d.Text)
			}
		}
	}
}

func TestCreateRefusesToOverwrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.sqlite")
	if err := os.WriteFile(path, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := demo.Create(path); !errors.Is(err, fs.ErrExist) {
		t.Errorf("err = %v", err)
	}
	if data, _ := os.ReadFile(path); string(data) != "precious" {
		t.Error("file overwritten")
	}
	if err := demo.Create(filepath.Join(t.TempDir(), "no", "such", "dir.sqlite")); err == nil {
		t.Error("missing directory accepted")
	}
	// No temporary files are left behind.
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
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
		if errs[i] != nil || paths[i] != demo.Path(dir) {
			t.Fatalf("Ensure: %q %v", paths[i], errs[i])
		}
	}
	if !strings.HasPrefix(filepath.Base(paths[0]), "demo-registrar-") {
		t.Errorf("path %s", paths[0])
	}
	st, err := os.Stat(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	again, err := demo.Ensure(dir)
	if err != nil || again != paths[0] {
		t.Fatal(again, err)
	}
	if st2, _ := os.Stat(again); !st2.ModTime().Equal(st.ModTime()) {
		t.Error("the database was rebuilt")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("cache holds %v", entries)
	}
	db, err := sql.Open("sqlite3", demo.DSN(again, "mode=ro"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM students").Scan(&n); err != nil || n != 200 {
		t.Errorf("students: %d %v", n, err)
	}
}

func TestDSN(t *testing.T) {
	if got := demo.DSN("/tmp/a?b#c%d.sqlite", "mode=ro", "_foreign_keys=1"); got != "file:/tmp/a%3fb%23c%25d.sqlite?mode=ro&_foreign_keys=1" {
		t.Errorf("DSN = %q", got)
	}
	dir := filepath.Join(t.TempDir(), "we?ird#dir")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "demo.sqlite")
	if err := demo.Create(path); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
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
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, []byte(demo.SQL)) {
		t.Error("registrar.sql differs from the generator's output: run go generate ./demo")
	}
}

// Values are collected through the guarded, read-only handle: categorical
// columns only, never e-mails or other high-cardinality text.
func TestCollectValuesOnDemo(t *testing.T) {
	_, ex := demoDB(t)
	lists, err := knowledge.CollectValues(context.Background(), ex.DB(), ex.Schema(), knowledge.ValueOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, l := range lists {
		got[l.Table+"."+l.Column] = l.Values
	}
	if !slices.Equal(got["enrollments.status"], []string{"completed", "enrolled", "withdrawn"}) ||
		!slices.Equal(got["enrollments.term"], []string{"Fall 2024", "Fall 2025", "Spring 2025"}) ||
		!slices.Contains(got["courses.title"], "Children's Literature") ||
		len(got["departments.name"]) != 6 || len(got["instructors.title"]) != 4 {
		t.Errorf("values: %q", got)
	}
	for _, col := range []string{"students.email", "instructors.email", "students.last_name"} {
		if _, ok := got[col]; ok {
			t.Errorf("%s collected", col)
		}
	}
	b, err := demo.Knowledge()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lists {
		if err := b.AddValues(l); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Validate(context.Background(), ex.Schema(), ex); err != nil {
		t.Fatal(err)
	}
}
