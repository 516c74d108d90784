package text2sql_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/demo"
	"github.com/text2sql-go/text2sql/executor/sqlite"
	"github.com/text2sql-go/text2sql/generator"
	"github.com/text2sql-go/text2sql/internal/demotest"
	"github.com/text2sql-go/text2sql/llm/llmtest"
	"github.com/text2sql-go/text2sql/retriever"
)

// demoStack is the default stack on a private copy of the demo database.
type demoStack struct {
	path      string
	executor  *sqlite.Executor
	retriever *retriever.Hybrid
}

func newDemoStack(t *testing.T) *demoStack {
	t.Helper()
	path, ex := demotest.Open(t)
	return &demoStack{path: path, executor: ex, retriever: demotest.Retriever(t, ex.Schema())}
}

// pipeline builds a pipeline whose generator talks to model.
func (s *demoStack) pipeline(t *testing.T, model text2sql.Model, cfg text2sql.Config) *text2sql.Pipeline {
	t.Helper()
	gen, err := generator.New(model, generator.Options{Dialect: text2sql.DialectSQLite})
	require.NoError(t, err)
	cfg.Retriever, cfg.Generator, cfg.Executor = s.retriever, gen, s.executor
	p, err := text2sql.New(cfg)
	require.NoError(t, err)
	return p
}

func (s *demoStack) checksum(t *testing.T) [32]byte {
	t.Helper()
	b, err := os.ReadFile(s.path)
	require.NoError(t, err)
	return sha256.Sum256(b)
}

func reply(sql string) string {
	b, _ := json.Marshal(map[string]any{"answerable": true, "sql": sql, "explanation": "scripted"})
	return string(b)
}

func TestAskFirstTime(t *testing.T) {
	s := newDemoStack(t)
	m := llmtest.New(reply("SELECT count(*) FROM students"))
	ans, err := s.pipeline(t, m, text2sql.Config{}).Ask(context.Background(), "How many pupils are registered?")
	require.NoError(t, err)
	require.Equal(t, text2sql.StatusAnswered, ans.Status, "status %s, %d calls, %d attempts", ans.Status, m.CallCount(), len(ans.Attempts))
	require.Equal(t, 1, m.CallCount(), "status %s, %d calls, %d attempts", ans.Status, m.CallCount(), len(ans.Attempts))
	require.Len(t, ans.Attempts, 1, "status %s, %d calls, %d attempts", ans.Status, m.CallCount(), len(ans.Attempts))
	got := ans.Result.Rows[0][0]
	assert.Equal(t, int64(200), got, "count = %v, want 200 students", got)
	assert.False(t, ans.Trace.ModelCalls != 1 || ans.Trace.Usage.InputTokens == 0, "trace: %d calls, usage %+v", ans.Trace.ModelCalls, ans.Trace.Usage)
	var stages []text2sql.Stage
	for _, st := range ans.Trace.Steps {
		stages = append(stages, st.Stage)
	}
	assert.Equal(t, "retrieval,sql,execution", strings.Join(stagesStrings(stages), ","), "stages = %v", stages)
}

func stagesStrings(s []text2sql.Stage) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = string(x)
	}
	return out
}

func TestAskRepairsExecutionError(t *testing.T) {
	s := newDemoStack(t)
	m := llmtest.New(reply("SELECT nope FROM students"), reply("SELECT count(*) FROM students"))
	ans, err := s.pipeline(t, m, text2sql.Config{}).Ask(context.Background(), "How many students are there?")
	require.NoError(t, err)
	require.Equal(t, text2sql.StatusAnswered, ans.Status, "status %s, %d calls, %d attempts", ans.Status, m.CallCount(), len(ans.Attempts))
	require.Equal(t, 2, m.CallCount(), "status %s, %d calls, %d attempts", ans.Status, m.CallCount(), len(ans.Attempts))
	require.Len(t, ans.Attempts, 2, "status %s, %d calls, %d attempts", ans.Status, m.CallCount(), len(ans.Attempts))
	k := ans.Attempts[0].Result.Error.Kind
	assert.Equal(t, text2sql.KindUnknownColumn, k, "first attempt kind = %s, want unknown_column", k)
	// The repair prompt shows the failed SQL and its error.
	second := m.Calls()[1].Messages
	last := second[len(second)-1].Content
	assert.False(t, !strings.Contains(last, "SELECT nope FROM students") || !strings.Contains(last, "nope"), "repair prompt does not show the failed attempt:\n%s", last)
}

