package text2sql_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/demotest"
	"github.com/text2sql-go/text2sql/lint"
	"github.com/text2sql-go/text2sql/llm/llmtest"
)

const (
	planReply = `{"database": "registrar", "objects": [{"kind": "table", "name": "students", "value": ""}], "instruction": ["Count the rows of students."], "output": "one number"}`
	judgeOK   = `{"ok": true, "stage": "", "reason": "answers the question", "hints": [], "terms": [], "tables": []}`
)

func verdict(stage, reason string) string {
	return `{"ok": false, "stage": "` + stage + `", "reason": "` + reason + `", "hints": ["look again"], "terms": ["pupil"], "tables": ["students"]}`
}

// stagePipeline wires the real planner, generator, judge and checker to one
// scripted model, with a retriever that counts its calls.
func (s *demoStack) stagePipeline(t *testing.T, sc *demotest.Stages, cfg text2sql.Config) (*text2sql.Pipeline, *int) {
	t.Helper()
	db := s.executor.Schema()
	sc.Wire(t, db, &cfg)
	retrievals := new(int)
	cfg.Retriever = text2sql.RetrieverFunc(func(ctx context.Context, req text2sql.RetrieveRequest) (*text2sql.Retrieval, error) {
		*retrievals++
		return s.retriever.Retrieve(ctx, req)
	})
	cfg.Executor = s.executor
	cfg.Checker = lint.New(db, text2sql.DialectSQLite).WithProbe(s.executor)
	p, err := text2sql.New(cfg)
	require.NoError(t, err)
	return p, retrievals
}

func TestStagedRepair(t *testing.T) {
	const good = "SELECT count(*) FROM students"
	cases := []struct {
		name       string
		sql, judge []string
		// want: calls per stage, retrievals, status
		plan, gen, judges, retrievals int
		status                        text2sql.Status
	}{
		{name: "verified first time", sql: []string{reply(good)}, judge: []string{judgeOK},
			plan: 1, gen: 1, judges: 1, retrievals: 1, status: text2sql.StatusVerified},
		// The checker catches an unknown column before execution; one
		// repair fixes it, and no judge call is spent on the failure.
		{name: "check failure then fix", sql: []string{reply("SELECT count(nope) FROM students"), reply(good)}, judge: []string{judgeOK},
			plan: 1, gen: 2, judges: 1, retrievals: 1, status: text2sql.StatusVerified},
		// A SQL fault keeps retrieval and plan.
		{name: "sql fault", sql: []string{reply("SELECT count(*) FROM instructors"), reply(good)}, judge: []string{verdict("sql", "wrong table"), judgeOK},
			plan: 1, gen: 2, judges: 2, retrievals: 1, status: text2sql.StatusVerified},
		// A plan fault keeps the retrieval and redoes plan and SQL.
		{name: "plan fault", sql: []string{reply("SELECT count(*) FROM instructors"), reply(good)}, judge: []string{verdict("plan", "plans the wrong table"), judgeOK},
			plan: 2, gen: 2, judges: 2, retrievals: 1, status: text2sql.StatusVerified},
		// A retrieval fault redoes everything.
		{name: "retrieval fault", sql: []string{reply("SELECT count(*) FROM instructors"), reply(good)}, judge: []string{verdict("retrieval", "students table missing"), judgeOK},
			plan: 2, gen: 2, judges: 2, retrievals: 2, status: text2sql.StatusVerified},
		// A fix at the SQL stage that did not help escalates to the plan.
		{name: "escalation", sql: []string{reply("SELECT count(*) FROM instructors"), reply("SELECT count(*) FROM courses"), reply(good)},
			judge: []string{verdict("sql", "wrong table"), verdict("plan", "the SQL fix did not help: the plan is wrong"), judgeOK},
			plan:  2, gen: 3, judges: 3, retrievals: 1, status: text2sql.StatusVerified},
		// Repairs spent with the judge still rejecting: the best executed
		// attempt, unverified, with every attempt.
		{name: "budget exhausted", sql: []string{reply("SELECT count(*) FROM instructors"), reply("SELECT count(*) FROM courses"), reply("SELECT count(*) FROM departments")},
			judge: []string{verdict("sql", "wrong table")},
			plan:  1, gen: 3, judges: 3, retrievals: 1, status: text2sql.StatusUnverified},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newDemoStack(t)
			sc := &demotest.Stages{Replies: map[string][]string{"plan": {planReply}, "sql": c.sql, "judge": c.judge}}
			p, retrievals := s.stagePipeline(t, sc, text2sql.Config{MaxRepairs: 2})
			ans, err := p.Ask(context.Background(), "How many pupils are registered?")
			require.NoError(t, err)
			assert.Equal(t, c.status, ans.Status, "status %s, want %s", ans.Status, c.status)
			assert.Equal(t, c.plan, sc.Calls("plan"), "plan calls")
			assert.Equal(t, c.gen, sc.Calls("sql"), "sql calls")
			assert.Equal(t, c.judges, sc.Calls("judge"), "judge calls")
			assert.Equal(t, c.retrievals, *retrievals, "retrievals")
			assert.Equal(t, c.plan+c.gen+c.judges, ans.Trace.ModelCalls, "trace counts %d model calls", ans.Trace.ModelCalls)
			assert.Len(t, ans.Attempts, c.gen, "%d attempts, want %d", len(ans.Attempts), c.gen)
			assert.False(t, c.status == text2sql.StatusVerified && ans.SQL != good, "SQL %q", ans.SQL)
		})
	}
}

