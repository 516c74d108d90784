package chart_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/chart"
	"github.com/text2sql-go/text2sql/internal/demotest"
)

// run executes sql on the demo database through the guarded executor.
func run(t *testing.T, sql string) *text2sql.Result {
	t.Helper()
	_, ex := demotest.Open(t)
	res, err := ex.Execute(context.Background(), text2sql.ExecuteRequest{SQL: sql})
	require.NoError(t, err)
	require.Nil(t, res.Error, "demo query %q", sql)
	return res
}

// TestShapesOnDemo charts the demo's results by their shape: the mark, the
// axes' types and titles, and no chart where a table says as much.
func TestShapesOnDemo(t *testing.T) {
	cases := map[string]struct {
		sql        string
		mark       string // "" for no chart
		x, y, colr string // field types
	}{
		"category and count": {
			sql:  "SELECT d.name, COUNT(*) AS courses FROM courses c JOIN departments d USING (department_id) GROUP BY d.name ORDER BY courses DESC",
			mark: "bar", x: "nominal", y: "quantitative"},
		"year and count": {
			sql:  "SELECT entry_year, COUNT(*) AS students FROM students GROUP BY entry_year ORDER BY entry_year",
			mark: "line", x: "ordinal", y: "quantitative"},
		"two numbers": {
			sql:  "SELECT credits, AVG(grade_points) FROM enrollments JOIN courses USING (course_id) WHERE grade_points IS NOT NULL GROUP BY course_id",
			mark: "point", x: "quantitative", y: "quantitative"},
		"two categories and a count": {
			sql:  "SELECT term, status, COUNT(*) AS n FROM enrollments GROUP BY term, status ORDER BY term, status",
			mark: "bar", x: "nominal", y: "quantitative", colr: "nominal"},
		"category and two measures": {
			sql:  "SELECT title, COUNT(*) AS instructors, MIN(hire_year) AS first_hired FROM instructors GROUP BY title ORDER BY title",
			mark: "bar", x: "nominal", y: "quantitative", colr: "nominal"},
		"code, title and count": {
			sql:  "SELECT c.code, c.title, COUNT(*) AS n FROM courses c JOIN enrollments e USING (course_id) GROUP BY c.course_id ORDER BY n DESC",
			mark: "bar", x: "nominal", y: "quantitative"},
		"single value":      {sql: "SELECT COUNT(*) FROM students"},
		"single row":        {sql: "SELECT COUNT(*), AVG(credits) FROM courses"},
		"one column":        {sql: "SELECT name FROM departments"},
		"wide table":        {sql: "SELECT * FROM instructors"},
		"text only":         {sql: "SELECT first_name, last_name FROM students"},
		"too many bars":     {sql: "SELECT first_name || ' ' || last_name, student_id FROM students"},
		"a number and text": {sql: "SELECT student_id, email FROM students"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			res := run(t, c.sql)
			s := chart.For(res, chart.Options{})
			if c.mark == "" {
				assert.Nil(t, s)
				return
			}
			require.NotNil(t, s)
			assert.Equal(t, chart.SchemaURL, s.Schema)
			assert.Equal(t, c.mark, s.Mark.Type)
			assert.Equal(t, c.x, s.Encoding.X.Type)
			assert.Equal(t, c.y, s.Encoding.Y.Type)
			if c.colr == "" {
				assert.Nil(t, s.Encoding.Color)
			} else {
				require.NotNil(t, s.Encoding.Color)
				assert.Equal(t, c.colr, s.Encoding.Color.Type)
			}
			assert.Len(t, s.Data.Values, res.RowCount)
			if name == "code, title and count" {
				require.Len(t, s.Encoding.Tooltip, 3, "the title, another name of the code, is in the tooltip")
				assert.Equal(t, "title", s.Encoding.Tooltip[1].Field)
			}
			if s.Transform == nil {
				assert.Equal(t, res.Columns[0], s.Encoding.X.Title)
			}
		})
	}
}

