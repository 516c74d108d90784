package server

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/wire"
)

// mcpSession connects a real MCP client to NewMCPServer(cfg) over the
// SDK's in-memory transports.
func mcpSession(t *testing.T, cfg Config) *mcp.ClientSession {
	t.Helper()
	if cfg.Auth == nil {
		cfg.Auth = NoAuth()
	}
	if cfg.RateLimit == (RateLimit{}) {
		cfg.RateLimit.Unlimited = true
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	srv, err := NewMCPServer(cfg)
	require.NoError(t, err)
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	require.NoError(t, err)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "v0"}, nil).Connect(ctx, ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

// callTool calls a tool and decodes its structured output into out. It
// returns whether the result is marked as an error, and the text content.
func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, out any) (bool, string) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err, "%s", name)
	var text strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	if out != nil && res.StructuredContent != nil {
		b, err := json.Marshal(res.StructuredContent)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(b, out), "%s: decoding %s", name, b)
	}
	return res.IsError, text.String()
}

func TestMCPTools(t *testing.T) {
	rec := &recorder{}
	model := sqlModel("SELECT code FROM courses ORDER BY code LIMIT 2")
	cs := mcpSession(t, Config{Pipeline: newPipeline(t, model, 0), Schema: fixture.exec.Schema(), Examples: fixture.kb.Examples,
		Auditor: rec, AnswerKeys: AnswerKeyMap{"k": "SELECT code FROM courses ORDER BY code LIMIT 2"}})
	ctx := context.Background()
	var names []string
	for tool, err := range cs.Tools(ctx, nil) {
		require.NoError(t, err)
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	assert.Equal(t, "ask,describe_schema,generate_sql,list_examples,run_sql", strings.Join(names, ","), "tools %v", names)

	var sc SchemaBody
	isErr, _ := callTool(t, cs, "describe_schema", nil, &sc)
	assert.False(t, isErr || !strings.Contains(sc.DDL, "CREATE TABLE") || len(sc.Tables) != 5, "describe_schema: %+v", sc)
	isErr, _ = callTool(t, cs, "describe_schema", map[string]any{"tables": []string{"students", "nope"}}, &sc)
	assert.False(t, isErr ||
		len(sc.Tables) != 1 || !strings.Contains(sc.DDL, "students") || strings.Contains(sc.DDL, "enrollments\"") || len(sc.Unknown) != 1, "describe_schema students: %+v", sc)
	var ex ExamplesBody
	isErr, _ = callTool(t, cs, "list_examples", nil, &ex)
	assert.False(t, isErr || len(ex.Examples) != len(fixture.kb.Examples) || ex.Examples[0].SQL == "", "list_examples: %+v", ex)
	var g wire.Answer
	isErr, _ = callTool(t, cs, "generate_sql", map[string]any{"question": "Two course codes"}, &g)
	assert.False(t, isErr || g.Status != text2sql.StatusGenerated ||
		!strings.Contains(g.SQL, "courses") || g.Result != nil, "generate_sql: %+v", g)
	var run RunResponse
	isErr, _ = callTool(t, cs, "run_sql", map[string]any{"sql": g.SQL, "question_id": "k"}, &run)
	assert.False(t, isErr || !run.OK || run.RowCount != 2 ||
		run.Matched == nil || !*run.Matched, "run_sql: %+v", run)
	var a wire.Answer
	isErr, _ = callTool(t, cs, "ask", map[string]any{"question": "Two course codes"}, &a)
	assert.False(t, isErr || a.Status != text2sql.StatusAnswered ||
		a.Result == nil || a.Result.RowCount != 2, "ask: %+v", a)
	isErr, text := callTool(t, cs, "ask", map[string]any{"question": " "}, nil)
	assert.False(t, !isErr || !strings.Contains(text, "empty_question"), "empty question: %v %q", isErr, text)
	ev := rec.all()
	assert.False(t, len(ev) != 2 || ev[0].Source != "mcp run_sql" || ev[0].Principal != "local" || ev[0].Method != "stdio" || ev[1].Source != "mcp ask", "audit %+v", ev)
}

func TestMCPRateLimit(t *testing.T) {
	cs := mcpSession(t, Config{Pipeline: newPipeline(t, sqlModel("SELECT 1"), 0), RateLimit: RateLimit{Requests: 2}})
	for i := 0; i < 2; i++ {
		isErr, text := callTool(t, cs, "run_sql", map[string]any{"sql": "SELECT 1"}, nil)
		require.False(t, isErr, "call %d: %s", i+1, text)
	}
	isErr, text := callTool(t, cs, "run_sql", map[string]any{"sql": "SELECT 1"}, nil)
	assert.False(t, !isErr || !strings.Contains(text, "rate_limited"), "3rd call: %v %q", isErr, text)
	// describe_schema is free.
	isErr, _ = callTool(t, cs, "list_examples", nil, nil)
	assert.False(t, isErr, "list_examples limited")
}

// withHeader adds a header to every request.
type withHeader struct {
	name, value string
	base        http.RoundTripper
}

func (h withHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.name, h.value)
	return h.base.RoundTrip(r)
}

func TestMCPOverHTTP(t *testing.T) {
	rec := &recorder{}
	srv := testServer(t, Config{Auditor: rec, Schema: fixture.exec.Schema()})
	ctx := context.Background()
	connect := func(token string) (*mcp.ClientSession, error) {
		hc := &http.Client{Transport: withHeader{"Authorization", "Bearer " + token, srv.Client().Transport}}
		return mcp.NewClient(&mcp.Implementation{Name: "http-client", Version: "v0"}, nil).
			Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: hc}, nil)
	}
	for _, tok := range []string{"", "tok-mallory-0123456789abcdef"} {
		if cs, err := connect(tok); !assert.Error(t, err, "token %q: connected", tok) {
			cs.Close()
		}
	}
	cs, err := connect(testToken)
	require.NoError(t, err)
	defer cs.Close()
	var run RunResponse
	isErr, text := callTool(t, cs, "run_sql", map[string]any{"sql": "SELECT count(*) FROM students"}, &run)
	assert.False(t, isErr || !run.OK || run.Rows[0][0] != float64(200), "run_sql: %v %s", isErr, text)
	isErr, _ = callTool(t, cs, "run_sql", map[string]any{"sql": "DROP TABLE students"}, &run)
	assert.False(t, !isErr || run.OK || run.Error.Kind != text2sql.KindNotReadOnly, "DROP: %+v", run)
	ev := rec.all()
	assert.False(t, len(ev) != 2 || ev[0].Principal != "alice" || ev[0].Method != "static" || ev[0].RequestID == "" || ev[0].Source != "mcp run_sql", "audit %+v", ev)
	// The mcp.Server of NewMCPServer refuses calls over an HTTP mount that
	// did not authenticate them, even with a client-made internal header.
	ms, err := NewMCPServer(Config{Pipeline: newPipeline(t, sqlModel("SELECT 1"), 0), Auth: NoAuth()})
	require.NoError(t, err)
	raw := testServerHandler(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return ms }, nil))
	cs2, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "v0"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: raw.URL,
			HTTPClient: &http.Client{Transport: withHeader{principalHeader, "guessed-nonce", raw.Client().Transport}}}, nil)
	require.NoError(t, err)
	defer cs2.Close()
	isErr, text = callTool(t, cs2, "run_sql", map[string]any{"sql": "SELECT 1"}, nil)
	assert.False(t, !isErr || !strings.Contains(text, "unauthorized"), "unauthenticated mount: %v %q", isErr, text)
}
