package text2sql_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
)

// A reranker's report (Retrieval.Rerank) reaches the trace: its calls
// are the retrieval step's, counted in the totals and against
// MaxModelCalls, and the outcome names the selection and the fallback.
func TestTraceRecordsRerank(t *testing.T) {
	call := text2sql.ModelCall{Model: "m", Usage: text2sql.Usage{InputTokens: 10, OutputTokens: 2}}
	for _, tc := range []struct {
		name     string
		report   *text2sql.RerankReport
		keywords *text2sql.KeywordReport
		calls    int
		outcome  string
	}{
		{"none", nil, nil, 0, "ok: 0 items, 1 tables"},
		{"selected", &text2sql.RerankReport{Reranker: "llm", Calls: []text2sql.ModelCall{call}, Tables: []string{"a", "b"}}, nil, 1,
			"ok: 0 items, 1 tables, reranked: 2 tables selected"},
		{"fallback", &text2sql.RerankReport{Reranker: "llm", Calls: []text2sql.ModelCall{call, call}, Fallback: "malformed answer: x"}, nil, 2,
			"ok: 0 items, 1 tables, rerank fallback: malformed answer: x"},
		{"partial", &text2sql.RerankReport{Reranker: "llm", Calls: []text2sql.ModelCall{call, call}, Tables: []string{"a"}, Fallback: "column selection: timeout after 1s"}, nil, 2,
			"ok: 0 items, 1 tables, reranked: 1 tables selected, rerank fallback: column selection: timeout after 1s"},
		{"keywords", &text2sql.RerankReport{Reranker: "llm", Calls: []text2sql.ModelCall{call}, Tables: []string{"a"}},
			&text2sql.KeywordReport{Keywords: []string{"x", "y"}, Calls: []text2sql.ModelCall{call}}, 2,
			"ok: 0 items, 1 tables, reranked: 1 tables selected, 2 keywords"},
		{"keywords fallback", nil, &text2sql.KeywordReport{Calls: []text2sql.ModelCall{call}, Fallback: "model error: down"}, 1,
			"ok: 0 items, 1 tables, keywords fallback: model error: down"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ret := text2sql.RetrieverFunc(func(context.Context, text2sql.RetrieveRequest) (*text2sql.Retrieval, error) {
				return &text2sql.Retrieval{Tables: []text2sql.TableRef{{Name: "a"}}, Rerank: tc.report, Keywords: tc.keywords}, nil
			})
			gen := text2sql.GeneratorFunc(func(context.Context, text2sql.GenerateRequest) (*text2sql.Candidate, error) {
				return &text2sql.Candidate{Answerable: true, SQL: "SELECT 1", Calls: []text2sql.ModelCall{call}}, nil
			})
			p, err := text2sql.New(text2sql.Config{Retriever: ret, Generator: gen})
			require.NoError(t, err)
			ans, err := p.Generate(context.Background(), "q")
			require.NoError(t, err)
			step := ans.Trace.Steps[0]
			require.Equal(t, text2sql.StageRetrieval, step.Stage)
			assert.Len(t, step.Calls, tc.calls)
			assert.Equal(t, tc.outcome, step.Outcome)
			assert.Equal(t, 10*tc.calls, step.Usage.InputTokens)
			assert.Equal(t, tc.calls+1, ans.Trace.ModelCalls, "the reranker's and keyword expansion's calls and the generator's")
			assert.Equal(t, 10*(tc.calls+1), ans.Trace.Usage.InputTokens)
		})
	}
}
