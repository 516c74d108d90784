package server

import (
	"context"
	"database/sql"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/generator"
	"github.com/text2sql-go/text2sql/identity"
	"github.com/text2sql-go/text2sql/llm/llmtest"
	"github.com/text2sql-go/text2sql/wire"
)

func TestNewValidatesConfig(t *testing.T) {
	p := newPipeline(t, sqlModel("SELECT 1"), 0)
	for name, cfg := range map[string]Config{
		"no pipeline": {Auth: NoAuth()},
		"no auth":     {Pipeline: p},
		"bad mode":    {Pipeline: p, Auth: NoAuth(), AnswerMode: "fuzzy"},
		"negative":    {Pipeline: p, Auth: NoAuth(), MaxBodyBytes: -1},
	} {
		_, err := New(cfg)
		assert.ErrorIs(t, err, text2sql.ErrInvalidConfig, "%s: err %v, want ErrInvalidConfig", name, err)
	}
}

func TestHealth(t *testing.T) {
	srv := testServer(t, Config{Info: Info{
		Version: "v1.2.3", Models: []string{"scripted"}, Dialect: text2sql.DialectSQLite,
		Fingerprint: fixture.ret.Stats().Fingerprint, Embedder: fixture.ret.Stats().Embedder,
		Documents: fixture.ret.Stats().Documents, Knowledge: fixture.ret.Stats().Kinds,
	}})
	r := do(t, srv, "GET", "/health", testToken, nil)
	require.Equal(t, 200, r.status, "status %d: %s", r.status, r.body)
	var h HealthResponse
	r.json(t, &h)
	assert.False(t, h.Status != "ok" || h.Index.Fingerprint == "" || h.Knowledge["example"] == 0 || h.Auth != "static" || !h.MCP || h.Models[0] != "scripted", "health %+v", h)
	assert.NotEqual(t, "", r.header.Get("X-Request-Id"), "no X-Request-Id")
	assert.Equal(t, fixture.ret.Stats().Embedder, h.Index.Embedder)
	assert.Equal(t, "none", h.Index.Reranker, "no reranker configured")

	srv = testServer(t, Config{Info: Info{Embedder: "fastembed/fast-bge-small-en-v1.5", Reranker: "cross-encoder/ms-marco-MiniLM-L-6-v2"}})
	r = do(t, srv, "GET", "/health", testToken, nil)
	require.Equal(t, 200, r.status)
	h = HealthResponse{}
	r.json(t, &h)
	assert.Equal(t, "fastembed/fast-bge-small-en-v1.5", h.Index.Embedder)
	assert.Equal(t, "cross-encoder/ms-marco-MiniLM-L-6-v2", h.Index.Reranker)
}

func TestStaticTokens(t *testing.T) {
	srv := testServer(t, Config{})
	q := map[string]string{"question": "Which courses are there?"}
	r := do(t, srv, "POST", "/v1/generate", "", q)
	assert.False(t, r.status != 401 || r.code(t) != CodeUnauthorized || r.header.Get("WWW-Authenticate") == "", "no token: %d %s", r.status, r.body)
	r = do(t, srv, "POST", "/v1/generate", "tok-mallory-0123456789abcdef", q)
	assert.Equal(t, 401, r.status, "bad token: %d %s", r.status, r.body)
	r = do(t, srv, "POST", "/v1/generate", testToken, q)
	assert.Equal(t, 200, r.status, "good token: %d %s", r.status, r.body)
	_, err := NewStaticTokens(map[string]string{"short": "abc"})
	assert.Error(t, err, "short token accepted")
	_, err = NewStaticTokens(map[string]string{"a": testToken, "b": testToken})
	assert.Error(t, err, "duplicate token accepted")
	m, err := ParseStaticTokens(" alice:" + testToken + " , ci:x:y:0123456789abcdef ")
	assert.False(t, err != nil || m["alice"] != testToken || m["ci"] != "x:y:0123456789abcdef", "ParseStaticTokens: %v %v", m, err)
}

