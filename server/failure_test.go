package server

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/generator"
	"github.com/text2sql-go/text2sql/internal/dbtest"
	"github.com/text2sql-go/text2sql/llm/llmtest"
)

// countingExec counts the statements that reach the database.
type countingExec struct {
	text2sql.Executor
	n atomic.Int64
}

func (c *countingExec) Execute(ctx context.Context, req text2sql.ExecuteRequest) (*text2sql.Result, error) {
	c.n.Add(1)
	return c.Executor.Execute(ctx, req)
}

// countedPipeline is the demo pipeline over ex with model.
func countedPipeline(t *testing.T, model text2sql.Model, ex text2sql.Executor) *text2sql.Pipeline {
	t.Helper()
	gen, err := generator.New(model, generator.Options{Dialect: text2sql.DialectSQLite})
	require.NoError(t, err)
	p, err := text2sql.New(text2sql.Config{Retriever: fixture.ret, Generator: gen, Executor: ex, MaxRows: 100, DisableExampleReuse: true})
	require.NoError(t, err)
	return p
}

// postgresAuditDB is a fresh PostgreSQL database with the audit table,
// and functions stopping it (no connection accepted, every open one
// ended: what its server going down looks like to the service) and
// starting it again.
func postgresAuditDB(t *testing.T) (a *SQLAuditor, rows func() int, stop, start func()) {
	t.Helper()
	admin, dsn := dbtest.Postgres(t)
	name := strings.TrimPrefix(must(url.Parse(dsn)).Path, "/")
	db, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	a, err = NewPostgresAuditor(context.Background(), db, "")
	require.NoError(t, err)
	// The admin handle is on the audit database itself: a second server
	// connection, from the default database, switches it.
	ctl, err := sql.Open("pgx", dbtest.PostgresDSN())
	require.NoError(t, err)
	t.Cleanup(func() {
		dbtest.Exec(t, ctl, `ALTER DATABASE `+name+` ALLOW_CONNECTIONS true`)
		ctl.Close()
	})
	rows = func() int {
		var n int
		require.NoError(t, admin.QueryRow(`SELECT count(*) FROM text2sql_audit`).Scan(&n))
		return n
	}
	stop = func() {
		admin.Close()
		dbtest.Exec(t, ctl, `ALTER DATABASE `+name+` ALLOW_CONNECTIONS false`,
			`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '`+name+`'`)
	}
	start = func() {
		dbtest.Exec(t, ctl, `ALTER DATABASE `+name+` ALLOW_CONNECTIONS true`)
		admin, err = sql.Open("pgx", dsn)
		require.NoError(t, err)
		t.Cleanup(func() { admin.Close() })
	}
	return a, rows, stop, start
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// With the audit database stopped, nothing runs: /v1/run, /v1/ask,
// feedback and the MCP tools answer audit_unavailable (503 over HTTP)
// without a statement reaching the database or a vote being stored, and
// /health is not ready. Once it is back, every statement that ran has
// its row.
func TestAuditFailsClosed(t *testing.T) {
	a, auditRows, stop, start := postgresAuditDB(t)
	ex := &countingExec{Executor: fixture.exec}
	model := sqlModel("SELECT code FROM courses ORDER BY code LIMIT 2")
	fb := feedbackRecorder(t)
	cfg := Config{Pipeline: countedPipeline(t, model, ex), Auditor: a, Feedback: fb}
	srv := testServer(t, cfg)
	cs := mcpSession(t, cfg)
	run := map[string]string{"sql": "SELECT count(*) AS n FROM courses"}

	r := do(t, srv, "POST", "/v1/run", testToken, run)
	require.Equal(t, 200, r.status, "%s", r.body)
	require.Equal(t, 1, auditRows())
	var h HealthResponse
	do(t, srv, "GET", "/health", "", nil).json(t, &h)
	assert.Equal(t, "ok", h.Checks["audit"])

	stop()
	ran, calls := ex.n.Load(), model.CallCount()
	for _, path := range []string{"/v1/run", "/v1/ask", "/v1/feedback"} {
		body := map[string]string{"sql": run["sql"], "question": "How many courses are there?", "verdict": "up"}
		r = do(t, srv, "POST", path, testToken, body)
		assert.Equal(t, 503, r.status, "%s: %s", path, r.body)
		assert.Equal(t, CodeAuditUnavailable, r.code(t), path)
		assert.Equal(t, "1", r.header.Get("Retry-After"), path)
	}
	for tool, args := range map[string]map[string]any{"run_sql": {"sql": run["sql"]}, "ask": {"question": "How many courses are there?"}} {
		isErr, text := callTool(t, cs, tool, args, nil)
		assert.True(t, isErr, tool)
		assert.Contains(t, text, string(CodeAuditUnavailable), tool)
	}
	assert.Equal(t, ran, ex.n.Load(), "no statement reached the database")
	assert.Equal(t, calls, model.CallCount(), "no model call either")
	exs, err := fb.Store.Examples(context.Background())
	require.NoError(t, err)
	assert.Empty(t, exs, "the vote was not stored")
	require.Eventually(t, func() bool {
		r := do(t, srv, "GET", "/health", "", nil)
		var h HealthResponse
		r.json(t, &h)
		return r.status == 503 && h.Checks["audit"] == "unreachable"
	}, 10*time.Second, 100*time.Millisecond, "/health with the audit database stopped")

	start()
	r = do(t, srv, "POST", "/v1/run", testToken, run)
	require.Equal(t, 200, r.status, "%s", r.body)
	assert.Equal(t, int(ex.n.Load()), auditRows(), "every statement that ran has its audit row")
}

// The opt-out runs statements unaudited, as its name says.
func TestAuditFailOpen(t *testing.T) {
	a, _, stop, _ := postgresAuditDB(t)
	stop()
	srv := testServer(t, Config{Auditor: a, AuditFailOpen: true})
	r := do(t, srv, "POST", "/v1/run", testToken, map[string]string{"sql": "SELECT count(*) AS n FROM courses"})
	assert.Equal(t, 200, r.status, "%s", r.body)
	assert.Equal(t, 200, do(t, srv, "GET", "/health", "", nil).status, "no audit probe when audit may fail")
}

// A record that cannot be written withholds the rows it recorded.
func TestAuditWriteFailureWithholdsRows(t *testing.T) {
	broken := AuditorFunc(func(context.Context, AuditEvent) error { return errors.New("disk full") })
	srv := testServer(t, Config{Auditor: broken})
	r := do(t, srv, "POST", "/v1/run", testToken, map[string]string{"sql": "SELECT code FROM courses"})
	assert.Equal(t, 503, r.status, "%s", r.body)
	assert.Equal(t, CodeAuditUnavailable, r.code(t))
	assert.NotContains(t, string(r.body), "rows")
	r = do(t, srv, "POST", "/v1/ask", testToken, map[string]string{"question": "Which courses are there?"})
	assert.Equal(t, 503, r.status, "%s", r.body)
	assert.Equal(t, CodeAuditUnavailable, r.code(t))
}

// The database down answers the same on /v1/run, /v1/ask and the MCP
// tools: 503 executor_unavailable with Retry-After.
func TestDatabaseDownSameCodeEverywhere(t *testing.T) {
	down := text2sql.ExecutorFunc(func(context.Context, text2sql.ExecuteRequest) (*text2sql.Result, error) {
		return nil, errors.New("dial tcp 127.0.0.1:5432: connect: connection refused")
	})
	cfg := Config{Pipeline: countedPipeline(t, sqlModel("SELECT code FROM courses"), down)}
	srv := testServer(t, cfg)
	for path, body := range map[string]map[string]string{
		"/v1/run": {"sql": "SELECT 1"}, "/v1/ask": {"question": "Which courses are there?"},
	} {
		r := do(t, srv, "POST", path, testToken, body)
		assert.Equal(t, 503, r.status, "%s: %s", path, r.body)
		assert.Equal(t, CodeExecutor, r.code(t), path)
		assert.Equal(t, "1", r.header.Get("Retry-After"), path)
	}
	cs := mcpSession(t, cfg)
	for tool, args := range map[string]map[string]any{"run_sql": {"sql": "SELECT 1"}, "ask": {"question": "Which courses are there?"}} {
		isErr, text := callTool(t, cs, tool, args, nil)
		assert.True(t, isErr, tool)
		assert.Contains(t, text, string(CodeExecutor), tool)
	}
}

// Beyond MaxConcurrentAsks a question is answered 503 overloaded at once,
// with Retry-After; /v1/run, which calls no model, is not counted.
func TestMaxConcurrentAsks(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 2)
	model := llmtest.Func(func(text2sql.ModelRequest) (string, error) {
		entered <- struct{}{}
		<-release
		return answerJSON("SELECT code FROM courses"), nil
	})
	srv := testServer(t, Config{Pipeline: countedPipeline(t, model, fixture.exec), MaxConcurrentAsks: 1})
	q := map[string]string{"question": "Which courses are there?"}
	first := make(chan response, 1)
	go func() { first <- do(t, srv, "POST", "/v1/ask", testToken, q) }()
	<-entered
	r := do(t, srv, "POST", "/v1/ask", testToken, q)
	assert.Equal(t, 503, r.status, "%s", r.body)
	assert.Equal(t, CodeOverloaded, r.code(t))
	assert.Equal(t, "1", r.header.Get("Retry-After"))
	assert.Equal(t, 200, do(t, srv, "POST", "/v1/run", testToken, map[string]string{"sql": "SELECT 1"}).status)
	close(release)
	assert.Equal(t, 200, (<-first).status)
	assert.Equal(t, 200, do(t, srv, "POST", "/v1/ask", testToken, q).status, "the slot is free again")
}

