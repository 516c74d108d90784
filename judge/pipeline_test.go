package judge_test

import (
	"context"
	"testing"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/demotest"
	"github.com/text2sql-go/text2sql/lint"
	"github.com/text2sql-go/text2sql/schema"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The stages wired into the pipeline on the demo database: the plan is
// made once; a TOP is caught by the checker before execution and fixed;
// the judge rejects the SQL with a hint, the redo keeps retrieval and
// plan, and the judge accepts. Exactly 1 plan, 3 generate and 2 judge
// calls.
func TestStagesInPipeline(t *testing.T) {
	_, ex := demotest.Open(t)
	db := ex.Schema()
	question := "Which course has the best average grade?"
	retrievals := 0
	ret := text2sql.RetrieverFunc(func(ctx context.Context, req text2sql.RetrieveRequest) (*text2sql.Retrieval, error) {
		retrievals++
		tables := []*schema.Table{db.Lookup("courses"), db.Lookup("enrollments")}
		return &text2sql.Retrieval{Question: req.Question, Dialect: text2sql.DialectSQLite, Schema: db.DDL(tables),
			Tables: []text2sql.TableRef{{Name: "courses", Reason: "retrieved", Score: 0.03}, {Name: "enrollments", Reason: "retrieved", Score: 0.02}}}, nil
	})
	s := &demotest.Stages{Replies: map[string][]string{
		"plan": {`{"database": "registrar", "objects": [{"kind": "table", "name": "courses", "value": ""}, {"kind": "column", "name": "enrollments.grade_points", "value": ""}],
		  "instruction": ["Join enrollments to courses on course_id.", "Average grade_points per course.", "Keep the best."], "output": "title"}`},
		"sql": {
			`{"answerable": true, "sql": "SELECT TOP 1 c.title FROM courses c JOIN enrollments e ON e.course_id = c.course_id GROUP BY c.title ORDER BY AVG(e.grade_points) DESC", "explanation": "x"}`,
			`{"answerable": true, "sql": "SELECT c.title FROM courses c JOIN enrollments e ON e.course_id = c.course_id GROUP BY c.title ORDER BY AVG(e.grade_points) LIMIT 1", "explanation": "x"}`,
			`{"answerable": true, "sql": "SELECT c.title FROM courses c JOIN enrollments e ON e.course_id = c.course_id GROUP BY c.title ORDER BY AVG(e.grade_points) DESC LIMIT 1", "explanation": "x"}`,
		},
		"judge": {
			`{"ok": false, "stage": "sql", "reason": "ascending order returns the worst course", "hints": ["sort DESC"], "terms": [], "tables": []}`,
			`{"ok": true, "stage": "", "reason": "the best course", "hints": [], "terms": [], "tables": []}`,
		},
	}}
	cfg := text2sql.Config{Retriever: ret, Executor: lint.New(db, text2sql.DialectSQLite).Executor(ex), MaxRepairs: 3}
	s.Wire(t, db, &cfg)
	p, err := text2sql.New(cfg)
	require.NoError(t, err)
	ans, err := p.Ask(context.Background(), question)
	require.NoError(t, err)
	require.Equal(t, text2sql.StatusVerified, ans.Status, "status; SQL %q", ans.SQL)
	require.Len(t, ans.Attempts, 3, "attempts; SQL %q", ans.SQL)
	require.Contains(t, ans.SQL, "DESC LIMIT 1")
	assert.Equal(t, [4]int{1, 3, 2, 1}, [4]int{s.Calls("plan"), s.Calls("sql"), s.Calls("judge"), retrievals},
		"plan, sql and judge calls, retrievals; a call of no known stage fails the test")
	first := ans.Attempts[0].Result
	if assert.NotNil(t, first, "attempt 1 result") && assert.NotNil(t, first.Error, "attempt 1 result: %+v", first) {
		assert.Equal(t, text2sql.KindDialect, first.Error.Kind, "attempt 1 result: %+v", first)
		assert.Contains(t, first.Error.Message, "TOP", "attempt 1 result: %+v", first)
	}
	assert.Contains(t, s.Prompts("sql")[1], "TOP is not SQLite syntax", "the generator did not see the dialect failure")
	assert.Contains(t, s.Prompts("sql")[0], "Translate this plan", "the generator did not see the plan")
	assert.Contains(t, s.Prompts("judge")[0], "showing 1 of 1 rows", "judge prompts lack the sample")
	assert.Contains(t, s.Prompts("judge")[1], "ascending order returns the worst course", "judge prompts lack the earlier review")
	if assert.NotNil(t, ans.Plan, "plan") {
		assert.Equal(t, "enrollments.grade_points", ans.Plan.Objects[1].Name, "plan %+v", ans.Plan)
		assert.Len(t, ans.Plan.Calls, 1, "plan %+v", ans.Plan)
	}
	assert.Equal(t, 6, ans.Trace.ModelCalls, "trace model calls")
}