// Case C4 #29: a model that always answers the same failing SQL.
func TestAskRepairsExhausted(t *testing.T) {
	s := newDemoStack(t)
	m := llmtest.New(reply("SELECT nope FROM students")).RepeatLast()
	ans, err := s.pipeline(t, m, text2sql.Config{MaxRepairs: 3, DisableNoProgress: true}).Ask(context.Background(), "How many students are there?")
	require.ErrorIs(t, err, text2sql.ErrRepairsExhausted, "err = %v, want ErrRepairsExhausted", err)
	require.Equal(t, 4, m.CallCount(), "%d calls, %d attempts, status %s; want 4, 4, failed", m.CallCount(), len(ans.Attempts), ans.Status)
	require.Len(t, ans.Attempts, 4, "%d calls, %d attempts, status %s; want 4, 4, failed", m.CallCount(), len(ans.Attempts), ans.Status)
	require.Equal(t, text2sql.StatusFailed, ans.Status, "%d calls, %d attempts, status %s; want 4, 4, failed", m.CallCount(), len(ans.Attempts), ans.Status)
	var sqlErr *text2sql.SQLError
	assert.False(t, !errors.As(err, &sqlErr) || sqlErr.Kind != text2sql.KindUnknownColumn, "last error = %v, want the unknown_column error", err)

	// With no-progress detection (the default) it stops at the second
	// identical candidate.
	m = llmtest.New(reply("SELECT nope FROM students")).RepeatLast()
	ans, err = s.pipeline(t, m, text2sql.Config{MaxRepairs: 3}).Ask(context.Background(), "How many students are there?")
	require.ErrorIs(t, err, text2sql.ErrRepairsExhausted, "no-progress: err %v, %d calls, %d attempts; want 2 calls", err, m.CallCount(), len(ans.Attempts))
	require.Equal(t, 2, m.CallCount(), "no-progress: err %v, %d calls, %d attempts; want 2 calls", err, m.CallCount(), len(ans.Attempts))
	require.Len(t, ans.Attempts, 2, "no-progress: err %v, %d calls, %d attempts; want 2 calls", err, m.CallCount(), len(ans.Attempts))
}

func TestAskDeclines(t *testing.T) {
	s := newDemoStack(t)
	m := llmtest.New(`{"answerable": false, "sql": "", "explanation": "This database holds university records, not geography."}`)
	ans, err := s.pipeline(t, m, text2sql.Config{}).Ask(context.Background(), "What is the capital of France?")
	require.NoError(t, err)
	require.Equal(t, text2sql.StatusDeclined, ans.Status, "status %s, result %v; want declined with nothing executed", ans.Status, ans.Result)
	require.Nil(t, ans.Result, "status %s, result %v; want declined with nothing executed", ans.Status, ans.Result)
	assert.True(t, ans.Retrieval.LowConfidence, "an off-topic question should retrieve with low confidence")
	for _, st := range ans.Trace.Steps {
		assert.NotEqual(t, text2sql.StageExecution, st.Stage, "a declined question must not execute anything")
	}
}