func TestRequestValidation(t *testing.T) {
	srv := testServer(t, Config{MaxBodyBytes: 1024})
	send := func(method, path, ctype, body string) response {
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		req.Header.Set("Authorization", "Bearer "+testToken)
		req.Header.Set("X-Request-Id", "client-id-1")
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return response{resp.StatusCode, resp.Header, b}
	}
	cases := []struct {
		name, method, path, ctype, body string
		status                          int
		code                            Code
	}{
		{"text body", "POST", "/v1/run", "text/plain", `{"sql":"SELECT 1"}`, 415, CodeUnsupportedMedia},
		{"no content type", "POST", "/v1/run", "", `{"sql":"SELECT 1"}`, 415, CodeUnsupportedMedia},
		{"too large", "POST", "/v1/run", "application/json", `{"sql":"SELECT '` + strings.Repeat("x", 2000) + `'"}`, 413, CodeBodyTooLarge},
		{"malformed", "POST", "/v1/run", "application/json", `{"sql":`, 400, CodeBadRequest},
		{"trailing", "POST", "/v1/run", "application/json", `{"sql":"SELECT 1"} {}`, 400, CodeBadRequest},
		{"wrong type", "POST", "/v1/ask", "application/json", `{"question":42}`, 400, CodeBadRequest},
		{"empty question", "POST", "/v1/generate", "application/json; charset=utf-8", `{"question":"  "}`, 400, CodeEmptyQuestion},
		{"long question", "POST", "/v1/generate", "application/json", `{"question":"` + strings.Repeat("é", MaxQuestionRunes+1) + `"}`, 413, CodeBodyTooLarge},
		{"unknown route", "GET", "/v2/nothing", "", "", 404, CodeNotFound},
		{"wrong method", "GET", "/v1/run", "", "", 405, CodeMethodNotAllowed},
	}
	for _, c := range cases {
		r := send(c.method, c.path, c.ctype, c.body)
		assert.False(t, r.status != c.status || r.code(t) != c.code, "%s: %d %s, want %d %s", c.name, r.status, r.body, c.status, c.code)
		assert.Equal(t, "client-id-1", r.header.Get("X-Request-Id"), "%s: request id %q", c.name, r.header.Get("X-Request-Id"))
		var e ErrorBody
		r.json(t, &e)
		assert.Equal(t, "client-id-1", e.RequestID, "%s: body request id %q", c.name, e.RequestID)
	}
	r := send("GET", "/v1/run", "", "")
	assert.NotEqual(t, "", r.header.Get("Allow"), "405 without Allow")
	// A question over the rune limit but under the body limit.
	big := testServer(t, Config{})
	r = do(t, big, "POST", "/v1/generate", testToken, map[string]string{"question": strings.Repeat("a", MaxQuestionRunes+1)})
	assert.False(t, r.status != 400 || r.code(t) != CodeBadRequest, "long question: %d %s", r.status, r.body)
}

func TestGenerateRunAsk(t *testing.T) {
	model := sqlModel("SELECT code, title FROM courses ORDER BY code LIMIT 3")
	srv := testServer(t, Config{Pipeline: newPipeline(t, model, 0)})
	r := do(t, srv, "POST", "/v1/generate", testToken, map[string]string{"question": "How many students take each class?"})
	require.Equal(t, 200, r.status, "generate: %d %s", r.status, r.body)
	var g wire.Answer
	r.json(t, &g)
	assert.False(t, g.Status != text2sql.StatusGenerated || !g.Answerable || !strings.Contains(g.SQL, "FROM courses") || g.Result != nil ||
		g.Model != "scripted" || g.Context == nil || len(g.Context.Tables) == 0 || g.RequestID == "" || g.ModelCalls != 1, "generate: %+v", g)
	via := false
	for _, tb := range g.Context.Tables {
		via = via || strings.HasPrefix(tb.Reason, "via example ")
	}
	assert.True(t, via, "no table linked via an example: %+v", g.Context.Tables)

	r = do(t, srv, "POST", "/v1/run", testToken, map[string]string{"sql": g.SQL})
	var run RunResponse
	r.json(t, &run)
	assert.False(t, r.status != 200 || !run.OK || run.RowCount != 3 || len(run.Columns) != 2 || run.Matched != nil, "run: %d %s", r.status, r.body)

	r = do(t, srv, "POST", "/v1/ask", testToken, map[string]string{"question": "List three courses"})
	var a wire.Answer
	r.json(t, &a)
	assert.False(t, r.status != 200 || a.Status != text2sql.StatusAnswered || a.Result == nil || a.Result.RowCount != 3 || len(a.Attempts) != 1, "ask: %d %s", r.status, r.body)
}

