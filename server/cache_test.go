package server

import (
	"context"
	"database/sql"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/identity"
	"github.com/text2sql-go/text2sql/wire"
)

// mapStore is an in-memory AnswerStore that can be made unreachable.
type mapStore struct {
	mu   sync.Mutex
	m    map[string][]byte
	down atomic.Bool
}

var errDown = errors.New("store unreachable")

func (s *mapStore) Get(_ context.Context, key string) ([]byte, bool, error) {
	if s.down.Load() {
		return nil, false, errDown
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.m[key]
	return b, ok, nil
}

func (s *mapStore) Set(_ context.Context, key string, v []byte, _ time.Duration) error {
	if s.down.Load() {
		return errDown
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string][]byte{}
	}
	s.m[key] = v
	return nil
}

func TestAnswerCache(t *testing.T) {
	model := sqlModel("SELECT count(*) FROM students")
	store := &mapStore{}
	var version atomic.Int64
	rec := &recorder{}
	srv := testServer(t, Config{
		Pipeline: newPipeline(t, model, 0), Auditor: rec,
		Cache: Cache{Store: store, DataVersion: func(context.Context) (string, error) {
			if v := version.Load(); v >= 0 {
				return string(rune('a' + v)), nil
			}
			return "", errors.New("version unreadable")
		}},
	})
	ask := func(token, q string) wire.Answer {
		t.Helper()
		r := do(t, srv, "POST", "/v1/ask", token, map[string]any{"question": q})
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		var b wire.Answer
		r.json(t, &b)
		return b
	}
	const bob = "tok-bob-0123456789abcdef0"

	first := ask(testToken, "How many students are there?")
	assert.False(t, first.Cached)
	require.NotNil(t, first.Result)
	assert.Equal(t, 1, model.CallCount())

	hit := ask(testToken, "  How many students   are there ")
	assert.True(t, hit.Cached)
	assert.Equal(t, 1, model.CallCount(), "a cache hit called the model")
	assert.Equal(t, first.SQL, hit.SQL)
	assert.Equal(t, first.Result.Rows, hit.Result.Rows)
	assert.NotEqual(t, first.RequestID, hit.RequestID)
	assert.Zero(t, hit.ModelCalls)
	assert.Zero(t, hit.Usage)
	// The rows reached the caller: the delivery is audited.
	events := rec.all()
	require.Len(t, events, 2)
	assert.Equal(t, "ok", events[0].Outcome)
	assert.Equal(t, "cached", events[1].Outcome)
	assert.Equal(t, "alice", events[1].Principal)
	assert.Equal(t, first.SQL, events[1].SQL)
	assert.Equal(t, first.Result.RowCount, events[1].RowCount)

	assert.False(t, ask(testToken, "How many Students are there?").Cached, "letter case is part of the question")
	assert.False(t, ask(bob, "How many students are there?").Cached, "by default each principal has its own entries")
	calls := model.CallCount()

	version.Store(1)
	assert.False(t, ask(testToken, "How many students are there?").Cached, "a new data version misses")
	assert.True(t, ask(testToken, "How many students are there?").Cached)

	// A version that cannot be read, or a store that cannot be reached,
	// skips the cache; the question is still answered.
	version.Store(-1)
	assert.False(t, ask(testToken, "How many students are there?").Cached)
	version.Store(1)
	store.down.Store(true)
	assert.False(t, ask(testToken, "How many students are there?").Cached)
	store.down.Store(false)
	assert.Equal(t, calls+3, model.CallCount())
}

func TestAnswerCacheSharedScope(t *testing.T) {
	model := sqlModel("SELECT count(*) FROM students")
	store := &mapStore{}
	srv := testServer(t, Config{Pipeline: newPipeline(t, model, 0), Cache: Cache{Store: store, Scope: SharedScope}})
	r := do(t, srv, "POST", "/v1/generate", testToken, map[string]any{"question": "How many students are there?"})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	r = do(t, srv, "POST", "/v1/generate", "tok-bob-0123456789abcdef0", map[string]any{"question": "How many students are there?"})
	var b wire.Answer
	r.json(t, &b)
	assert.True(t, b.Cached, "a shared scope shares answers between principals")
	assert.Equal(t, 1, model.CallCount())
	r = do(t, srv, "POST", "/v1/ask", testToken, map[string]any{"question": "How many students are there?"})
	var a wire.Answer
	r.json(t, &a)
	assert.False(t, a.Cached, "generate and ask have entries of their own")

	other := testServer(t, Config{Pipeline: newPipeline(t, model, 0), Cache: Cache{Store: store, Scope: SharedScope, Namespace: "model=other"}})
	r = do(t, other, "POST", "/v1/generate", testToken, map[string]any{"question": "How many students are there?"})
	var n wire.Answer
	r.json(t, &n)
	assert.False(t, n.Cached, "another namespace shares no entries")
}

// A failed answer is not cached: the next request tries again.
func TestAnswerCacheSkipsFailures(t *testing.T) {
	model := sqlModel("SELECT nope FROM nowhere")
	srv := testServer(t, Config{Pipeline: newPipeline(t, model, 0), Cache: Cache{Store: &mapStore{}}})
	var perAnswer int
	for i := range 2 {
		r := do(t, srv, "POST", "/v1/ask", testToken, map[string]any{"question": "How many?"})
		var b wire.Answer
		r.json(t, &b)
		assert.Equal(t, text2sql.StatusFailed, b.Status, "%s", r.body)
		assert.False(t, b.Cached)
		if i == 0 {
			perAnswer = model.CallCount()
		}
	}
	assert.Equal(t, 2*perAnswer, model.CallCount(), "the failed answer was reused")
}

