package server

import (
	"strconv"
	"sync"
	"testing"
	"time"
)

func TestRateLimit(t *testing.T) {
	srv := testServer(t, Config{RateLimit: RateLimit{Requests: 3, Window: time.Minute}})
	run := map[string]string{"sql": "SELECT 1"}
	for i := 0; i < 3; i++ {
		if r := do(t, srv, "POST", "/v1/run", testToken, run); r.status != 200 {
			t.Fatalf("request %d: %d %s", i+1, r.status, r.body)
		}
	}
	r := do(t, srv, "POST", "/v1/run", testToken, run)
	if r.status != 429 || r.code(t) != CodeRateLimited {
		t.Fatalf("4th request: %d %s", r.status, r.body)
	}
	secs, err := strconv.Atoi(r.header.Get("Retry-After"))
	if err != nil || secs < 1 || secs > 20 {
		t.Errorf("Retry-After %q", r.header.Get("Retry-After"))
	}
	// Another principal has its own budget; /health is not limited.
	if r := do(t, srv, "POST", "/v1/run", "tok-bob-0123456789abcdef0", run); r.status != 200 {
		t.Errorf("bob: %d", r.status)
	}
	if r := do(t, srv, "GET", "/health", "", nil); r.status != 200 {
		t.Errorf("health: %d", r.status)
	}
	// Unauthenticated requests do not spend anyone's budget.
	if r := do(t, srv, "POST", "/v1/run", "", run); r.status != 401 {
		t.Errorf("no token: %d", r.status)
	}
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
						if r.header.Get("Retry-After") == "" {
							t.Error("429 without Retry-After")
						}
					default:
						t.Errorf("status %d", r.status)
					}
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	for name := range tokens {
		if ok[name] != limit || limited[name] != clients*each-limit {
			t.Errorf("%s: %d ok, %d limited; want %d and %d", name, ok[name], limited[name], limit, clients*each-limit)
		}
	}
}

func TestLimiterBoundedMemory(t *testing.T) {
	l := newLimiter(RateLimit{Requests: 2, Window: time.Minute, MaxPrincipals: 3})
	now := time.Unix(1000, 0)
	l.now = func() time.Time { return now }
	for _, id := range []string{"a", "b", "c"} {
		if ok, _ := l.allow(id); !ok {
			t.Fatalf("%s refused", id)
		}
	}
	// Full, everyone active: a new principal waits.
	if ok, wait := l.allow("d"); ok || wait <= 0 {
		t.Errorf("d allowed while full (wait %v)", wait)
	}
	// A window later every bucket is full again: they are forgotten.
	now = now.Add(time.Minute)
	if ok, _ := l.allow("d"); !ok {
		t.Error("d refused after the others went idle")
	}
	if n := l.size(); n != 1 {
		t.Errorf("%d principals tracked, want 1", n)
	}
	// Many principals over time never exceed the bound.
	for i := 0; i < 1000; i++ {
		now = now.Add(time.Second)
		l.allow("p" + strconv.Itoa(i))
		if n := l.size(); n > 3 {
			t.Fatalf("%d principals tracked", n)
		}
	}
	if newLimiter(RateLimit{Unlimited: true}) != nil {
		t.Error("unlimited limiter")
	}
	var none *limiter
	if ok, _ := none.allow("x"); !ok {
		t.Error("nil limiter refused")
	}
}

func TestRetryAfterSeconds(t *testing.T) {
	for d, want := range map[time.Duration]int{0: 1, 10 * time.Millisecond: 1, time.Second: 1, 1500 * time.Millisecond: 2, 20 * time.Second: 20} {
		if got := retryAfterSeconds(d); got != want {
			t.Errorf("%v: %d, want %d", d, got, want)
		}
	}
}