func TestAskRepairTrail(t *testing.T) {
	model := llmtest.New(answerJSON("SELECT nme FROM students"), answerJSON("SELECT first_name FROM students LIMIT 2"))
	srv := testServer(t, Config{Pipeline: newPipeline(t, model, 2)})
	r := do(t, srv, "POST", "/v1/ask", testToken, map[string]string{"question": "Name two students"})
	var a wire.Answer
	r.json(t, &a)
	assert.False(t, r.status != 200 || a.Status != text2sql.StatusAnswered || len(a.Attempts) != 2 || a.Attempts[0].Result == nil ||
		a.Attempts[0].Result.Error == nil || a.Attempts[0].Result.Error.Kind != text2sql.KindUnknownColumn || a.Result.RowCount != 2, "ask: %d %s", r.status, r.body)
}

func TestAskFailures(t *testing.T) {
	// Prose without SQL: an answer failure, 200 with status failed.
	srv := testServer(t, Config{Pipeline: newPipeline(t, llmtest.New("I cannot help with that.").RepeatLast(), 0)})
	r := do(t, srv, "POST", "/v1/ask", testToken, map[string]string{"question": "Anything"})
	var a wire.Answer
	r.json(t, &a)
	assert.False(t, r.status != 200 || a.Status != text2sql.StatusFailed || a.Error == nil || a.Error.Code != string(CodeNoSQL), "no SQL: %d %s", r.status, r.body)
	// A provider failure: 502 without the provider's message.
	fail := text2sql.ModelFunc(func(context.Context, text2sql.ModelRequest) (*text2sql.ModelResponse, error) {
		return nil, &text2sql.ModelError{Provider: "gemini", StatusCode: 429, Message: "quota exceeded for key AIzaSECRET", Retryable: true}
	})
	srv = testServer(t, Config{Pipeline: newPipeline(t, fail, 0)})
	r = do(t, srv, "POST", "/v1/generate", testToken, map[string]string{"question": "Anything"})
	assert.False(t, r.status != 502 || r.code(t) != CodeModelError || strings.Contains(string(r.body), "AIza"), "model error: %d %s", r.status, r.body)
	// No model at all: 503 not_configured.
	srv = testServer(t, Config{Pipeline: newPipeline(t, nil, 0)})
	r = do(t, srv, "POST", "/v1/generate", testToken, map[string]string{"question": "Anything"})
	assert.False(t, r.status != 503 || r.code(t) != CodeNotConfigured, "no model: %d %s", r.status, r.body)
	// A slow model: 504 after the request timeout.
	slow := text2sql.ModelFunc(func(ctx context.Context, _ text2sql.ModelRequest) (*text2sql.ModelResponse, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	srv = testServer(t, Config{Pipeline: newPipeline(t, slow, 0), RequestTimeout: 50 * time.Millisecond})
	r = do(t, srv, "POST", "/v1/ask", testToken, map[string]string{"question": "Anything"})
	assert.False(t, r.status != 504 || r.code(t) != CodeTimeout, "timeout: %d %s", r.status, r.body)
}

func TestRunAnswerKey(t *testing.T) {
	keys := AnswerKeyMap{
		"3":      "SELECT count(*) FROM students",
		"broken": "SELECT nope FROM nowhere",
	}
	srv := testServer(t, Config{AnswerKeys: keys})
	run := func(body string) RunResponse {
		t.Helper()
		r := do(t, srv, "POST", "/v1/run", testToken, body)
		require.Equal(t, 200, r.status, "%s: %d %s", body, r.status, r.body)
		var out RunResponse
		r.json(t, &out)
		return out
	}
	out := run(`{"sql":"SELECT COUNT(student_id) AS n FROM students","question_id":3}`)
	assert.False(t, out.Matched == nil || !*out.Matched, "equivalent SQL: %+v", out)
	out = run(`{"sql":"SELECT count(*) FROM courses","question_id":"3"}`)
	assert.False(t, out.Matched == nil || *out.Matched || out.MatchSummary == "", "wrong SQL: %+v", out)
	out = run(`{"sql":"DROP TABLE students","question_id":"3"}`)
	assert.False(t, out.Matched == nil || *out.Matched || out.OK, "refused SQL: %+v", out)
	out = run(`{"sql":"SELECT 1","question_id":"unknown"}`)
	assert.Nil(t, out.Matched, "unknown id: %+v", out)
	out = run(`{"sql":"SELECT 1","question_id":"broken"}`)
	assert.False(t, out.Matched != nil || !out.OK, "broken key: %+v", out)
	r := do(t, srv, "POST", "/v1/run", testToken, `{"sql":"SELECT 1","question_id":1.5}`)
	assert.Equal(t, 400, r.status, "fractional id: %d", r.status)
	ek := ExampleAnswerKeys(fixture.kb.Examples)
	s, ok, _ := ek.AnswerKey(context.Background(), "course-instructor")
	assert.False(t, !ok || !strings.Contains(s, "Database Systems"), "example keys: %q %v", s, ok)
}

func TestAudit(t *testing.T) {
	rec := &recorder{}
	model := llmtest.New(answerJSON("SELECT nme FROM students"), answerJSON("SELECT first_name FROM students LIMIT 2"))
	srv := testServer(t, Config{Pipeline: newPipeline(t, model, 2), Auditor: rec})
	do(t, srv, "POST", "/v1/run", testToken, map[string]any{"sql": "DELETE FROM students", "question_id": "q1"})
	do(t, srv, "POST", "/v1/ask", testToken, map[string]string{"question": "Name two students"})
	ev := rec.all()
	require.Len(t, ev, 3, "%d events: %+v", len(ev), ev)
	e := ev[0]
	assert.False(t, e.Principal != "alice" || e.Method != "static" || e.Source != "POST /v1/run" || e.Outcome != "not_read_only" ||
		e.SQL != "DELETE FROM students" || e.QuestionID != "q1" || e.RequestID == "", "run event %+v", e)
	e = ev[1]
	assert.False(t, e.Source != "POST /v1/ask" || e.Question != "Name two students" || e.Outcome != "unknown_column", "first ask event %+v", e)
	e = ev[2]
	assert.False(t, e.Outcome != "ok" || e.RowCount != 2 || e.Principal != "alice", "second ask event %+v", e)
}

func TestSQLAuditor(t *testing.T) {
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(t.TempDir(), "audit.db"))
	require.NoError(t, err)
	defer db.Close()
	ctx := context.Background()
	_, err = NewSQLAuditor(ctx, db, "bad name; DROP")
	assert.Error(t, err, "bad table name accepted")
	a, err := NewSQLAuditor(ctx, db, "")
	require.NoError(t, err)
	srv := testServer(t, Config{Auditor: a})
	do(t, srv, "POST", "/v1/run", testToken, map[string]string{"sql": "SELECT first_name FROM students LIMIT 4"})
	do(t, srv, "POST", "/v1/run", testToken, map[string]string{"sql": "DROP TABLE students"})
	rows, err := db.Query(`SELECT principal, source, sql, outcome, row_count, truncated FROM text2sql_audit ORDER BY id`)
	require.NoError(t, err)
	defer rows.Close()
	var got []string
	for rows.Next() {
		var p, src, q, out string
		var n, tr int
		require.NoError(t, rows.Scan(&p, &src, &q, &out, &n, &tr))
		got = append(got, strings.Join([]string{p, src, q, out}, "|"))
		assert.False(t, out == "ok" && n != 4, "row_count %d", n)
	}
	want := []string{"alice|POST /v1/run|SELECT first_name FROM students LIMIT 4|ok", "alice|POST /v1/run|DROP TABLE students|not_read_only"}
	assert.Equal(t, strings.Join(want, "\n"), strings.Join(got, "\n"), "audit rows:\n%s", strings.Join(got, "\n"))
}

func TestPrincipalReachesPipeline(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	note := func(ctx context.Context) {
		p, ok := identity.PrincipalFrom(ctx)
		mu.Lock()
		defer mu.Unlock()
		if ok {
			seen = append(seen, p.ID)
		} else {
			seen = append(seen, "")
		}
	}
	ret := text2sql.RetrieverFunc(func(ctx context.Context, req text2sql.RetrieveRequest) (*text2sql.Retrieval, error) {
		note(ctx)
		return fixture.ret.Retrieve(ctx, req)
	})
	ex := text2sql.ExecutorFunc(func(ctx context.Context, req text2sql.ExecuteRequest) (*text2sql.Result, error) {
		note(ctx)
		return fixture.exec.Execute(ctx, req)
	})
	gen, _ := generator.New(sqlModel("SELECT 1"), generator.Options{})
	p, err := text2sql.New(text2sql.Config{Retriever: ret, Generator: gen, Executor: ex, DisableExampleReuse: true})
	require.NoError(t, err)
	srv := testServer(t, Config{Pipeline: p})
	do(t, srv, "POST", "/v1/ask", testToken, map[string]string{"question": "one"})
	do(t, srv, "POST", "/v1/run", "tok-bob-0123456789abcdef0", map[string]string{"sql": "SELECT 2"})
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, "alice,alice,bob", strings.Join(seen, ","), "principals seen by the stages: %q", seen)
}

