package wire_test

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/wire"
)

// sample is an answer with every part a detail level decides on.
func sample() *text2sql.Answer {
	call := text2sql.ModelCall{Model: "m", Usage: text2sql.Usage{InputTokens: 3}, Duration: 1500 * time.Microsecond, Prompt: "SECRET PROMPT"}
	return &text2sql.Answer{
		Question: "How many?", Status: text2sql.StatusVerified, SQL: "SELECT 1",
		Result: &text2sql.Result{Columns: []string{"n", "x"}, Rows: [][]any{{1.0, math.NaN()}, {math.Inf(-1), []byte{0, 1}}}, RowCount: 2, Duration: 2 * time.Millisecond},
		Retrieval: &text2sql.Retrieval{Question: "How many?", Schema: "CREATE TABLE secret_ddl (n INT)", BestSimilarity: math.NaN(),
			Items:  []text2sql.Item{{ID: "example:q3", Kind: text2sql.ItemExample, Text: "knowledge text", SQL: "SELECT example_sql", Score: 0.5}},
			Tables: []text2sql.TableRef{{Name: "t", Reason: text2sql.ReasonExample, Example: "q3", Columns: []string{"n"}}},
			Match:  &text2sql.ExampleMatch{ID: "q3", Question: "example question", SQL: "SELECT example_sql", Similarity: 0.9},
			Rerank: &text2sql.RerankReport{Reranker: "llm", Calls: []text2sql.ModelCall{call}}},
		Attempts: []text2sql.Attempt{
			{N: 1, Error: &text2sql.OutputError{Raw: "x", Err: text2sql.ErrInvalidOutput}},
			{N: 2, Plan: &text2sql.Plan{Output: "plan output", Calls: []text2sql.ModelCall{call}},
				Candidate: &text2sql.Candidate{Answerable: true, SQL: "SELECT 1"},
				Verdict:   &text2sql.Verdict{OK: true, Terms: []string{"term"}, Calls: []text2sql.ModelCall{call}},
				Result:    &text2sql.Result{Duration: 3 * time.Millisecond, Error: &text2sql.SQLError{Kind: text2sql.KindSyntax, Message: "m", SQLState: "42601"}}},
		},
		Trace: text2sql.Trace{Duration: time.Second, ModelCalls: 3, Steps: []text2sql.Step{
			{Stage: text2sql.StageSQL, Duration: 250 * time.Millisecond, Calls: []text2sql.ModelCall{call}, Outcome: "ok"},
			{Stage: text2sql.StageExecution, Duration: 5 * time.Millisecond, Outcome: "ok: 2 rows"},
		}},
	}
}

// Full: every duration in milliseconds, texts and plans shown; prompts
// never.
func TestFull(t *testing.T) {
	b, err := json.Marshal(wire.NewAnswer(sample(), nil, wire.Full))
	require.NoError(t, err)
	s := string(b)
	assert.NotContains(t, s, `"duration"`)
	assert.NotContains(t, s, `duration_ns`)
	for _, want := range []string{`"duration_ms":1.5`, `"duration_ms":2`, `"duration_ms":3`, `"duration_ms":1000`, `"duration_ms":250`,
		`"total_ms":1000`, `"sql_ms":250`, `"execution_ms":5`, `"knowledge text"`, `"SELECT example_sql"`, `secret_ddl`,
		`"plan output"`, `"terms":["term"]`, `"sqlstate":"42601"`, `"outcome":"ok: 2 rows"`, `"reason":"via example q3"`,
		`"error":"text2sql: malformed model output"`, `"model":"m"`} {
		assert.Contains(t, s, want)
	}
	assert.NotContains(t, s, "SECRET PROMPT")
}

// Public: what a service's client sees, without knowledge texts, example
// SQL, schema, plans, model calls or the trace's steps.
func TestPublic(t *testing.T) {
	a := wire.NewAnswer(sample(), nil, wire.Public)
	b, err := json.Marshal(a)
	require.NoError(t, err)
	s := string(b)
	for _, secret := range []string{"SECRET PROMPT", "knowledge text", "example_sql", "secret_ddl", "example question", "plan output",
		`"steps"`, `"calls"`, `"terms"`, "sqlstate", `"duration_ms":1000`} {
		assert.NotContains(t, s, secret)
	}
	assert.Equal(t, "q3", a.Context.Items[0].Name)
	assert.Equal(t, []string{"n"}, a.Context.Tables[0].Columns)
	assert.Equal(t, 1, a.Context.Rerank.ModelCalls)
	assert.True(t, a.Answerable)
	assert.Equal(t, "m", a.Model)
}

// Values JSON cannot hold are written so the answer still encodes.
func TestNonFinite(t *testing.T) {
	a := wire.NewAnswer(sample(), nil, wire.Public)
	assert.Equal(t, []any{1.0, "NaN"}, a.Result.Rows[0])
	assert.Equal(t, "-Infinity", a.Result.Rows[1][0])
	assert.Equal(t, 0.0, a.Context.BestSimilarity)
	b, err := json.Marshal(a.Result)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"AAE="`, "binary values are base64")
}

func TestFailureCode(t *testing.T) {
	for err, want := range map[error]string{
		fmt.Errorf("%w after 3 attempts: x", text2sql.ErrRepairsExhausted):                   wire.FailureRepairsExhausted,
		fmt.Errorf("%w: 16 calls", text2sql.ErrBudgetExhausted):                              wire.FailureBudgetExhausted,
		fmt.Errorf("generate: %w", &text2sql.OutputError{Err: text2sql.ErrNoSQL}):            wire.FailureNoSQL,
		&text2sql.OutputError{Err: fmt.Errorf("%w: missing sql", text2sql.ErrInvalidOutput)}: wire.FailureInvalidOutput,
		&text2sql.ModelError{Provider: "p", StatusCode: 500}:                                 "",
	} {
		assert.Equal(t, want, wire.FailureCode(err), "%v", err)
	}
	ans := sample()
	ans.Status = text2sql.StatusFailed
	a := wire.NewAnswer(ans, fmt.Errorf("%w: x", text2sql.ErrRepairsExhausted), wire.Public)
	require.NotNil(t, a.Error)
	assert.Equal(t, wire.FailureRepairsExhausted, a.Error.Code)
	assert.False(t, a.Answerable)
	assert.True(t, strings.HasPrefix(a.Error.Message, "text2sql: repairs exhausted"))
}
