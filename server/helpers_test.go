package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/demo"
	"github.com/text2sql-go/text2sql/executor/sqlite"
	"github.com/text2sql-go/text2sql/generator"
	"github.com/text2sql-go/text2sql/internal/syncbuf"
	"github.com/text2sql-go/text2sql/knowledge"
	"github.com/text2sql-go/text2sql/llm/llmtest"
	"github.com/text2sql-go/text2sql/retriever"
)

// fixture is the demo database, its knowledge base and retriever, built
// once for the package's tests.
var fixture struct {
	dir  string
	path string
	exec *sqlite.Executor
	kb   *knowledge.Base
	ret  *retriever.Hybrid
}

func TestMain(m *testing.M) {
	code := func() int {
		dir, err := os.MkdirTemp("", "text2sql-server-test-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		if err := setupFixture(dir); err != nil {
			fmt.Fprintln(os.Stderr, "fixture:", err)
			return 1
		}
		code := m.Run()
		fixture.exec.Close()
		return code
	}()
	if code == 0 {
		if err := goleak.Find(goleakOptions()...); err != nil {
			fmt.Fprintln(os.Stderr, "goroutine leak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

func goleakOptions() []goleak.Option {
	return []goleak.Option{
		// The HTTP client's keep-alive connections close asynchronously.
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
	}
}

func setupFixture(dir string) error {
	fixture.dir = dir
	fixture.path = filepath.Join(dir, "registrar.sqlite")
	if err := demo.Create(fixture.path); err != nil {
		return err
	}
	ex, err := sqlite.Open(fixture.path, sqlite.Options{MaxRows: 100, Timeout: 5 * time.Second})
	if err != nil {
		return err
	}
	fixture.exec = ex
	kb, err := demo.Knowledge()
	if err != nil {
		return err
	}
	ctx := context.Background()
	if err := kb.Validate(ctx, ex.Schema(), ex); err != nil {
		return err
	}
	fixture.kb = kb
	fixture.ret, err = retriever.NewHybrid(ctx, retriever.HybridOptions{Schema: ex.Schema(), Knowledge: kb})
	return err
}

// answerJSON is what the generator's model answers.
func answerJSON(sql string) string {
	b, _ := json.Marshal(map[string]any{"answerable": true, "sql": sql, "explanation": "Scripted: " + sql})
	return string(b)
}

// sqlModel returns a scripted model that always answers sql.
func sqlModel(sql string) *llmtest.Model {
	return llmtest.New(answerJSON(sql)).RepeatLast()
}

// newPipeline assembles the demo pipeline around model. Example reuse is
// off, so every question reaches the model.
func newPipeline(t testing.TB, model text2sql.Model, maxRepairs int) *text2sql.Pipeline {
	t.Helper()
	gen, err := generator.New(model, generator.Options{Dialect: text2sql.DialectSQLite})
	require.NoError(t, err)
	p, err := text2sql.New(text2sql.Config{
		Retriever: fixture.ret, Generator: gen, Executor: fixture.exec,
		MaxRepairs: maxRepairs, MaxRows: 100, DisableExampleReuse: true,
	})
	require.NoError(t, err)
	return p
}

// testToken is the static token of principal "alice".
const testToken = "tok-alice-0123456789abcdef"

func staticAuth(t testing.TB) *StaticTokens {
	t.Helper()
	a, err := NewStaticTokens(map[string]string{"alice": testToken, "bob": "tok-bob-0123456789abcdef0"})
	require.NoError(t, err)
	return a
}

// jsonLogger logs at debug level, as JSON lines, into b.
func jsonLogger(b *syncbuf.Buffer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// testServer starts cfg's handler on an httptest server. Unset Pipeline,
// Auth and Logger get the default scripted pipeline, static tokens and a
// discarded log.
func testServer(t testing.TB, cfg Config) *httptest.Server {
	t.Helper()
	if cfg.Pipeline == nil {
		cfg.Pipeline = newPipeline(t, sqlModel("SELECT code, title FROM courses ORDER BY code LIMIT 3"), 0)
	}
	if cfg.Auth == nil {
		cfg.Auth = staticAuth(t)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.RateLimit == (RateLimit{}) {
		cfg.RateLimit.Unlimited = true
	}
	h, err := New(cfg)
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv
}

// testServerHandler serves h on an httptest server.
func testServerHandler(t testing.TB, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv
}

// response is a decoded HTTP answer.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t testing.TB, v any) {
	t.Helper()
	require.NoError(t, json.Unmarshal(r.body, v), "decoding %s", r.body)
}

func (r response) code(t testing.TB) Code {
	t.Helper()
	var e ErrorBody
	r.json(t, &e)
	return e.Error.Code
}

// do sends a request with an optional bearer token and JSON body (a
// string is sent as is).
func do(t testing.TB, srv *httptest.Server, method, path, token string, body any) response {
	t.Helper()
	var rd io.Reader
	if body != nil {
		s, ok := body.(string)
		if !ok {
			b, err := json.Marshal(body)
			require.NoError(t, err)
			s = string(b)
		}
		rd = strings.NewReader(s)
	}
	req, err := http.NewRequest(method, srv.URL+path, rd)
	require.NoError(t, err)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

// tableRows counts the rows of table in the demo database, bypassing the
// server.
func tableRows(t testing.TB, table string) int {
	t.Helper()
	res, err := fixture.exec.Execute(context.Background(), text2sql.ExecuteRequest{SQL: "SELECT count(*) FROM " + table})
	require.False(t, err != nil || res.Error != nil, "counting %s: %v %v", table, err, res.Error)
	return int(res.Rows[0][0].(int64))
}

// recorder collects audit events.
type recorder struct {
	mu     sync.Mutex
	events []AuditEvent
}

func (r *recorder) Audit(_ context.Context, e AuditEvent) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
	return nil
}

func (r *recorder) all() []AuditEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]AuditEvent(nil), r.events...)
}