// Case C4 #25: TOP is named by the dialect check before execution and the
// repair gives LIMIT.
func TestDialectRepair(t *testing.T) {
	s := newDemoStack(t)
	m := llmtest.New(reply("SELECT TOP 5 last_name FROM students ORDER BY last_name"),
		reply("SELECT last_name FROM students ORDER BY last_name, student_id LIMIT 5"))
	p := s.pipeline(t, m, text2sql.Config{Checker: lint.New(s.executor.Schema(), text2sql.DialectSQLite)})
	ans, err := p.Ask(context.Background(), "List five student surnames alphabetically")
	require.NoError(t, err)
	first := ans.Attempts[0].Result.Error
	require.NotNil(t, first, "first attempt: %+v", first)
	require.Equal(t, text2sql.KindDialect, first.Kind, "first attempt: %+v", first)
	require.Contains(t, first.Message, "TOP", "first attempt: %+v", first)
	require.Equal(t, 2, m.CallCount(), "%d calls, %d rows", m.CallCount(), ans.Result.RowCount)
	require.Equal(t, 5, ans.Result.RowCount, "%d calls, %d rows", m.CallCount(), ans.Result.RowCount)
	for _, st := range ans.Trace.Steps {
		assert.False(t, st.Stage == text2sql.StageExecution && st.Attempt == 1, "the TOP query reached the database")
	}
}

// The model-call budget ends a run with nothing executed as failed.
func TestModelCallBudget(t *testing.T) {
	s := newDemoStack(t)
	m := llmtest.New(reply("SELECT nope FROM students"), reply("SELECT nope2 FROM students"), reply("SELECT nope3 FROM students"))
	ans, err := s.pipeline(t, m, text2sql.Config{MaxRepairs: 5, MaxModelCalls: 2}).Ask(context.Background(), "How many students?")
	require.ErrorIs(t, err, text2sql.ErrBudgetExhausted, "err %v, %d calls, status %s", err, m.CallCount(), ans.Status)
	require.Equal(t, 2, m.CallCount(), "err %v, %d calls, status %s", err, m.CallCount(), ans.Status)
	require.Equal(t, text2sql.StatusFailed, ans.Status, "err %v, %d calls, status %s", err, m.CallCount(), ans.Status)
}
