package text2sql_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
)

// A stage that returns neither a value nor an error makes Ask fail with
// ErrNilResult naming the stage; nothing panics.
func TestNilStage(t *testing.T) {
	retriever, generator := retrieveAll, generateOne
	executor := text2sql.ExecutorFunc(func(ctx context.Context, req text2sql.ExecuteRequest) (*text2sql.Result, error) {
		return &text2sql.Result{Columns: []string{"x"}, Rows: [][]any{{1}}, RowCount: 1}, nil
	})
	for stage, cfg := range map[string]text2sql.Config{
		"retrieve": {Retriever: text2sql.RetrieverFunc(func(context.Context, text2sql.RetrieveRequest) (*text2sql.Retrieval, error) { return nil, nil }),
			Generator: generator, Executor: executor},
		"plan": {Retriever: retriever, Generator: generator, Executor: executor, PlanWhen: text2sql.WhenAlways,
			Planner: text2sql.PlannerFunc(func(context.Context, text2sql.PlanRequest) (*text2sql.Plan, error) { return nil, nil })},
		"generate": {Retriever: retriever, Executor: executor,
			Generator: text2sql.GeneratorFunc(func(context.Context, text2sql.GenerateRequest) (*text2sql.Candidate, error) { return nil, nil })},
		"execute": {Retriever: retriever, Generator: generator,
			Executor: text2sql.ExecutorFunc(func(context.Context, text2sql.ExecuteRequest) (*text2sql.Result, error) { return nil, nil })},
		"judge": {Retriever: retriever, Generator: generator, Executor: executor, JudgeWhen: text2sql.WhenAlways,
			Judge: text2sql.JudgeFunc(func(context.Context, text2sql.JudgeRequest) (*text2sql.Verdict, error) { return nil, nil })},
	} {
		p, err := text2sql.New(cfg)
		require.NoError(t, err, stage)
		require.NotPanics(t, func() {
			_, err = p.Ask(context.Background(), "How many?")
		}, stage)
		assert.ErrorIs(t, err, text2sql.ErrNilResult, stage)
		assert.Contains(t, err.Error(), stage, stage)
	}
}

type nilExecutor struct{}

func (*nilExecutor) Execute(context.Context, text2sql.ExecuteRequest) (*text2sql.Result, error) {
	return nil, nil
}

// A stage that is an interface holding a nil pointer is refused by New,
// naming the stage and the type, instead of panicking in Ask.
func TestTypedNilStage(t *testing.T) {
	var ex *nilExecutor
	_, err := text2sql.New(text2sql.Config{Retriever: retrieveAll, Generator: generateOne, Executor: ex})
	require.ErrorIs(t, err, text2sql.ErrInvalidConfig)
	assert.Contains(t, err.Error(), "Executor is a nil *text2sql_test.nilExecutor")
	var gen text2sql.GeneratorFunc
	_, err = text2sql.New(text2sql.Config{Retriever: retrieveAll, Generator: gen})
	assert.ErrorIs(t, err, text2sql.ErrInvalidConfig)
}

// An executor that fails (a Go error, not an SQL error) ends the run, and
// the attempt with its SQL stays in the answer.
func TestExecutorFailureKeepsTheAttempt(t *testing.T) {
	down := errors.New("connection refused")
	p, err := text2sql.New(text2sql.Config{Retriever: retrieveAll, Generator: generateOne,
		Executor: text2sql.ExecutorFunc(func(context.Context, text2sql.ExecuteRequest) (*text2sql.Result, error) { return nil, down })})
	require.NoError(t, err)
	ans, err := p.Ask(context.Background(), "How many?")
	require.ErrorIs(t, err, down)
	assert.Equal(t, text2sql.StatusFailed, ans.Status)
	require.Len(t, ans.Attempts, 1)
	assert.ErrorIs(t, ans.Attempts[0].Error, down)
	assert.Equal(t, "SELECT 1", ans.Attempts[0].Candidate.SQL)
	assert.Nil(t, ans.Attempts[0].Result)
}

var (
	retrieveAll = text2sql.RetrieverFunc(func(ctx context.Context, req text2sql.RetrieveRequest) (*text2sql.Retrieval, error) {
		return &text2sql.Retrieval{Question: req.Question}, nil
	})
	generateOne = text2sql.GeneratorFunc(func(ctx context.Context, req text2sql.GenerateRequest) (*text2sql.Candidate, error) {
		return &text2sql.Candidate{Answerable: true, SQL: "SELECT 1"}, nil
	})
)
