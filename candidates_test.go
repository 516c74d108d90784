package text2sql_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/generator"
	"github.com/text2sql-go/text2sql/internal/demotest"
	"github.com/text2sql-go/text2sql/llm/llmtest"
	"github.com/text2sql-go/text2sql/selector"
	"github.com/text2sql-go/text2sql/wire"
)

const (
	countCourses  = "SELECT count(*) FROM courses"           // 36
	countStudents = "SELECT count(*) FROM students"          // 200
	countIDs      = "SELECT count(student_id) FROM students" // 200 too
	countDepts    = "SELECT count(*) FROM departments"
)

func easy(*text2sql.Retrieval, string) bool { return false }
func hard(*text2sql.Retrieval, string) bool { return true }

// Three candidates, two with the same result: the vote picks one of the
// two, whatever the order the parallel calls took their replies in.
func TestCandidatesMajorityWins(t *testing.T) {
	s := newDemoStack(t)
	m := llmtest.New(reply(countCourses), reply(countStudents), reply(countIDs))
	ans, err := s.pipeline(t, m, text2sql.Config{Candidates: 3, Hard: hard}).Ask(context.Background(), "How many students are there?")
	require.NoError(t, err)
	assert.Equal(t, text2sql.StatusAnswered, ans.Status)
	assert.Equal(t, 3, m.CallCount())
	assert.Equal(t, 3, ans.Trace.ModelCalls)
	sel := ans.Selection
	require.NotNil(t, sel)
	require.Len(t, sel.Candidates, 3)
	assert.Equal(t, text2sql.SelectVote, sel.Method, sel.Reason)
	assert.Equal(t, 2, sel.Votes)
	assert.Equal(t, 2, sel.Groups)
	assert.Contains(t, sel.Reason, "2 of 3 candidates agree")
	assert.Contains(t, []string{countStudents, countIDs}, ans.SQL)
	assert.Equal(t, int64(200), ans.Result.Rows[0][0])
	assert.Equal(t, 1, sel.Candidates[0].Group, "the first candidate forms group 1")
	assert.Equal(t, 2, sel.Candidates[1].Group)
	assert.Equal(t, 2, sel.Candidates[2].Group)
	assert.Equal(t, ans.SQL, sel.Candidates[sel.Winner].Candidate.SQL)
	for k, c := range sel.Candidates {
		assert.Equal(t, k, c.Variant)
	}
	// The variants were sampled at the variant temperature, the first not.
	temps := map[float64]int{}
	for _, c := range m.Calls() {
		temps[*c.Temperature]++
	}
	assert.Equal(t, map[float64]int{0: 1, 0.7: 2}, temps)
	// The trace shows every candidate and the selection.
	var outcomes []string
	for _, st := range ans.Trace.Steps {
		outcomes = append(outcomes, string(st.Stage)+" "+st.Outcome)
	}
	joined := strings.Join(outcomes, "\n")
	assert.Contains(t, joined, "sql candidate 2: ok")
	assert.Contains(t, joined, "execution candidate 3: ok: 1 rows")
	assert.Contains(t, joined, "selection vote: 2 of 3 candidates agree")
	require.Len(t, ans.Attempts, 1)
	assert.Same(t, sel, ans.Attempts[0].Selection)
}

