package server

import (
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRateLimit(t *testing.T) {
	srv := testServer(t, Config{RateLimit: RateLimit{Requests: 3, Window: time.Minute}})
	run := map[string]string{"sql": "SELECT 1"}
	for i := 0; i < 3; i++ {
		r := do(t, srv, "POST", "/v1/run", testToken, run)
		require.Equal(t, 200, r.status, "request %d: %d %s", i+1, r.status, r.body)
	}
	r := do(t, srv, "POST", "/v1/run", testToken, run)
	require.Equal(t, 429, r.status, "4th request: %d %s", r.status, r.body)
	require.Equal(t, CodeRateLimited, r.code(t), "4th request: %d %s", r.status, r.body)
	secs, err := strconv.Atoi(r.header.Get("Retry-After"))
	assert.False(t, err != nil || secs < 1 || secs > 20, "Retry-After %q", r.header.Get("Retry-After"))
	// Another principal has its own budget; /health is not limited.
	r = do(t, srv, "POST", "/v1/run", "tok-bob-0123456789abcdef0", run)
	assert.Equal(t, 200, r.status, "bob: %d", r.status)
	r = do(t, srv, "GET", "/health", "", nil)
	assert.Equal(t, 200, r.status, "health: %d", r.status)
	// Unauthenticated requests do not spend anyone's budget.
	r = do(t, srv, "POST", "/v1/run", "", run)
	assert.Equal(t, 401, r.status, "no token: %d", r.status)
}

func TestRateLimitConcurrent(t *testing.T) {
	const limit, clients, each = 10, 8, 5
	srv := testServer(t, Config{RateLimit: RateLimit{Requests: limit, Window: time.Hour}})
	tokens := map[string]string{"alice": testToken, "bob": "tok-bob-0123456789abcdef0"}
	var mu sync.Mutex
	ok := map[string]int{}
	limited := map[string]int{}
	var wg sync.WaitGroup
	for name, tok := range tokens {
		for c := 0; c < clients; c++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < each; i++ {
					r := do(t, srv, "POST", "/v1/run", tok, map[string]string{"sql": "SELECT 1"})
					mu.Lock()
					switch r.status {
					case 200:
						ok[name]++
					case 429:
						limited[name]++
						assert.NotEqual(t, "", r.header.Get("Retry-After"), "429 without Retry-After")
					default:
						assert.Fail(t, "unexpected status", "status %d", r.status)
					}
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	for name := range tokens {
		assert.False(t, ok[name] != limit || limited[name] != clients*each-limit, "%s: %d ok, %d limited; want %d and %d", name, ok[name], limited[name], limit, clients*each-limit)
	}
}

func TestLimiterBoundedMemory(t *testing.T) {
	l := newLimiter(RateLimit{Requests: 2, Window: time.Minute, MaxPrincipals: 3})
	now := time.Unix(1000, 0)
	l.now = func() time.Time { return now }
	for _, id := range []string{"a", "b", "c"} {
		ok, _ := l.allow(id)
		require.True(t, ok, "%s refused", id)
	}
	// Full, everyone active: a new principal waits.
	ok, wait := l.allow("d")
	assert.False(t, ok || wait <= 0, "d allowed while full (wait %v)", wait)
	// A window later every bucket is full again: they are forgotten.
	now = now.Add(time.Minute)
	ok, _ = l.allow("d")
	assert.True(t, ok, "d refused after the others went idle")
	n := l.size()
	assert.Equal(t, 1, n, "%d principals tracked, want 1", n)
	// Many principals over time never exceed the bound.
	for i := 0; i < 1000; i++ {
		now = now.Add(time.Second)
		l.allow("p" + strconv.Itoa(i))
		n := l.size()
		require.LessOrEqual(t, n, 3, "%d principals tracked", n)
	}
	assert.Nil(t, newLimiter(RateLimit{Unlimited: true}), "unlimited limiter")
}

func TestRetryAfterSeconds(t *testing.T) {
	for d, want := range map[time.Duration]int{0: 1, 10 * time.Millisecond: 1, time.Second: 1, 1500 * time.Millisecond: 2, 20 * time.Second: 20} {
		got := retryAfterSeconds(d)
		assert.Equal(t, want, got, "%v: %d, want %d", d, got, want)
	}
}