func TestAskReusesVerifiedExample(t *testing.T) {
	s := newDemoStack(t)
	kb, _ := demo.Knowledge()
	ex := kb.Examples[0]
	m := llmtest.New() // any call would fail
	ans, err := s.pipeline(t, m, text2sql.Config{}).Ask(context.Background(), strings.ToUpper(ex.Question))
	require.NoError(t, err)
	require.Equal(t, ex.ID, ans.ReusedExample, "reused %q, %d calls, result %+v", ans.ReusedExample, m.CallCount(), ans.Result)
	require.Equal(t, 0, m.CallCount(), "reused %q, %d calls, result %+v", ans.ReusedExample, m.CallCount(), ans.Result)
	require.NotNil(t, ans.Result, "reused %q, %d calls, result %+v", ans.ReusedExample, m.CallCount(), ans.Result)
	require.Nil(t, ans.Result.Error, "reused %q, %d calls, result %+v", ans.ReusedExample, m.CallCount(), ans.Result)
	require.Len(t, ans.Attempts, 1, "reused %q, %d calls, result %+v", ans.ReusedExample, m.CallCount(), ans.Result)

	// Reuse can be turned off.
	m = llmtest.New(reply(ex.SQL))
	ans, err = s.pipeline(t, m, text2sql.Config{DisableExampleReuse: true}).Ask(context.Background(), ex.Question)
	require.False(t, err != nil || ans.ReusedExample != "" || m.CallCount() != 1, "reuse off: err %v, reused %q, %d calls", err, ans.ReusedExample, m.CallCount())
}

// Case C1 #11 (library entry point) and C1 #1: a destructive answer is
// refused, the database file is byte-identical afterwards.
func TestAskRefusesWrites(t *testing.T) {
	s := newDemoStack(t)
	before := s.checksum(t)
	for _, stub := range []string{"DROP TABLE students;", "\n  drop\ttable students ;  ", "SELECT 1; DROP TABLE students; SELECT 2;"} {
		m := llmtest.New(stub).RepeatLast()
		ans, err := s.pipeline(t, m, text2sql.Config{}).Ask(context.Background(), "Drop the students table")
		require.ErrorIs(t, err, text2sql.ErrRepairsExhausted, "%q: err = %v, want a refusal", stub, err)
		require.ErrorIs(t, err, text2sql.ErrRefused, "%q: err = %v, want a refusal", stub, err)
		k := ans.Attempts[0].Result.Error.Kind
		assert.False(t, k != text2sql.KindNotReadOnly && k != text2sql.KindMultipleStatements, "%q: kind %s", stub, k)
	}
	p := s.pipeline(t, llmtest.New(), text2sql.Config{})
	res, err := p.Execute(context.Background(), "DROP TABLE students")
	require.False(t, err != nil || res.Error == nil || res.Error.Kind != text2sql.KindNotReadOnly, "Execute: %v %+v", err, res)
	require.Equal(t, before, s.checksum(t), "the database file changed")
}

// Case C2 #28: a model that answers fenced SQL with a comment runs on the
// first call.
func TestAskFencedSQLWithComment(t *testing.T) {
	s := newDemoStack(t)
	m := llmtest.New("```sql\n-- count rows\nSELECT COUNT(*) FROM courses\n```").RepeatLast()
	ans, err := s.pipeline(t, m, text2sql.Config{}).Ask(context.Background(), "How many classes are offered?")
	require.NoError(t, err)
	require.Equal(t, 1, m.CallCount(), "%d calls, rows %v", m.CallCount(), ans.Result.Rows)
	require.Equal(t, int64(36), ans.Result.Rows[0][0], "%d calls, rows %v", m.CallCount(), ans.Result.Rows)
}

func TestGenerateDoesNotExecute(t *testing.T) {
	s := newDemoStack(t)
	m := llmtest.New(reply("SELECT title FROM courses ORDER BY title"))
	ans, err := s.pipeline(t, m, text2sql.Config{}).Generate(context.Background(), "List the course titles")
	require.NoError(t, err)
	require.Equal(t, text2sql.StatusGenerated, ans.Status, "status %s, result %v, sql %q", ans.Status, ans.Result, ans.SQL)
	require.Nil(t, ans.Result, "status %s, result %v, sql %q", ans.Status, ans.Result, ans.SQL)
	require.NotEqual(t, "", ans.SQL, "status %s, result %v, sql %q", ans.Status, ans.Result, ans.SQL)
}

