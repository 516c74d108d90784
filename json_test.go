package text2sql

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The package's types are plain data: encoding/json gives an answer back
// as it was, errors and the host-only fields (prompts, start times)
// excepted. The JSON form clients see is package wire's.
func TestPlainJSON(t *testing.T) {
	call := ModelCall{Model: "m", Usage: Usage{InputTokens: 3}, Duration: 1500 * time.Microsecond, Attempts: 2}
	ans := Answer{
		Question: "q", Status: StatusVerified, SQL: "SELECT 1",
		Result: &Result{Columns: []string{"n"}, Rows: [][]any{{1.0}}, RowCount: 1, Duration: 2 * time.Millisecond,
			Steps: []ResultStep{{Database: "a", SQL: "SELECT 1", RowCount: 1, Duration: time.Millisecond}}},
		Retrieval: &Retrieval{Question: "q", Tables: []TableRef{
			{Name: "students", Reason: ReasonRetrieved, Score: 0.03},
			{Name: "enrollments", Reason: ReasonExample, Example: "q3"},
		}},
		Attempts: []Attempt{{N: 1, Plan: &Plan{Calls: []ModelCall{call}}, Verdict: &Verdict{OK: true, Calls: []ModelCall{call}},
			Result: &Result{Duration: 3 * time.Millisecond}}},
		Trace: Trace{Duration: time.Second, Usage: Usage{InputTokens: 3}, ModelCalls: 1,
			Steps: []Step{{Stage: StageSQL, Duration: 250 * time.Millisecond, Usage: Usage{InputTokens: 3}, Calls: []ModelCall{call}}}},
	}
	b, err := json.Marshal(ans)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"duration_ns":1000000000`)
	assert.Contains(t, string(b), `"reason":"via example","example":"q3"`)
	var back Answer
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, ans, back)
	assert.Equal(t, "via example q3", back.Retrieval.Tables[1].Why())

	withErr, err := json.Marshal(Attempt{N: 2, Error: ErrNilResult})
	require.NoError(t, err)
	assert.JSONEq(t, `{"n": 2}`, string(withErr), "an error has no JSON form of its own")
}
