package server

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/feedback"
	fbsqlite "github.com/text2sql-go/text2sql/feedback/sqlite"
)

func feedbackRecorder(t *testing.T) *feedback.Recorder {
	t.Helper()
	st, err := fbsqlite.Open(filepath.Join(t.TempDir(), "examples.sqlite"), fbsqlite.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	return &feedback.Recorder{Store: st, Guard: fixture.exec}
}

// POST /v1/feedback: authenticated, audited with the principal; a refused
// statement is 422 and stored nowhere; without a store, 503.
func TestFeedbackRoute(t *testing.T) {
	audit := &recorder{}
	rec := feedbackRecorder(t)
	srv := testServer(t, Config{Feedback: rec, Auditor: audit})
	body := map[string]string{"question": "How many courses are there?", "sql": "SELECT COUNT(*) FROM courses", "verdict": "up"}

	r := do(t, srv, "POST", "/v1/feedback", "", body)
	assert.Equal(t, 401, r.status)

	r = do(t, srv, "POST", "/v1/feedback", testToken, body)
	require.Equal(t, 200, r.status, "%s", r.body)
	var out FeedbackResponse
	r.json(t, &out)
	assert.True(t, out.Added)
	assert.Equal(t, feedback.ExampleID(body["question"]), out.ExampleID)

	courses := tableRows(t, "courses")
	for _, sql := range []string{"SELECT 1; DROP TABLE courses", "DELETE FROM courses", "PRAGMA writable_schema = 1"} {
		r = do(t, srv, "POST", "/v1/feedback", testToken, map[string]string{"question": "smuggled", "sql": sql, "verdict": "up"})
		assert.Equal(t, 422, r.status, "%s: %s", sql, r.body)
		assert.Equal(t, CodeRefusedSQL, r.code(t))
	}
	exs, err := rec.Store.Examples(context.Background())
	require.NoError(t, err)
	assert.Len(t, exs, 1, "only the good statement was stored")
	assert.Equal(t, courses, tableRows(t, "courses"), "nothing was written")

	r = do(t, srv, "POST", "/v1/feedback", testToken, map[string]string{"question": "q", "sql": "SELECT 1", "verdict": "maybe"})
	assert.Equal(t, 400, r.status)

	events := audit.all()
	require.Len(t, events, 4, "the up-vote and the three refusals")
	assert.Equal(t, "alice", events[0].Principal)
	assert.Equal(t, "feedback up", events[0].Outcome)
	assert.Equal(t, "POST /v1/feedback", events[0].Source)
	assert.Equal(t, "multiple_statements", events[1].Outcome)

	plain := testServer(t, Config{})
	r = do(t, plain, "POST", "/v1/feedback", testToken, body)
	assert.Equal(t, 503, r.status)
	assert.Equal(t, CodeNotConfigured, r.code(t))
}
