package selector

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/llm/llmtest"
)

func candidate(sql string, rows ...[]any) text2sql.Attempt {
	return text2sql.Attempt{N: 1, Candidate: &text2sql.Candidate{Answerable: true, SQL: sql},
		Result: &text2sql.Result{Columns: []string{"n"}, Rows: rows, RowCount: len(rows)}}
}

func request(maxCalls int) text2sql.SelectRequest {
	return text2sql.SelectRequest{Question: "How many students are there?", MaxCalls: maxCalls,
		Retrieval: &text2sql.Retrieval{Question: "How many students are there?", Schema: "CREATE TABLE students (id INTEGER PRIMARY KEY);"},
		Candidates: []text2sql.Attempt{
			candidate("SELECT count(*) FROM courses", []any{int64(36)}),
			candidate("SELECT count(*) FROM students", []any{int64(200)}),
			candidate("SELECT count(*) FROM departments", []any{int64(8)}),
		}}
}

// prefers answers for the query showing "students", wherever it is.
func prefers(word string) *llmtest.Model {
	return llmtest.Func(func(req text2sql.ModelRequest) (string, error) {
		u := req.Messages[0].Content
		a := u[strings.Index(u, "## Query A"):strings.Index(u, "## Query B")]
		if strings.Contains(a, word) {
			return `{"winner": "A", "reason": "A reads the right table"}`, nil
		}
		return `{"winner": "B", "reason": "B reads the right table"}`, nil
	})
}

func TestSelectPairwise(t *testing.T) {
	m := prefers("students")
	s, err := New(m, Options{})
	require.NoError(t, err)
	ch, err := s.Select(context.Background(), request(10))
	require.NoError(t, err)
	assert.Equal(t, 1, ch.Index)
	assert.Equal(t, 3, m.CallCount(), "every pair once")
	assert.Len(t, ch.Calls, 3)
	assert.Equal(t, "won 2 of 3 comparisons: A reads the right table", ch.Reason, "the reason of its last win, (1,2)")
	assert.NotEmpty(t, ch.Calls[0].Prompt)

	// The budget cuts the pairs.
	m = prefers("students")
	s, _ = New(m, Options{})
	ch, err = s.Select(context.Background(), request(1))
	require.NoError(t, err)
	assert.Equal(t, 1, m.CallCount())
	assert.Equal(t, 1, ch.Index)
	assert.Contains(t, ch.Reason, "(2 of 3 pairs not compared)")

	// Equal wins: the earliest.
	m = prefers("nothing")
	s, _ = New(m, Options{})
	ch, err = s.Select(context.Background(), request(10))
	require.NoError(t, err)
	assert.Equal(t, 2, ch.Index, "B always wins: (0,1)→1, (0,2)→2, (1,2)→2")
}

func TestSelectMalformed(t *testing.T) {
	m := llmtest.New("I cannot decide.").RepeatLast()
	s, err := New(m, Options{})
	require.NoError(t, err)
	ch, err := s.Select(context.Background(), request(3))
	var oe *text2sql.OutputError
	require.ErrorAs(t, err, &oe)
	assert.ErrorIs(t, err, text2sql.ErrInvalidOutput)
	require.NotNil(t, ch)
	assert.Len(t, ch.Calls, 3, "re-asks are cut to the budget")
	assert.Equal(t, 3, m.CallCount())

	// One usable comparison is enough.
	m = llmtest.New("?", "?", `{"winner": "b", "reason": "x"}`)
	s, _ = New(m, Options{MaxReasks: -1})
	ch, err = s.Select(context.Background(), request(3))
	require.NoError(t, err)
	assert.Equal(t, 2, ch.Index)
}

func TestSelectErrors(t *testing.T) {
	s, err := New(prefers("students"), Options{})
	require.NoError(t, err)
	req := request(5)
	req.Candidates = req.Candidates[:1]
	_, err = s.Select(context.Background(), req)
	assert.ErrorIs(t, err, text2sql.ErrInvalidConfig)
	_, err = s.Select(context.Background(), request(0))
	assert.ErrorIs(t, err, text2sql.ErrInvalidConfig)
	req = request(5)
	req.Candidates[1].Candidate = nil
	_, err = s.Select(context.Background(), req)
	assert.ErrorIs(t, err, text2sql.ErrInvalidConfig)
	req = request(5)
	req.Question, req.Retrieval.Question = " ", ""
	_, err = s.Select(context.Background(), req)
	assert.ErrorIs(t, err, text2sql.ErrEmptyQuestion)
	noModel, _ := New(nil, Options{})
	_, err = noModel.Select(context.Background(), request(5))
	assert.ErrorIs(t, err, text2sql.ErrInvalidConfig)

	down := errors.New("down")
	s, _ = New(text2sql.ModelFunc(func(context.Context, text2sql.ModelRequest) (*text2sql.ModelResponse, error) { return nil, down }), Options{})
	_, err = s.Select(context.Background(), request(5))
	assert.ErrorIs(t, err, down)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s, _ = New(prefers("students"), Options{})
	_, err = s.Select(ctx, request(5))
	assert.ErrorIs(t, err, context.Canceled)

	for _, o := range []Options{{Dialect: "oracle"}, {ResultBudget: -1}, {Temperature: 3}} {
		_, err := New(nil, o)
		assert.ErrorIs(t, err, text2sql.ErrInvalidConfig, "%+v", o)
	}
}

func TestPrompt(t *testing.T) {
	s, _ := New(nil, Options{})
	system, user, err := s.Prompt(request(1), 2, 0)
	require.NoError(t, err)
	assert.Contains(t, system, `{"winner": "A" or "B"`)
	assert.Contains(t, system, "SQLite")
	a, b := strings.Index(user, "## Query A"), strings.Index(user, "## Query B")
	require.True(t, a > 0 && b > a, user)
	assert.Contains(t, user[a:b], "departments")
	assert.Contains(t, user[b:], "courses")
	assert.Contains(t, user[b:], "36")
	assert.Contains(t, user, "CREATE TABLE students")
	_, _, err = s.Prompt(request(1), 1, 1)
	assert.ErrorIs(t, err, text2sql.ErrInvalidConfig)
	_, _, err = s.Prompt(request(1), 0, 3)
	assert.ErrorIs(t, err, text2sql.ErrInvalidConfig)
}

func TestParseChoice(t *testing.T) {
	for text, want := range map[string]string{
		`{"winner": "A", "reason": "r"}`:                     "A",
		"Thinking…\n```json\n{\"choice\": \"query b\"}\n```": "B",
		`{"answer": " a "}`:                                  "A",
	} {
		w, _, err := ParseChoice(text)
		require.NoError(t, err, text)
		assert.Equal(t, want, w, text)
	}
	for _, text := range []string{"", "A", `{"winner": "C"}`, `{"winner": 1}`, `{"reason": "x"}`} {
		_, _, err := ParseChoice(text)
		var oe *text2sql.OutputError
		assert.ErrorAs(t, err, &oe, text)
	}
	_, r, _ := ParseChoice(`{"winner": "B", "reason": " B counts students "}`)
	assert.Equal(t, "B counts students", r)
}
