package server

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/internal/syncbuf"
	"github.com/text2sql-go/text2sql/llm/llmtest"
)

// TestNoSecretsOrPrompts drives every route and the MCP endpoint with a
// Supabase-compatible verifier and a scripted model, then checks that no
// response (body or header) and no log line holds a token, the anon key,
// or any line of a prompt the model was sent.
func TestNoSecretsOrPrompts(t *testing.T) {
	stub, _ := supabaseStub(t)
	auth, err := NewSupabase(SupabaseOptions{URL: stub.URL, AnonKey: anonKey})
	require.NoError(t, err)
	defer auth.client.CloseIdleConnections()
	const token = "good-token-of-ada"
	model := llmtest.New(answerJSON("SELECT nme FROM students"), answerJSON("SELECT code, title FROM courses ORDER BY code LIMIT 3")).RepeatLast()
	logs := &syncbuf.Buffer{}
	srv := testServer(t, Config{Pipeline: newPipeline(t, model, 2), Auth: auth, Logger: jsonLogger(logs),
		RateLimit: RateLimit{Requests: 100}, AnswerKeys: AnswerKeyMap{"1": "SELECT 1"}})

	var seen strings.Builder
	keep := func(r response) {
		seen.Write(r.body)
		for k, v := range r.header {
			seen.WriteString(k + ": " + strings.Join(v, ",") + "\n")
		}
	}
	q := map[string]string{"question": "How many students take each class?"}
	keep(do(t, srv, "GET", "/health", "", nil))
	keep(do(t, srv, "GET", "/openapi.json", "", nil))
	keep(do(t, srv, "POST", "/v1/generate", token, q))
	keep(do(t, srv, "POST", "/v1/ask", token, q))
	keep(do(t, srv, "POST", "/v1/run", token, map[string]any{"sql": "SELECT 1", "question_id": "1"}))
	keep(do(t, srv, "POST", "/v1/run", token, map[string]any{"sql": "DROP TABLE students"}))
	keep(do(t, srv, "POST", "/v1/run", "crash", map[string]any{"sql": "SELECT 1"}))
	keep(do(t, srv, "POST", "/v1/run", "wrong-token-123", map[string]any{"sql": "SELECT 1"}))
	keep(do(t, srv, "POST", "/v1/run", token, "not json"))

	// MCP over HTTP with the same token.
	hc := &http.Client{Transport: withHeader{"Authorization", "Bearer " + token, srv.Client().Transport}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "v0"}, nil).
		Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: hc}, nil)
	require.NoError(t, err)
	for _, call := range []struct {
		name string
		args map[string]any
	}{{"generate_sql", map[string]any{"question": "Which courses exist?"}}, {"ask", map[string]any{"question": "Which courses exist?"}},
		{"run_sql", map[string]any{"sql": "SELECT 1"}}} {
		_, text := callTool(t, cs, call.name, call.args, nil)
		seen.WriteString(text)
	}
	cs.Close()
	srv.Close() // waits for every request's handler, so its log record has landed

	out, logText := seen.String(), logs.String()
	secrets := map[string]string{"token": token, "anon key": anonKey, "rejected token": "wrong-token-123"}
	calls := model.Calls()
	require.GreaterOrEqual(t, len(calls), 4, "%d model calls", len(calls))
	n := 0
	for _, c := range calls {
		prompt := c.System
		for _, m := range c.Messages {
			prompt += "\n" + m.Content
		}
		for _, line := range strings.Split(prompt, "\n") {
			if line = strings.TrimSpace(line); len(line) >= 40 {
				secrets["prompt line "+line] = line
				n++
			}
		}
	}
	require.GreaterOrEqual(t, n, 10, "only %d prompt lines to look for", n)
	for what, s := range secrets {
		assert.NotContains(t, out, s, "a response holds the %s", what)
		assert.NotContains(t, logText, s, "the log holds the %s", what)
	}
	assert.False(t, !strings.Contains(logText, `"principal":"user-ada"`) || !strings.Contains(logText, `"msg":"audit"`), "the log lacks the request or audit records:\n%s", logText)
	assert.NotContains(t, strings.ToLower(logText), "authorization", "the log mentions the Authorization header")
}