func TestAskJudgeRollsBackToFaultyStage(t *testing.T) {
	s := newDemoStack(t)
	m := llmtest.New(reply("SELECT count(*) FROM instructors"), reply("SELECT count(*) FROM students"))
	var retrievals int
	counting := text2sql.RetrieverFunc(func(ctx context.Context, req text2sql.RetrieveRequest) (*text2sql.Retrieval, error) {
		retrievals++
		return s.retriever.Retrieve(ctx, req)
	})
	judge := text2sql.JudgeFunc(func(ctx context.Context, req text2sql.JudgeRequest) (*text2sql.Verdict, error) {
		if strings.Contains(req.Current.Candidate.SQL, "students") {
			return &text2sql.Verdict{OK: true}, nil
		}
		return &text2sql.Verdict{Stage: text2sql.StageSQL, Reason: "counts the wrong table", Hints: []string{"count students"}}, nil
	})
	gen, _ := generator.New(m, generator.Options{})
	p, err := text2sql.New(text2sql.Config{Retriever: counting, Generator: gen, Executor: s.executor, Judge: judge})
	require.NoError(t, err)
	ans, err := p.Ask(context.Background(), "How many students are there?")
	require.NoError(t, err)
	require.Equal(t, text2sql.StatusVerified, ans.Status, "status %s, %d model calls, %d retrievals; want verified, 2, 1", ans.Status, m.CallCount(), retrievals)
	require.Equal(t, 2, m.CallCount(), "status %s, %d model calls, %d retrievals; want verified, 2, 1", ans.Status, m.CallCount(), retrievals)
	require.Equal(t, 1, retrievals, "status %s, %d model calls, %d retrievals; want verified, 2, 1", ans.Status, m.CallCount(), retrievals)
	assert.Contains(t, m.Calls()[1].Messages[len(m.Calls()[1].Messages)-1].Content, "count students", "the judge's hint did not reach the generator")
}

func TestNewValidatesConfig(t *testing.T) {
	_, err := text2sql.New(text2sql.Config{})
	require.ErrorIs(t, err, text2sql.ErrInvalidConfig, "err = %v, want ErrInvalidConfig", err)
}

// An AskRequest's options hold for its call only: its row cap and its
// model-call budget, over the Config's.
func TestAskRequestOptions(t *testing.T) {
	s := newDemoStack(t)
	m := llmtest.New(reply("SELECT first_name FROM students"), reply("SELECT last_name FROM students"), reply("SELECT email FROM students")).RepeatLast()
	judge := text2sql.JudgeFunc(func(context.Context, text2sql.JudgeRequest) (*text2sql.Verdict, error) {
		return &text2sql.Verdict{OK: false, Stage: text2sql.StageSQL, Reason: "never right"}, nil
	})
	p := s.pipeline(t, m, text2sql.Config{MaxRows: 50, Judge: judge, MaxRepairs: 5})
	ctx := context.Background()

	ans, err := p.Do(ctx, text2sql.AskRequest{Question: "List the students", MaxRows: 3, MaxModelCalls: 1})
	require.NoError(t, err)
	assert.Equal(t, text2sql.StatusUnverified, ans.Status, "the budget of one call ends the run after the first attempt")
	assert.Equal(t, 1, m.CallCount())
	require.NotNil(t, ans.Result)
	assert.Len(t, ans.Result.Rows, 3)
	assert.True(t, ans.Result.Truncated)

	ans, err = p.Ask(ctx, "List the students")
	require.NoError(t, err)
	assert.Len(t, ans.Result.Rows, 50, "the Config's cap again")
	assert.Greater(t, ans.Trace.ModelCalls, 1, "the Config's budget again")

	_, err = p.Do(ctx, text2sql.AskRequest{Question: "List the students", MaxRows: -1})
	assert.ErrorIs(t, err, text2sql.ErrInvalidConfig)
}