// Three candidates with three results: the judge reviews the first of
// each group in turn and the first it accepts wins; without a judge the
// first candidate does.
func TestCandidatesTieGoesToTheJudge(t *testing.T) {
	s := newDemoStack(t)
	var judged []string
	var mu sync.Mutex
	judge := text2sql.JudgeFunc(func(ctx context.Context, req text2sql.JudgeRequest) (*text2sql.Verdict, error) {
		mu.Lock()
		judged = append(judged, req.Current.Candidate.SQL)
		mu.Unlock()
		if req.Current.Candidate.SQL == countStudents {
			return &text2sql.Verdict{OK: true, Reason: "counts students"}, nil
		}
		return &text2sql.Verdict{Stage: text2sql.StageSQL, Reason: "counts the wrong table"}, nil
	})
	m := llmtest.New(reply(countCourses), reply(countStudents), reply(countDepts))
	ans, err := s.pipeline(t, m, text2sql.Config{Candidates: 3, Hard: hard, Judge: judge}).Ask(context.Background(), "How many students are there?")
	require.NoError(t, err)
	assert.Equal(t, text2sql.StatusVerified, ans.Status)
	assert.Equal(t, countStudents, ans.SQL)
	sel := ans.Selection
	require.NotNil(t, sel)
	assert.Equal(t, text2sql.SelectJudge, sel.Method, sel.Reason)
	assert.Equal(t, 3, sel.Groups)
	assert.Equal(t, 1, sel.Votes)
	assert.Contains(t, sel.Reason, "the judge accepted candidate")
	assert.Equal(t, countCourses, judged[0], "the judge reviews the first candidate first")
	assert.NotContains(t, judged[:len(judged)-1], countStudents)
	assert.Equal(t, countStudents, judged[len(judged)-1], "the judge stops at the one it accepts")
	assert.Equal(t, "counts the wrong table", sel.Candidates[0].Verdict.Reason)
	assert.True(t, ans.Verdict.OK)

	// Without a judge: the earliest candidate of the tied groups.
	m = llmtest.New(reply(countCourses), reply(countStudents), reply(countDepts))
	ans, err = s.pipeline(t, m, text2sql.Config{Candidates: 3, Hard: hard}).Ask(context.Background(), "How many students are there?")
	require.NoError(t, err)
	require.NotNil(t, ans.Selection)
	assert.Equal(t, text2sql.SelectOrder, ans.Selection.Method)
	assert.Equal(t, 0, ans.Selection.Winner)
	assert.Equal(t, countCourses, ans.SQL)
}

// The first candidate executes on an easy question: exactly one
// generation call, no selection.
func TestCandidatesCheapOnEasyQuestion(t *testing.T) {
	s := newDemoStack(t)
	m := llmtest.New(reply(countStudents)).RepeatLast()
	ans, err := s.pipeline(t, m, text2sql.Config{Candidates: 5, Hard: easy}).Ask(context.Background(), "How many students are there?")
	require.NoError(t, err)
	assert.Equal(t, text2sql.StatusAnswered, ans.Status)
	assert.Equal(t, 1, m.CallCount())
	assert.Nil(t, ans.Selection)

	// With a judge: the first candidate is verified, one generation call.
	sc := &demotest.Stages{Replies: map[string][]string{"plan": {planReply}, "sql": {reply(countStudents)}, "judge": {judgeOK}}}
	p, _ := s.stagePipeline(t, sc, text2sql.Config{Candidates: 5, Hard: easy})
	ans, err = p.Ask(context.Background(), "How many students are there?")
	require.NoError(t, err)
	assert.Equal(t, text2sql.StatusVerified, ans.Status)
	assert.Equal(t, 1, sc.Calls("sql"))
	assert.Nil(t, ans.Selection)

	// A first candidate that fails calls for the others, easy or not.
	m = llmtest.New(reply("SELECT nope FROM students"), reply(countStudents), reply(countStudents))
	ans, err = s.pipeline(t, m, text2sql.Config{Candidates: 3, Hard: easy}).Ask(context.Background(), "How many students are there?")
	require.NoError(t, err)
	assert.Equal(t, 3, m.CallCount())
	require.NotNil(t, ans.Selection)
	assert.Equal(t, countStudents, ans.SQL)

	// AllCandidates generates them all.
	m = llmtest.New(reply(countStudents)).RepeatLast()
	ans, err = s.pipeline(t, m, text2sql.Config{Candidates: 3, Hard: easy, AllCandidates: true}).Ask(context.Background(), "How many students are there?")
	require.NoError(t, err)
	assert.Equal(t, 3, m.CallCount())
	require.NotNil(t, ans.Selection)
	assert.Equal(t, 3, ans.Selection.Votes)
}

