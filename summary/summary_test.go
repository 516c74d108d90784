package summary_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/demotest"
	"github.com/text2sql-go/text2sql/llm/llmtest"
	"github.com/text2sql-go/text2sql/summary"
)

// Questions on the demo database, answered by their SQL, in words.
func TestDeterministicOnDemo(t *testing.T) {
	_, ex := demotest.Open(t)
	run := func(sql string) *text2sql.Result {
		res, err := ex.Execute(context.Background(), text2sql.ExecuteRequest{SQL: sql})
		require.NoError(t, err)
		require.Nil(t, res.Error, sql)
		return res
	}
	count := func(sql string) int64 { return run(sql).Rows[0][0].(int64) }
	students := count("SELECT COUNT(*) FROM students")
	for _, c := range []struct{ q, sql, want string }{
		{"How many students are there?", "SELECT COUNT(*) FROM students", "There are " + itoa(students) + " students."},
		{"how many departments", "SELECT COUNT(*) FROM departments", "There are " + itoa(count("SELECT COUNT(*) FROM departments")) + " departments."},
		{"How many departments are in the Science Hall?", "SELECT COUNT(*) FROM departments WHERE building = 'Science Hall'",
			itoa(count("SELECT COUNT(*) FROM departments WHERE building = 'Science Hall'")) + " departments are in the Science Hall."},
		{"How many courses does the CS department offer?", "SELECT 1", "1 course."},
		{"How many students were admitted in 1900?", "SELECT COUNT(*) FROM students WHERE entry_year = 1900", "0 students were admitted in 1900."},
		{"What is the average grade?", "SELECT ROUND(AVG(grade_points), 2) AS average_grade FROM enrollments", ""},
		{"Which departments exist?", "SELECT name FROM departments ORDER BY name LIMIT 3", ""},
		{"Students per status", "SELECT status, COUNT(*) FROM enrollments GROUP BY status ORDER BY status", ""},
		{"Who is student 1?", "SELECT first_name, last_name FROM students WHERE student_id = 1", ""},
		{"Any student named Zzz?", "SELECT first_name FROM students WHERE first_name = 'Zzz'", "No rows match."},
		{"Everyone", "SELECT first_name FROM students", ""},
	} {
		res := run(c.sql)
		got := summary.Deterministic(c.q, res)
		switch {
		case c.want != "":
			assert.Equal(t, c.want, got, c.q)
		case len(res.Rows) > summary.MaxListed:
			assert.Empty(t, got, "%s: %d rows are the table's to show", c.q, len(res.Rows))
		default:
			// The words hold every value of the result.
			require.NotEmpty(t, got, c.q)
			for _, row := range res.Rows {
				for _, v := range row {
					assert.Contains(t, got, fmt.Sprint(v), "%s: %q", c.q, got)
				}
			}
		}
	}
	assert.Equal(t, "There is 1 student.", summary.Deterministic("How many students are there?", &text2sql.Result{Columns: []string{"n"}, Rows: [][]any{{int64(1)}}, RowCount: 1}))
	assert.Equal(t, "There is 1 category.", summary.Deterministic("How many categories?", &text2sql.Result{Columns: []string{"n"}, Rows: [][]any{{int64(1)}}, RowCount: 1}))
	assert.Equal(t, "", summary.Deterministic("q", nil))
	assert.Equal(t, "", summary.Deterministic("q", &text2sql.Result{Error: &text2sql.SQLError{Kind: text2sql.KindSyntax}}))
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// Rows reach the model only under AllowRows; without them the answer is
// the result's shape and no call is made; a model answer is one line.
func TestSummarizerRows(t *testing.T) {
	res := &text2sql.Result{Columns: []string{"name", "majors"}, RowCount: 8}
	for i := range 8 {
		res.Rows = append(res.Rows, []any{"Dept " + string(rune('A'+i)), int64(i)})
	}
	var prompts []string
	model := llmtest.Func(func(req text2sql.ModelRequest) (string, error) {
		prompts = append(prompts, req.Messages[0].Content)
		return `{"answer": "Dept H has the most majors\n(7)."}`, nil
	})
	ctx := context.Background()
	s, err := summary.New(model, summary.Options{}).Narrate(ctx, text2sql.NarrateRequest{Question: "Majors per department?", SQL: "SELECT …", Result: res})
	require.NoError(t, err)
	assert.Equal(t, "shape", s.Source)
	assert.Equal(t, "8 rows: name, majors.", s.Text)
	assert.Empty(t, prompts, "no rows, no call")

	s, err = summary.New(model, summary.Options{AllowRows: true}).Narrate(ctx, text2sql.NarrateRequest{Question: "Majors per department?", SQL: "SELECT …", Result: res})
	require.NoError(t, err)
	assert.Equal(t, "model", s.Source)
	assert.Equal(t, "Dept H has the most majors (7).", s.Text)
	require.Len(t, prompts, 1)
	assert.Contains(t, prompts[0], "Dept H")
	assert.Len(t, s.Calls, 1)

	bad := llmtest.New("I think it is fine").RepeatLast()
	_, err = summary.New(bad, summary.Options{AllowRows: true}).Narrate(ctx, text2sql.NarrateRequest{Question: "q", SQL: "SELECT 1", Result: res})
	var out *text2sql.OutputError
	assert.ErrorAs(t, err, &out)

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = summary.New(model, summary.Options{AllowRows: true}).Narrate(cancelled, text2sql.NarrateRequest{Question: "q", SQL: "SELECT 1", Result: res})
	assert.ErrorIs(t, err, context.Canceled)
}
