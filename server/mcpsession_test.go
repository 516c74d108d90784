package server

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mcpRaw sends one streamable-HTTP request to /mcp in session id with
// token, and returns the status and body.
func mcpRaw(t *testing.T, srv *httptest.Server, method, token, id, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+"/mcp", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(mcpSessionHeader, id)
	res, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, string(b)
}

// An MCP session is its creator's: bob, with his own valid token and
// alice's session id, can neither call a tool in it, open its stream nor
// end it, and is told what an unknown session gets; alice's session works
// on, and once she ends it, it is gone for her too.
func TestMCPSessionIsItsCreators(t *testing.T) {
	rec := &recorder{}
	srv := testServer(t, Config{Auditor: rec, Schema: fixture.exec.Schema()})
	ctx := context.Background()
	hc := &http.Client{Transport: withHeader{"Authorization", "Bearer " + testToken, srv.Client().Transport}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "alice", Version: "v0"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: hc}, nil)
	require.NoError(t, err)
	id := cs.ID()
	require.NotEmpty(t, id)

	const call = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"run_sql","arguments":{"sql":"SELECT count(*) FROM students"}}}`
	status, body := mcpRaw(t, srv, http.MethodPost, testToken, id, call)
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, body, `"row_count":1`, "alice's own call")
	unknownStatus, unknownBody := mcpRaw(t, srv, http.MethodPost, bobToken, "no-such-session", call)
	for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
		in := ""
		if method == http.MethodPost {
			in = call
		}
		status, body := mcpRaw(t, srv, method, bobToken, id, in)
		assert.Equal(t, http.StatusNotFound, status, "bob %s: %s", method, body)
		assert.Equal(t, unknownStatus, status, "bob %s: as an unknown session", method)
		assert.Equal(t, unknownBody, body, "bob %s: as an unknown session", method)
	}
	var run RunResponse
	isErr, text := callTool(t, cs, "run_sql", map[string]any{"sql": "SELECT count(*) FROM students"}, &run)
	assert.False(t, isErr || !run.OK, "alice after bob's DELETE: %s", text)
	for _, e := range rec.all() {
		assert.Equal(t, "alice", e.Principal, "audit: only alice's calls ran")
	}
	assert.Len(t, rec.all(), 2)

	require.NoError(t, cs.Close()) // the owner's DELETE
	status, body = mcpRaw(t, srv, http.MethodPost, testToken, id, call)
	assert.Equal(t, http.StatusNotFound, status, "alice after her DELETE: %s", body)
}
