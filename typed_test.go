package text2sql

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTableRefJSON(t *testing.T) {
	refs := []TableRef{
		{Name: "students", Reason: ReasonRetrieved, Score: 0.03},
		{Name: "enrollments", Reason: ReasonExample, Example: "q3"},
		{Name: "courses", Reason: ReasonJoinPath},
		{Name: "grades", Reason: ReasonRequired},
	}
	b, err := json.Marshal(refs)
	require.NoError(t, err)
	assert.JSONEq(t, `[{"name":"students","reason":"retrieved","score":0.03},
		{"name":"enrollments","reason":"via example q3","score":0},
		{"name":"courses","reason":"join path","score":0},
		{"name":"grades","reason":"required","score":0}]`, string(b))
	var back []TableRef
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, refs, back)
	assert.Equal(t, "via example q3", refs[1].Why())
}

func TestAttemptJSON(t *testing.T) {
	cause := &OutputError{Raw: "hm", Err: ErrNoSQL}
	a := Attempt{N: 2, Warnings: []string{"w"}, Error: cause}
	var oe *OutputError
	assert.ErrorAs(t, a.Error, &oe)
	assert.ErrorIs(t, a.Error, ErrNoSQL)
	b, err := json.Marshal(a)
	require.NoError(t, err)
	assert.Equal(t, `{"n":2,"warnings":["w"],"error":"text2sql: no SQL found in model output"}`, string(b))
	var back Attempt
	require.NoError(t, json.Unmarshal(b, &back))
	require.Error(t, back.Error)
	assert.Equal(t, cause.Error(), back.Error.Error())
	assert.Equal(t, 2, back.N)

	b, err = json.Marshal(Attempt{N: 1})
	require.NoError(t, err)
	assert.Equal(t, `{"n":1}`, string(b))
	back = Attempt{Error: errors.New("stale")}
	require.NoError(t, json.Unmarshal(b, &back))
	assert.NoError(t, back.Error)
}