// /health tells the unauthenticated only whether the service and its
// dependencies are up: not the login's privileges, the models or the
// index. A bad token is no better than none.
func TestHealthUnauthenticated(t *testing.T) {
	login := &Login{Elevated: true, Privileges: []string{"superuser"}}
	srv := testServer(t, Config{Info: Info{Login: login, Models: []string{"scripted"}, Fingerprint: "f00d"},
		Readiness: map[string]Probe{"database": func(context.Context) error { return nil }}})
	for _, token := range []string{"", "tok-mallory-0123456789abcdef"} {
		r := do(t, srv, "GET", "/health", token, nil)
		require.Equal(t, 200, r.status, "%s", r.body)
		var body map[string]any
		r.json(t, &body)
		assert.Equal(t, map[string]any{"status": "ok", "checks": map[string]any{"database": "ok"}}, body, "token %q", token)
	}
	var h HealthResponse
	do(t, srv, "GET", "/health", testToken, nil).json(t, &h)
	assert.Equal(t, login, h.Login)
	assert.Equal(t, []string{"scripted"}, h.Models)
}

// A saved answer's rows delivered without running its SQL are audited
// (outcome "saved"), and withheld when that record cannot be written.
func TestSavedAnswerReplayAudited(t *testing.T) {
	var (
		mu     sync.Mutex
		events []AuditEvent
		broken bool
	)
	auditor := AuditorFunc(func(_ context.Context, e AuditEvent) error {
		mu.Lock()
		defer mu.Unlock()
		if broken {
			return errors.New("disk full")
		}
		events = append(events, e)
		return nil
	})
	srv := testServer(t, Config{Auditor: auditor, Pipeline: newPipeline(t, sqlModel("SELECT code FROM courses ORDER BY code LIMIT 2"), 0),
		Conversations: &Conversations{Store: openConversationStore(t), DataVersion: func(context.Context) (string, error) { return "v1", nil }}})
	ask := func(msg string) response {
		r := do(t, srv, "POST", "/v1/conversations", testToken, map[string]any{})
		require.Equal(t, 200, r.status, "%s", r.body)
		var c ConversationBody
		r.json(t, &c)
		r = do(t, srv, "POST", "/v1/conversations/"+c.ConversationID+"/messages", testToken, MessageRequest{Message: msg})
		if msg == "Which courses come first?" {
			require.Equal(t, 200, r.status, "%s", r.body)
			require.Equal(t, 200, do(t, srv, "POST", "/v1/conversations/"+c.ConversationID+"/saved", testToken, SaveRequest{}).status)
		}
		return r
	}
	ask("Which courses come first?")
	r := ask("which courses come first")
	require.Equal(t, 200, r.status, "%s", r.body)
	var reply ReplyBody
	r.json(t, &reply)
	require.NotEmpty(t, reply.SavedAnswer, "answered from the saved answer")
	mu.Lock()
	last := events[len(events)-1]
	broken = true
	mu.Unlock()
	assert.Equal(t, "saved", last.Outcome)
	assert.Equal(t, 2, last.RowCount)
	assert.Equal(t, "alice", last.Principal)

	r = ask("which courses come first")
	assert.Equal(t, 503, r.status, "%s", r.body)
	assert.Equal(t, CodeAuditUnavailable, r.code(t))
	assert.NotContains(t, string(r.body), "rows")
}