// The data is inline, keyed by field, the result's order kept on a
// category axis (sort null), and the JSON is what Vega-Lite reads.
func TestBarJSON(t *testing.T) {
	res := run(t, "SELECT status, COUNT(*) AS n FROM enrollments GROUP BY status ORDER BY n DESC")
	s := chart.For(res, chart.Options{})
	require.NotNil(t, s)
	b, err := json.Marshal(s)
	require.NoError(t, err)
	var got map[string]any
	require.NoError(t, json.Unmarshal(b, &got))
	enc := got["encoding"].(map[string]any)
	x := enc["x"].(map[string]any)
	assert.Contains(t, x, "sort")
	assert.Nil(t, x["sort"], "the SQL's ORDER BY is kept")
	assert.Equal(t, "status", x["field"])
	values := got["data"].(map[string]any)["values"].([]any)
	require.Len(t, values, res.RowCount)
	first := values[0].(map[string]any)
	assert.Equal(t, res.Rows[0][0], first["status"])
	assert.EqualValues(t, res.Rows[0][1], first["n"])
	assert.Equal(t, map[string]any{"type": "bar", "tooltip": true}, got["mark"])
}

// Column names Vega-Lite would read as paths, and repeated names, get
// keys of their own; titles keep the names.
func TestFieldNames(t *testing.T) {
	res := &text2sql.Result{Columns: []string{"d.name", "COUNT(*)", "COUNT(*)"}, Rows: [][]any{{"a", int64(1), int64(2)}, {"b", int64(3), int64(4)}}}
	s := chart.For(res, chart.Options{})
	require.NotNil(t, s)
	require.Len(t, s.Transform, 1)
	assert.Equal(t, []string{"COUNT(*)", "COUNT(*) (2)"}, s.Transform[0].Fold)
	assert.Equal(t, "d_name", s.Encoding.X.Field)
	assert.Equal(t, "d.name", s.Encoding.X.Title)
	assert.NotNil(t, s.Encoding.XOffset, "bars of two measures stand side by side")
	assert.Equal(t, map[string]any{"d_name": "a", "COUNT(*)": float64(1), "COUNT(*) (2)": float64(2)}, s.Data.Values[0])

	// Names every JavaScript object has would read the prototype.
	res = &text2sql.Result{Columns: []string{"__proto__", "constructor"}, Rows: [][]any{{"a", int64(1)}, {"b", int64(3)}}}
	s = chart.For(res, chart.Options{})
	require.NotNil(t, s)
	assert.Equal(t, "__proto__ (column)", s.Encoding.X.Field)
	assert.Equal(t, "__proto__ (column)", s.Encoding.X.Title, "a tooltip key too")
	assert.Equal(t, "constructor (column)", s.Encoding.Y.Field)
	assert.Equal(t, map[string]any{"__proto__ (column)": "a", "constructor (column)": float64(1)}, s.Data.Values[0])
}

// Dates as the engines print them, and time.Time values, make a line.
func TestDates(t *testing.T) {
	for name, day := range map[string]func(int) any{
		"iso date":  func(i int) any { return time.Date(2024, 1, 1+i, 0, 0, 0, 0, time.UTC).Format("2006-01-02") },
		"timestamp": func(i int) any { return time.Date(2024, 1, 1+i, 9, 30, 0, 0, time.UTC).Format("2006-01-02 15:04:05") },
		"time.Time": func(i int) any { return time.Date(2024, 1, 1+i, 0, 0, 0, 0, time.UTC) },
	} {
		t.Run(name, func(t *testing.T) {
			res := &text2sql.Result{Columns: []string{"day", "orders", "revenue"}}
			for i := range 5 {
				res.Rows = append(res.Rows, []any{day(i), int64(i), float64(i) * 1.5})
			}
			s := chart.For(res, chart.Options{})
			require.NotNil(t, s)
			assert.Equal(t, "line", s.Mark.Type)
			assert.Equal(t, "temporal", s.Encoding.X.Type)
			assert.Equal(t, []string{"orders", "revenue"}, s.Transform[0].Fold)
			assert.Nil(t, s.Encoding.XOffset)
			if name == "time.Time" {
				_, err := time.Parse(time.RFC3339Nano, s.Data.Values[0]["day"].(string))
				assert.NoError(t, err, "a time.Time is sent as RFC 3339")
			}
		})
	}
}