type brokenLimiter struct{}

func (brokenLimiter) Allow(context.Context, string) (bool, time.Duration, error) {
	return false, 0, errors.New("connection refused")
}

// A limiter that cannot decide refuses: the limit fails closed.
func TestLimiterUnavailable(t *testing.T) {
	srv := testServer(t, Config{Limiter: brokenLimiter{}})
	r := do(t, srv, "POST", "/v1/run", testToken, map[string]any{"sql": "SELECT 1"})
	assert.Equal(t, http.StatusServiceUnavailable, r.status)
	assert.Equal(t, CodeRateLimitUnavailable, r.code(t))
	assert.NotContains(t, string(r.body), "connection refused")
}

func TestReadiness(t *testing.T) {
	var down atomic.Bool
	srv := testServer(t, Config{Readiness: map[string]Probe{
		"database": func(context.Context) error { return nil },
		"redis": func(context.Context) error {
			if down.Load() {
				return errors.New("dial tcp 10.0.0.7:6379: connection refused")
			}
			return nil
		},
	}})
	var h HealthResponse
	r := do(t, srv, "GET", "/health", "", nil)
	require.Equal(t, http.StatusOK, r.status)
	r.json(t, &h)
	assert.Equal(t, map[string]string{"database": "ok", "redis": "ok"}, h.Checks)

	down.Store(true)
	require.Eventually(t, func() bool {
		r = do(t, srv, "GET", "/health", "", nil)
		return r.status == http.StatusServiceUnavailable
	}, 5*time.Second, 50*time.Millisecond, "results are reused for probeTTL only")
	r.json(t, &h)
	assert.Equal(t, "unavailable", h.Status)
	assert.Equal(t, "unreachable", h.Checks["redis"])
	assert.NotContains(t, string(r.body), "10.0.0.7", "the reason is logged, not shown")
	assert.Equal(t, http.StatusOK, do(t, srv, "GET", "/health/live", "", nil).status)
}

func TestCacheQuestion(t *testing.T) {
	for q, want := range map[string]string{
		"How many singers?":          "How many singers",
		"  How many\tsingers ?? ":    "How many singers",
		"Codes ending in !":          "Codes ending in !",
		`Who is "Ann  Lee"?`:         `Who is "Ann  Lee"`,
		"Who is 'Ann  Lee'   again?": "Who is 'Ann  Lee' again",
		"Who is Ann\u00a0Lee?":       "Who is Ann\u00a0Lee",
	} {
		assert.Equal(t, want, cacheQuestion(q), "%q", q)
	}
	assert.NotEqual(t, cacheQuestion(`Who is "Ann  Lee"?`), cacheQuestion(`Who is "Ann Lee"?`))
	assert.NotEqual(t, cacheQuestion("Codes ending in !"), cacheQuestion("Codes ending in ?"))
}

// Two tokens of one subject whose claims differ (another tenant) never
// share an entry: the database may decide from any claim.
func TestPrincipalScopeCoversClaims(t *testing.T) {
	acme := &identity.Principal{ID: "u1", Method: "jwt", Claims: map[string]any{"tenant": "acme", "role": "reader"}}
	globex := &identity.Principal{ID: "u1", Method: "jwt", Claims: map[string]any{"tenant": "globex", "role": "reader"}}
	same := &identity.Principal{ID: "u1", Method: "jwt", Claims: map[string]any{"role": "reader", "tenant": "acme"}}
	assert.NotEqual(t, PrincipalScope(acme), PrincipalScope(globex))
	assert.Equal(t, PrincipalScope(acme), PrincipalScope(same))
	assert.NotEqual(t, PrincipalScope(acme), PrincipalScope(&identity.Principal{ID: "u1", Method: "static"}))
}

// An entry the service could not have written is ignored.
func TestCacheEntryChecked(t *testing.T) {
	for _, entry := range []string{`null`, `{}`, `{"status":"failed"}`, `{"status":"answered","error":{"code":"x","message":"y"}}`, `[1]`} {
		var b wire.Answer
		assert.Error(t, decodeEntry([]byte(entry), &b), entry)
	}
	var b wire.Answer
	require.NoError(t, decodeEntry([]byte(`{"status":"answered","sql":"SELECT 1"}`), &b))
	big := make([]byte, MaxCacheEntryBytes+1)
	assert.Error(t, decodeEntry(big, &b))
}

// A pool busy with statements is reachable; a closed one is not.
func TestPingProbe(t *testing.T) {
	db := fixture.exec.DB()
	probe := PingProbe(db)
	require.NoError(t, probe(context.Background()))
	other, err := sql.Open("sqlite3", ":memory:")
	require.NoError(t, err)
	other.SetMaxOpenConns(1)
	conn, err := other.Conn(context.Background())
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	assert.NoError(t, PingProbe(other)(ctx), "every connection in use is not unreachable")
	conn.Close()
	other.Close()
	assert.Error(t, PingProbe(other)(context.Background()))
}