func TestCORS(t *testing.T) {
	srv := testServer(t, Config{AllowedOrigins: []string{"https://quiz.example.org"}})
	pre := func(origin string) http.Header {
		req, _ := http.NewRequest("OPTIONS", srv.URL+"/v1/generate", nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "authorization,content-type")
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.Header
	}
	h := pre("https://quiz.example.org")
	assert.False(t, h.Get("Access-Control-Allow-Origin") != "https://quiz.example.org" ||
		!strings.Contains(strings.ToLower(h.Get("Access-Control-Allow-Headers")), "authorization"), "allowed origin: %v", h)
	h = pre("https://evil.example.com")
	assert.Equal(t, "", h.Get("Access-Control-Allow-Origin"), "other origin allowed: %v", h)
	// Without origins, no CORS headers at all.
	plain := testServer(t, Config{})
	req, _ := http.NewRequest("GET", plain.URL+"/health", nil)
	req.Header.Set("Origin", "https://quiz.example.org")
	resp, err := plain.Client().Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, "", resp.Header.Get("Access-Control-Allow-Origin"), "CORS header without configured origins")
}

func TestPage(t *testing.T) {
	srv := testServer(t, Config{})
	r := do(t, srv, "GET", "/", "", nil)
	assert.False(t, r.status != 200 || !strings.Contains(string(r.body), `id="question"`) || !strings.Contains(r.header.Get("Content-Security-Policy"), "script-src 'self'"), "page: %d %v", r.status, r.header)
	for _, asset := range []string{"/assets/app.js", "/assets/style.css"} {
		r := do(t, srv, "GET", asset, "", nil)
		assert.False(t, r.status != 200 || len(r.body) < 100, "%s: %d", asset, r.status)
	}
	// A missing asset, a traversal and a directory get the API's JSON 404.
	for _, p := range []string{"/assets/missing.js", "/assets/%2e%2e/page.go", "/assets/"} {
		r = do(t, srv, "GET", p, "", nil)
		assert.Equal(t, 404, r.status, "%s: %d", p, r.status)
		assert.Contains(t, r.header.Get("Content-Type"), "application/json", p)
		assert.Contains(t, string(r.body), `"not_found"`, p)
	}
	assert.Contains(t, string(do(t, srv, "GET", "/", "", nil).body), `rel="icon"`, "the page names its icon: no /favicon.ico request")
	// A host may mount the handler under a prefix: the page uses relative URLs.
	h, err := New(Config{Pipeline: newPipeline(t, sqlModel("SELECT 1"), 0), Auth: NoAuth(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle("/t2s/", http.StripPrefix("/t2s", h))
	prefixed := testServerHandler(t, mux)
	for _, p := range []string{"/t2s/", "/t2s/assets/app.js", "/t2s/health"} {
		r := do(t, prefixed, "GET", p, "", nil)
		assert.Equal(t, 200, r.status, "%s: %d", p, r.status)
	}
	b := string(do(t, prefixed, "GET", "/t2s/", "", nil).body)
	assert.False(t, strings.Contains(b, `src="/`) || strings.Contains(b, `href="/`), "the page uses absolute URLs")
	off := testServer(t, Config{DisablePage: true})
	r = do(t, off, "GET", "/", "", nil)
	assert.Equal(t, 404, r.status, "disabled page: %d", r.status)
}

func TestListenAndServeGraceful(t *testing.T) {
	started := make(chan struct{})
	release := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-release
		io.WriteString(w, "done")
	})
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan net.Addr, 1)
	errc := make(chan error, 1)
	go func() {
		errc <- ListenAndServe(ctx, "127.0.0.1:0", h, ServeOptions{
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Ready: func(a net.Addr) { addrc <- a }, ShutdownTimeout: 5 * time.Second,
		})
	}()
	addr := <-addrc
	client := &http.Client{}
	defer client.CloseIdleConnections()
	bodyc := make(chan string, 1)
	go func() {
		resp, err := client.Get("http://" + addr.String() + "/")
		if err != nil {
			bodyc <- "error: " + err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		bodyc <- string(b)
	}()
	<-started
	cancel() // shutdown begins with a request in flight
	// Shutdown closes the listener in ListenAndServe's goroutine: wait for
	// that, while the request is still held.
	assert.Eventually(t, func() bool {
		c, err := net.DialTimeout("tcp", addr.String(), time.Second)
		if err == nil {
			c.Close()
		}
		return err != nil
	}, 10*time.Second, 10*time.Millisecond, "still accepting connections during shutdown")
	close(release)
	b := <-bodyc
	assert.Equal(t, "done", b, "in-flight request: %q", b)
	assert.NoError(t, <-errc, "ListenAndServe")
}
