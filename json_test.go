package text2sql

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every duration in the package's JSON is duration_ms (milliseconds), and
// decoding gives the same value back.
func TestDurationsInMilliseconds(t *testing.T) {
	call := ModelCall{Model: "m", Usage: Usage{InputTokens: 3}, Duration: 1500 * time.Microsecond}
	ans := Answer{
		Question: "q",
		Result:   &Result{Columns: []string{"n"}, Rows: [][]any{{1.0}}, RowCount: 1, Duration: 2 * time.Millisecond},
		Attempts: []Attempt{{N: 1, Plan: &Plan{Calls: []ModelCall{call}}, Verdict: &Verdict{Calls: []ModelCall{call}},
			Result: &Result{Duration: 3 * time.Millisecond}}},
		Trace: Trace{Duration: time.Second, Steps: []Step{{Stage: StageSQL, Duration: 250 * time.Millisecond, Calls: []ModelCall{call}}}},
	}
	b, err := json.Marshal(ans)
	require.NoError(t, err)
	s := string(b)
	assert.NotContains(t, s, `"duration"`)
	assert.Equal(t, 7, strings.Count(s, `"duration_ms"`), s)
	for _, want := range []string{`"duration_ms":1.5`, `"duration_ms":2`, `"duration_ms":3`, `"duration_ms":1000`, `"duration_ms":250`} {
		assert.Contains(t, s, want)
	}
	var back Answer
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, ans.Result.Duration, back.Result.Duration)
	assert.Equal(t, ans.Trace.Duration, back.Trace.Duration)
	assert.Equal(t, call, back.Trace.Steps[0].Calls[0])
	assert.Equal(t, ans.Attempts[0].Plan.Calls[0], back.Attempts[0].Plan.Calls[0])

	empty, err := json.Marshal(Result{})
	require.NoError(t, err)
	assert.Contains(t, string(empty), `"duration_ms":0`)
}

// An attempt's and a candidate's Error is its message in JSON, left out
// when nil, and decodes to an error with that message.
func TestErrorsAsMessages(t *testing.T) {
	failed := Attempt{N: 2, Error: &OutputError{Raw: "x", Err: ErrInvalidOutput}}
	b, err := json.Marshal(failed)
	require.NoError(t, err)
	assert.JSONEq(t, `{"n": 2, "error": "text2sql: malformed model output"}`, string(b))
	var back Attempt
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, 2, back.N)
	assert.EqualError(t, back.Error, failed.Error.Error())
	b, err = json.Marshal(Attempt{N: 1})
	require.NoError(t, err)
	assert.NotContains(t, string(b), `"error"`)
	require.NoError(t, json.Unmarshal(b, &back))
	assert.NoError(t, back.Error, "decoding an attempt without an error clears the old one")

	b, err = json.Marshal(CandidateOutcome{Variant: 1, Error: ErrNilResult})
	require.NoError(t, err)
	assert.JSONEq(t, `{"variant": 1, "group": 0, "error": "`+ErrNilResult.Error()+`"}`, string(b))
	var outcome CandidateOutcome
	require.NoError(t, json.Unmarshal(b, &outcome))
	assert.EqualError(t, outcome.Error, ErrNilResult.Error())
}
