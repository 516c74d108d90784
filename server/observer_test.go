package server

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/syncbuf"
)

// obsRecorder is an Observer that notes every call.
type obsRecorder struct {
	mu     sync.Mutex
	events []string
	runs   []RunEvent
	reqs   []RequestEvent
}

type ctxMark struct{}

func (r *obsRecorder) note(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, s)
}

func (r *obsRecorder) StartRequest(ctx context.Context, _ *http.Request) context.Context {
	r.note("start")
	return context.WithValue(ctx, ctxMark{}, true)
}

func (r *obsRecorder) EndRequest(ctx context.Context, e RequestEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ctx.Value(ctxMark{}) == nil {
		r.events = append(r.events, "end without the start's context")
	}
	r.reqs = append(r.reqs, e)
}

func (r *obsRecorder) PipelineRun(ctx context.Context, e RunEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.runs = append(r.runs, e)
}

func (r *obsRecorder) Statement(_ context.Context, e StatementEvent) {
	r.note("statement " + e.Source + " " + string(e.Kind))
}
func (r *obsRecorder) RateLimited(_ context.Context, route string, code Code) {
	r.note("limited " + route + " " + string(code))
}
func (r *obsRecorder) Cache(_ context.Context, route string, hit bool) {
	if hit {
		r.note("hit " + route)
	} else {
		r.note("miss " + route)
	}
}
func (r *obsRecorder) ToolCall(_ context.Context, tool string, code Code) {
	r.note("tool " + tool + " " + string(code))
}

// panicky panics in every hook it implements.
type panicky struct{ NopObserver }

func (panicky) StartRequest(context.Context, *http.Request) context.Context { panic("start") }
func (panicky) EndRequest(context.Context, RequestEvent)                    { panic("end") }
func (panicky) PipelineRun(context.Context, RunEvent)                       { panic("run") }
func (panicky) Cache(context.Context, string, bool)                         { panic("cache") }

func TestObservers(t *testing.T) {
	rec := &obsRecorder{}
	var logs syncbuf.Buffer
	srv := testServer(t, Config{
		Observers: []Observer{panicky{}, nil, rec}, Logger: jsonLogger(&logs),
		Cache: Cache{Store: &mapStore{}}, RateLimit: RateLimit{Requests: 3, Window: time.Hour},
	})
	q := map[string]string{"question": "List two course codes"}
	for range 2 {
		r := do(t, srv, "POST", "/v1/ask", testToken, q)
		require.Equal(t, 200, r.status, "%s", r.body)
	}
	require.Equal(t, 404, do(t, srv, "GET", "/nowhere", testToken, nil).status)
	require.Equal(t, 200, do(t, srv, "POST", "/v1/run", testToken, map[string]string{"sql": "DROP TABLE students"}).status)
	require.Equal(t, 429, do(t, srv, "POST", "/v1/generate", testToken, q).status)

	rec.mu.Lock()
	defer rec.mu.Unlock()
	assert.Equal(t, []string{
		"start", "miss POST /v1/ask", "statement POST /v1/ask ",
		"start", "hit POST /v1/ask",
		"start",
		"start", "statement POST /v1/run not_read_only",
		"start", "limited POST /v1/generate rate_limited",
	}, rec.events)
	// The cache hit is not a pipeline run.
	require.Len(t, rec.runs, 1)
	assert.Equal(t, "POST /v1/ask", rec.runs[0].Route)
	require.NotNil(t, rec.runs[0].Answer)
	assert.Equal(t, text2sql.StatusAnswered, rec.runs[0].Answer.Status)
	assert.NoError(t, rec.runs[0].Err)
	require.Len(t, rec.reqs, 5)
	var routes []string
	for _, e := range rec.reqs {
		routes = append(routes, e.Route)
		assert.Positive(t, e.Duration)
	}
	assert.Equal(t, []string{"POST /v1/ask", "POST /v1/ask", "", "POST /v1/run", "POST /v1/generate"}, routes)
	assert.Equal(t, 404, rec.reqs[2].Status)
	assert.Equal(t, CodeNotFound, rec.reqs[2].Code)
	assert.Equal(t, 429, rec.reqs[4].Status)
	assert.Equal(t, CodeRateLimited, rec.reqs[4].Code)
	// Each panic was logged, and none failed a request.
	assert.Contains(t, logs.String(), `"msg":"observer panicked"`)
	assert.Contains(t, logs.String(), `"hook":"PipelineRun"`)
}

func TestMetricsRoute(t *testing.T) {
	srv := testServer(t, Config{})
	r := do(t, srv, "GET", "/metrics", testToken, nil)
	assert.Equal(t, 404, r.status)
	assert.Equal(t, CodeNotFound, r.code(t))

	srv = testServer(t, Config{Metrics: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("text2sql_up 1\n"))
	})})
	assert.Equal(t, 401, do(t, srv, "GET", "/metrics", "", nil).status)
	r = do(t, srv, "GET", "/metrics", testToken, nil)
	assert.Equal(t, 200, r.status)
	assert.Equal(t, "text2sql_up 1\n", string(r.body))
}

func TestObserversMCP(t *testing.T) {
	rec := &obsRecorder{}
	cs := mcpSession(t, Config{Pipeline: newPipeline(t, sqlModel("SELECT 1"), 0), RateLimit: RateLimit{Requests: 2},
		Observers: []Observer{rec}})
	callTool(t, cs, "ask", map[string]any{"question": "One?"}, nil)
	callTool(t, cs, "run_sql", map[string]any{"sql": "SELECT 1"}, nil)
	callTool(t, cs, "generate_sql", map[string]any{"question": "One?"}, nil)
	callTool(t, cs, "list_examples", nil, nil)

	rec.mu.Lock()
	defer rec.mu.Unlock()
	assert.Equal(t, []string{
		"tool ask ", "statement mcp ask ",
		"tool run_sql ", "statement mcp run_sql ",
		"limited mcp generate_sql rate_limited", "tool generate_sql rate_limited",
		"tool list_examples ",
	}, rec.events)
	require.Len(t, rec.runs, 1)
	assert.Equal(t, "mcp ask", rec.runs[0].Route)
}