// Refused and failing candidates never win, even when they agree, and
// their errors are in the selection and the trace; nothing is written.
func TestCandidatesRefusedNeverWins(t *testing.T) {
	s := newDemoStack(t)
	before := s.checksum(t)
	m := llmtest.New(reply(countCourses), reply("DELETE FROM students"), reply("DELETE FROM students"))
	ans, err := s.pipeline(t, m, text2sql.Config{Candidates: 3, Hard: hard}).Ask(context.Background(), "Remove every student")
	require.NoError(t, err)
	assert.Equal(t, countCourses, ans.SQL)
	sel := ans.Selection
	require.NotNil(t, sel)
	assert.Equal(t, text2sql.SelectVote, sel.Method)
	assert.Equal(t, 1, sel.Groups)
	for _, c := range sel.Candidates[1:] {
		assert.Zero(t, c.Group)
		require.NotNil(t, c.Result)
		require.NotNil(t, c.Result.Error)
		assert.ErrorIs(t, c.Result.Error, text2sql.ErrRefused)
	}
	var refused int
	for _, st := range ans.Trace.Steps {
		if st.Stage == text2sql.StageExecution && strings.Contains(st.Outcome, "not_read_only") {
			refused++
		}
	}
	assert.Equal(t, 2, refused, "the refusals are in the trace")
	assert.Equal(t, before, s.checksum(t))

	// The first fails, a later one executes: the later one wins.
	m = llmtest.New(reply("SELECT nope FROM students"), reply("DROP TABLE students"), reply(countStudents))
	ans, err = s.pipeline(t, m, text2sql.Config{Candidates: 3, Hard: hard}).Ask(context.Background(), "How many students are there?")
	require.NoError(t, err)
	assert.Equal(t, countStudents, ans.SQL)
	require.NotNil(t, ans.Selection)
	assert.Equal(t, text2sql.KindUnknownColumn, ans.Selection.Candidates[0].Result.Error.Kind)

	// None executes: the first candidate's failure goes to repair.
	m = llmtest.New(reply("SELECT nope FROM students"), reply("DROP TABLE students"), reply("DROP TABLE students"), reply(countStudents)).RepeatLast()
	ans, err = s.pipeline(t, m, text2sql.Config{Candidates: 3, Hard: hard}).Ask(context.Background(), "How many students are there?")
	require.NoError(t, err)
	require.Len(t, ans.Attempts, 2)
	require.NotNil(t, ans.Attempts[0].Selection)
	assert.Equal(t, text2sql.SelectNone, ans.Attempts[0].Selection.Method)
	assert.Equal(t, text2sql.KindUnknownColumn, ans.Attempts[0].Result.Error.Kind)
	assert.Equal(t, before, s.checksum(t))
}

// Candidates stay within MaxModelCalls, one call kept for the judge.
func TestCandidatesBudget(t *testing.T) {
	s := newDemoStack(t)
	m := llmtest.New(reply(countStudents)).RepeatLast()
	ans, err := s.pipeline(t, m, text2sql.Config{Candidates: 10, MaxModelCalls: 4, Hard: hard}).Ask(context.Background(), "How many students are there?")
	require.NoError(t, err)
	assert.Equal(t, 4, m.CallCount())
	require.NotNil(t, ans.Selection)
	assert.Len(t, ans.Selection.Candidates, 4)

	// Plan, first candidate, one more, and the judge.
	sc := &demotest.Stages{Replies: map[string][]string{"plan": {planReply}, "sql": {reply(countStudents)}, "judge": {judgeOK}}}
	p, _ := s.stagePipeline(t, sc, text2sql.Config{Candidates: 10, MaxModelCalls: 4, Hard: hard})
	ans, err = p.Ask(context.Background(), "How many students are there?")
	require.NoError(t, err)
	assert.Equal(t, text2sql.StatusVerified, ans.Status)
	assert.Equal(t, 4, ans.Trace.ModelCalls)
	assert.Equal(t, 1, sc.Calls("judge"))
	assert.Equal(t, 2, sc.Calls("sql"))
}