// Bounds: rows past MaxRows are left out and said so; NULLs, NaN and a
// refused result are handled without a chart or a panic.
func TestBounds(t *testing.T) {
	res := &text2sql.Result{Columns: []string{"x", "y"}}
	for i := range 30 {
		res.Rows = append(res.Rows, []any{float64(i), float64(i * i)})
	}
	s := chart.For(res, chart.Options{MaxRows: 10})
	require.NotNil(t, s)
	assert.Len(t, s.Data.Values, 10)
	assert.Equal(t, "the first 10 of 30 rows", s.Description)

	assert.Nil(t, chart.For(nil, chart.Options{}))
	assert.Nil(t, chart.For(&text2sql.Result{Columns: []string{"a", "b"}, Error: &text2sql.SQLError{Kind: text2sql.KindNotReadOnly}}, chart.Options{}))
	assert.Nil(t, chart.For(&text2sql.Result{Columns: []string{"a", "b"}, Rows: [][]any{{nil, nil}, {nil, nil}}}, chart.Options{}), "only NULLs")
	nan := &text2sql.Result{Columns: []string{"a", "b"}, Rows: [][]any{{"x", 1.0}, {"y", 0.0}}}
	nan.Rows[1][1] = zero() / zero()
	s = chart.For(nan, chart.Options{})
	assert.Nil(t, s, "a NaN makes the column mixed: text and number, no chart")

	cats := &text2sql.Result{Columns: []string{"name", "n"}}
	for i := range 60 {
		cats.Rows = append(cats.Rows, []any{string(rune('a'+i%26)) + string(rune('a'+i/26)), int64(i)})
	}
	assert.Nil(t, chart.For(cats, chart.Options{}), "60 bars")
	assert.NotNil(t, chart.For(cats, chart.Options{MaxCategories: 60}))
}

func zero() float64 { return 0 }

// A column named like a tooltip directive ("image": load the value as an
// image URL) gets another title; a ragged result gets no chart.
func TestTooltipDirectives(t *testing.T) {
	res := &text2sql.Result{Columns: []string{"name", "image"}, Rows: [][]any{{"a", int64(1)}, {"b", int64(2)}}}
	s := chart.For(res, chart.Options{})
	require.NotNil(t, s)
	assert.Equal(t, "image (column)", s.Encoding.Y.Title)
	assert.Nil(t, chart.For(&text2sql.Result{Columns: []string{"a", "b"}, Rows: [][]any{{"x"}, {"y", int64(1)}}}, chart.Options{}))
}

// Page is one HTML file with the scripts inline and the spec's data
// escaped, so a value cannot close the script element.
func TestPage(t *testing.T) {
	res := &text2sql.Result{Columns: []string{"name", "n"}, Rows: [][]any{{"</script><script>alert(1)</script>", int64(1)}, {"b", int64(2)}}}
	s := chart.For(res, chart.Options{})
	require.NotNil(t, s)
	page, err := chart.Page(s, "Counts <by name>", "SELECT name, n FROM t")
	require.NoError(t, err)
	html := string(page)
	// html is a megabyte: check with booleans, so a failure does not print it.
	assert.Equal(t, len(chart.Scripts)+1, strings.Count(html, "<script>"), "the vendored scripts and the call, inline")
	assert.False(t, strings.Contains(html, "<script>alert(1)"), "a value closed the script element")
	assert.True(t, strings.Contains(html, "<title>Counts &lt;by name&gt;</title>"), "the title is escaped")
	assert.True(t, strings.Contains(html, "vega.expressionInterpreter"))
	assert.True(t, strings.Contains(html, `content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:"`), "no request leaves the page")
	assert.False(t, regexp.MustCompile(`<script[^>]*\ssrc`).MatchString(html), "no script is loaded from elsewhere")
	_, err = chart.Page(nil, "", "")
	assert.Error(t, err)
}
