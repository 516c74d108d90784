package text2sql_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
)

// A stage that returns neither a value nor an error makes Ask fail with
// ErrNilResult naming the stage; nothing panics.
func TestNilStage(t *testing.T) {
	retriever := text2sql.RetrieverFunc(func(ctx context.Context, req text2sql.RetrieveRequest) (*text2sql.Retrieval, error) {
		return &text2sql.Retrieval{Question: req.Question}, nil
	})
	generator := text2sql.GeneratorFunc(func(ctx context.Context, req text2sql.GenerateRequest) (*text2sql.Candidate, error) {
		return &text2sql.Candidate{Answerable: true, SQL: "SELECT 1"}, nil
	})
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