// Cancelling the context while candidates are being generated returns
// the context's error and leaves no goroutine behind.
func TestCandidatesCancel(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var started sync.WaitGroup
	started.Add(2)
	gen := text2sql.GeneratorFunc(func(ctx context.Context, req text2sql.GenerateRequest) (*text2sql.Candidate, error) {
		if req.Variant == 0 {
			return &text2sql.Candidate{Answerable: true, SQL: "SELECT 1"}, nil
		}
		started.Done()
		<-ctx.Done()
		return nil, ctx.Err()
	})
	go func() {
		started.Wait()
		cancel()
	}()
	p, err := text2sql.New(text2sql.Config{Retriever: retrieveAll, Generator: gen, Executor: oneRow, Candidates: 3, Hard: hard})
	require.NoError(t, err)
	ans, err := p.Ask(ctx, "How many?")
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, text2sql.StatusFailed, ans.Status)
}

// A generator returning neither a candidate nor an error for one variant:
// that candidate has ErrNilResult and the others decide.
func TestCandidatesNilCandidate(t *testing.T) {
	var calls atomic.Int32
	gen := text2sql.GeneratorFunc(func(ctx context.Context, req text2sql.GenerateRequest) (*text2sql.Candidate, error) {
		calls.Add(1)
		if req.Variant == 1 {
			return nil, nil
		}
		return &text2sql.Candidate{Answerable: true, SQL: "SELECT 1"}, nil
	})
	p, err := text2sql.New(text2sql.Config{Retriever: retrieveAll, Generator: gen, Executor: oneRow, Candidates: 3, Hard: hard})
	require.NoError(t, err)
	var ans *text2sql.Answer
	require.NotPanics(t, func() { ans, err = p.Ask(context.Background(), "How many?") })
	require.NoError(t, err)
	assert.Equal(t, int32(3), calls.Load())
	sel := ans.Selection
	require.NotNil(t, sel)
	assert.ErrorIs(t, sel.Candidates[1].Error, text2sql.ErrNilResult)
	assert.Nil(t, sel.Candidates[1].Candidate)
	assert.Equal(t, 2, sel.Votes)
	b, err := json.Marshal(wire.NewAnswer(ans, nil, wire.Public).Selection)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"error":"generate: text2sql: stage returned no result and no error"`)
}

func TestCandidatesConfig(t *testing.T) {
	for _, n := range []int{-1, text2sql.MaxCandidates + 1} {
		_, err := text2sql.New(text2sql.Config{Retriever: retrieveAll, Generator: generateOne, Candidates: n})
		assert.ErrorIs(t, err, text2sql.ErrInvalidConfig, "Candidates %d", n)
	}
}

// SameResult injected: the vote groups by it.
func TestCandidatesSameResult(t *testing.T) {
	gen := text2sql.GeneratorFunc(func(ctx context.Context, req text2sql.GenerateRequest) (*text2sql.Candidate, error) {
		return &text2sql.Candidate{Answerable: true, SQL: []string{"SELECT 1", "SELECT 2", "SELECT 3"}[req.Variant]}, nil
	})
	ex := text2sql.ExecutorFunc(func(ctx context.Context, req text2sql.ExecuteRequest) (*text2sql.Result, error) {
		return &text2sql.Result{Columns: []string{"x"}, Rows: [][]any{{req.SQL[len(req.SQL)-1:]}}, RowCount: 1}, nil
	})
	odd := func(a, b *text2sql.Result) bool { return (a.Rows[0][0] == "2") == (b.Rows[0][0] == "2") }
	p, err := text2sql.New(text2sql.Config{Retriever: retrieveAll, Generator: gen, Executor: ex, Candidates: 3, Hard: hard, SameResult: odd})
	require.NoError(t, err)
	ans, err := p.Ask(context.Background(), "Which?")
	require.NoError(t, err)
	assert.Equal(t, "SELECT 1", ans.SQL)
	assert.Equal(t, 2, ans.Selection.Votes)
	assert.Equal(t, []int{1, 2, 1}, []int{ans.Selection.Candidates[0].Group, ans.Selection.Candidates[1].Group, ans.Selection.Candidates[2].Group})
}

func TestDefaultSameResult(t *testing.T) {
	r := func(cols []string, rows ...[]any) *text2sql.Result {
		return &text2sql.Result{Columns: cols, Rows: rows, RowCount: len(rows)}
	}
	ab := []string{"a", "b"}
	for _, c := range []struct {
		name string
		x, y *text2sql.Result
		want bool
	}{
		{"numbers by value", r(ab, []any{int64(1), 2.5}), r(ab, []any{1.0, float32(2.5)}), true},
		{"rows as a multiset", r(ab, []any{"x", 1}, []any{"y", 2}), r([]string{"c", "d"}, []any{"y", 2}, []any{"x", 1}), true},
		{"duplicates count", r(ab, []any{"x", 1}, []any{"x", 1}), r(ab, []any{"x", 1}, []any{"y", 1}), false},
		{"text is not a number", r(ab, []any{"1", nil}), r(ab, []any{1, nil}), false},
		{"bytes are text", r(ab, []any{[]byte("x"), nil}), r(ab, []any{"x", nil}), true},
		{"column order kept", r(ab, []any{"x", 1}), r(ab, []any{1, "x"}), false},
		{"column count", r(ab), r([]string{"a"}), false},
		{"json numbers", r(ab, []any{json.Number("3"), json.Number("0.5")}), r(ab, []any{3, 0.5}), true},
		{"an error", r(ab), &text2sql.Result{Columns: ab, Error: &text2sql.SQLError{Kind: text2sql.KindSyntax}}, false},
		{"nil", r(ab), nil, false},
	} {
		assert.Equal(t, c.want, text2sql.DefaultSameResult(c.x, c.y), c.name)
	}
}

var oneRow = text2sql.ExecutorFunc(func(ctx context.Context, req text2sql.ExecuteRequest) (*text2sql.Result, error) {
	return &text2sql.Result{Columns: []string{"x"}, Rows: [][]any{{1}}, RowCount: 1}, nil
})

// A tie goes to the Selector before the judge; an unusable choice falls
// back to the judge; a selector returning nothing fails the run.
func TestCandidatesSelector(t *testing.T) {
	s := newDemoStack(t)
	var judged atomic.Int32
	judge := text2sql.JudgeFunc(func(ctx context.Context, req text2sql.JudgeRequest) (*text2sql.Verdict, error) {
		judged.Add(1)
		return &text2sql.Verdict{OK: req.Current.Candidate.SQL == countStudents, Stage: text2sql.StageSQL, Reason: "judged"}, nil
	})
	var got text2sql.SelectRequest
	pick := text2sql.SelectorFunc(func(ctx context.Context, req text2sql.SelectRequest) (*text2sql.Choice, error) {
		got = req
		for i, c := range req.Candidates {
			if c.Candidate.SQL == countStudents {
				return &text2sql.Choice{Index: i, Reason: "it counts students", Calls: []text2sql.ModelCall{{Model: "scripted"}}}, nil
			}
		}
		return &text2sql.Choice{Index: 0}, nil
	})
	m := llmtest.New(reply(countCourses), reply(countStudents), reply(countDepts))
	ans, err := s.pipeline(t, m, text2sql.Config{Candidates: 3, Hard: hard, Judge: judge, Selector: pick, MaxModelCalls: 8}).
		Ask(context.Background(), "How many students are there?")
	require.NoError(t, err)
	require.NotNil(t, ans.Selection)
	assert.Equal(t, text2sql.SelectSelector, ans.Selection.Method, ans.Selection.Reason)
	assert.Equal(t, countStudents, ans.SQL)
	assert.Contains(t, ans.Selection.Reason, "it counts students")
	assert.Len(t, got.Candidates, 3)
	assert.Equal(t, 8-3-1, got.MaxCalls, "the budget left, one call kept for the judge")
	assert.Equal(t, int32(1), judged.Load(), "the judge reviews the selector's pick only")
	assert.Equal(t, text2sql.StatusVerified, ans.Status)
	assert.Equal(t, 3+1, ans.Trace.ModelCalls, "the selector's call counts (the scripted judge records none)")

	// An unusable answer: the judge decides.
	judged.Store(0)
	bad := text2sql.SelectorFunc(func(ctx context.Context, req text2sql.SelectRequest) (*text2sql.Choice, error) {
		return &text2sql.Choice{}, &text2sql.OutputError{Raw: "?", Err: text2sql.ErrInvalidOutput}
	})
	m = llmtest.New(reply(countCourses), reply(countStudents), reply(countDepts))
	ans, err = s.pipeline(t, m, text2sql.Config{Candidates: 3, Hard: hard, Judge: judge, Selector: bad}).Ask(context.Background(), "How many students are there?")
	require.NoError(t, err)
	assert.Equal(t, text2sql.SelectJudge, ans.Selection.Method)
	assert.Contains(t, ans.Selection.Reason, "the selector gave no usable answer")
	assert.Equal(t, countStudents, ans.SQL)

	// Out of range: the earliest, without a judge.
	far := text2sql.SelectorFunc(func(ctx context.Context, req text2sql.SelectRequest) (*text2sql.Choice, error) {
		return &text2sql.Choice{Index: 7}, nil
	})
	m = llmtest.New(reply(countCourses), reply(countStudents), reply(countDepts))
	ans, err = s.pipeline(t, m, text2sql.Config{Candidates: 3, Hard: hard, Selector: far}).Ask(context.Background(), "How many students are there?")
	require.NoError(t, err)
	assert.Equal(t, text2sql.SelectOrder, ans.Selection.Method)
	assert.Equal(t, countCourses, ans.SQL)

	// Nothing at all: ErrNilResult, no panic.
	none := text2sql.SelectorFunc(func(context.Context, text2sql.SelectRequest) (*text2sql.Choice, error) { return nil, nil })
	m = llmtest.New(reply(countCourses), reply(countStudents), reply(countDepts))
	_, err = s.pipeline(t, m, text2sql.Config{Candidates: 3, Hard: hard, Selector: none}).Ask(context.Background(), "How many students are there?")
	assert.ErrorIs(t, err, text2sql.ErrNilResult)
	assert.Contains(t, err.Error(), "select")
}

// All three differ and the pairwise selector, on the same scripted model,
// picks the one the model prefers in every comparison.
func TestCandidatesPairwiseSelector(t *testing.T) {
	s := newDemoStack(t)
	var mu sync.Mutex
	variants := []string{countStudents, countDepts}
	m := llmtest.Func(func(req text2sql.ModelRequest) (string, error) {
		if strings.HasPrefix(req.System, "You compare two SQL queries") {
			u := req.Messages[0].Content
			if strings.Contains(u[strings.Index(u, "## Query A"):strings.Index(u, "## Query B")], "students") {
				return `{"winner": "A", "reason": "A counts students"}`, nil
			}
			return `{"winner": "B", "reason": "B counts students"}`, nil
		}
		if *req.Temperature == 0 {
			return reply(countCourses), nil
		}
		mu.Lock()
		defer mu.Unlock()
		sql := variants[0]
		variants = variants[1:]
		return reply(sql), nil
	})
	gen, err := generator.New(m, generator.Options{})
	require.NoError(t, err)
	sel, err := selector.New(m, selector.Options{})
	require.NoError(t, err)
	p, err := text2sql.New(text2sql.Config{Retriever: s.retriever, Generator: gen, Executor: s.executor, Selector: sel,
		Candidates: 3, Hard: hard, DisableExampleReuse: true})
	require.NoError(t, err)
	ans, err := p.Ask(context.Background(), "How many students are there?")
	require.NoError(t, err)
	assert.Equal(t, countStudents, ans.SQL)
	require.NotNil(t, ans.Selection)
	assert.Equal(t, text2sql.SelectSelector, ans.Selection.Method, ans.Selection.Reason)
	assert.Contains(t, ans.Selection.Reason, "won 2 of 3 comparisons")
	assert.Equal(t, 3+3, m.CallCount(), "three candidates, three comparisons")
	assert.Equal(t, 6, ans.Trace.ModelCalls)
}

// With CloseCalls, a vote without a majority goes to the selector, every
// group taking part, largest first; a majority still wins outright.
func TestCandidatesCloseCalls(t *testing.T) {
	results := []string{"a", "a", "b", "c", "d"} // variant → its result
	gen := text2sql.GeneratorFunc(func(ctx context.Context, req text2sql.GenerateRequest) (*text2sql.Candidate, error) {
		return &text2sql.Candidate{Answerable: true, SQL: "SELECT '" + results[req.Variant] + "'"}, nil
	})
	ex := text2sql.ExecutorFunc(func(ctx context.Context, req text2sql.ExecuteRequest) (*text2sql.Result, error) {
		return &text2sql.Result{Columns: []string{"x"}, Rows: [][]any{{req.SQL[8:9]}}, RowCount: 1}, nil
	})
	var seen []string
	pickC := text2sql.SelectorFunc(func(ctx context.Context, req text2sql.SelectRequest) (*text2sql.Choice, error) {
		seen = nil
		for _, c := range req.Candidates {
			seen = append(seen, c.Candidate.SQL)
		}
		return &text2sql.Choice{Index: slices.Index(seen, "SELECT 'c'"), Reason: "c"}, nil
	})
	ask := func(cfg text2sql.Config) *text2sql.Answer {
		cfg.Retriever, cfg.Generator, cfg.Executor, cfg.Selector, cfg.Hard = retrieveAll, gen, ex, pickC, hard
		p, err := text2sql.New(cfg)
		require.NoError(t, err)
		ans, err := p.Ask(context.Background(), "Which?")
		require.NoError(t, err)
		return ans
	}
	ans := ask(text2sql.Config{Candidates: 5, CloseCalls: true})
	assert.Equal(t, text2sql.SelectSelector, ans.Selection.Method, ans.Selection.Reason)
	assert.Equal(t, "SELECT 'c'", ans.SQL)
	assert.Equal(t, []string{"SELECT 'a'", "SELECT 'b'", "SELECT 'c'", "SELECT 'd'"}, seen, "largest group first")
	assert.Equal(t, 1, ans.Selection.Votes)
	assert.Contains(t, ans.Selection.Reason, "no majority: result group 1 has 2 of the 5 candidates that executed")

	// Without CloseCalls the plurality wins.
	ans = ask(text2sql.Config{Candidates: 5})
	assert.Equal(t, text2sql.SelectVote, ans.Selection.Method)
	assert.Equal(t, "SELECT 'a'", ans.SQL)
	assert.Equal(t, 2, ans.Selection.Votes)

	// A majority, 2 of 3, wins outright.
	seen = nil
	ans = ask(text2sql.Config{Candidates: 3, CloseCalls: true})
	assert.Equal(t, text2sql.SelectVote, ans.Selection.Method)
	assert.Nil(t, seen, "the selector was not asked")
}
