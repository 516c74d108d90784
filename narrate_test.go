package text2sql_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
)

// A Narrator's words are the answer's, with a "words" step in the trace
// and its model calls counted; a failing or nil narration leaves the
// answer as it was, without words; a failed answer is not narrated.
func TestNarrator(t *testing.T) {
	executor := text2sql.ExecutorFunc(func(ctx context.Context, req text2sql.ExecuteRequest) (*text2sql.Result, error) {
		return &text2sql.Result{Columns: []string{"n"}, Rows: [][]any{{int64(6)}}, RowCount: 1}, nil
	})
	var got text2sql.NarrateRequest
	for name, c := range map[string]struct {
		narrator text2sql.NarratorFunc
		words    string
		outcome  string
		calls    int
	}{
		"words": {func(_ context.Context, req text2sql.NarrateRequest) (*text2sql.Narration, error) {
			got = req
			return &text2sql.Narration{Text: "There are 6.", Source: "model", Calls: []text2sql.ModelCall{{Model: "m"}}}, nil
		}, "There are 6.", "ok (model)", 1},
		"error": {func(context.Context, text2sql.NarrateRequest) (*text2sql.Narration, error) {
			return nil, errors.New("provider down")
		}, "", "no words: provider down", 0},
		"nil": {func(context.Context, text2sql.NarrateRequest) (*text2sql.Narration, error) { return nil, nil }, "", "no words: " + text2sql.ErrNilResult.Error(), 0},
	} {
		p, err := text2sql.New(text2sql.Config{Retriever: retrieveAll, Generator: generateOne, Executor: executor, Narrator: c.narrator})
		require.NoError(t, err)
		ans, err := p.Ask(context.Background(), "How many?")
		require.NoError(t, err, name)
		assert.Equal(t, text2sql.StatusAnswered, ans.Status, name)
		assert.Equal(t, c.words, ans.Words, name)
		last := ans.Trace.Steps[len(ans.Trace.Steps)-1]
		assert.Equal(t, text2sql.StageWords, last.Stage, name)
		assert.Equal(t, c.outcome, last.Outcome, name)
		assert.Equal(t, c.calls, ans.Trace.ModelCalls, name, "the generator here makes no model calls")
	}
	assert.Equal(t, "How many?", got.Question)
	assert.Equal(t, int64(6), got.Result.Rows[0][0])

	called := false
	p, err := text2sql.New(text2sql.Config{Retriever: retrieveAll, Generator: generateOne, Narrator: text2sql.NarratorFunc(func(context.Context, text2sql.NarrateRequest) (*text2sql.Narration, error) {
		called = true
		return &text2sql.Narration{}, nil
	}), Executor: text2sql.ExecutorFunc(func(context.Context, text2sql.ExecuteRequest) (*text2sql.Result, error) {
		return nil, errors.New("database down")
	})})
	require.NoError(t, err)
	_, err = p.Ask(context.Background(), "How many?")
	assert.Error(t, err)
	assert.False(t, called, "a failed answer is not put in words")
}
