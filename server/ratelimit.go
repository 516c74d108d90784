package server

import (
	"context"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/text2sql-go/text2sql/internal/defaults"
)

// RateLimit configures the per-principal rate limit of the routes and MCP
// tools that reach the pipeline (/v1/generate, /v1/run, /v1/ask, and the
// MCP tools ask, generate_sql and run_sql, which share one budget per
// principal). The zero value is DefaultRateRequests per DefaultRateWindow.
//
// Each principal has a token bucket holding Requests tokens that refills
// at Requests per Window: a burst of Requests passes, and the next request
// inside the window is refused with 429 and a Retry-After header giving
// the seconds until a token is back.
type RateLimit struct {
	// Requests per Window per principal; 0 means DefaultRateRequests.
	Requests int
	// Window; 0 means DefaultRateWindow.
	Window time.Duration
	// Unlimited turns rate limiting off.
	Unlimited bool
	// MaxPrincipals bounds the principals tracked at once; 0 means
	// DefaultMaxPrincipals. A principal whose bucket is full again (idle
	// for a window) is forgotten first, which loses nothing; when every
	// tracked principal has been active within its window, a new
	// principal is refused with 429 until one has been idle long enough.
	MaxPrincipals int
}

// Limiter decides whether a principal may make one more request to the
// routes and MCP tools that reach the pipeline. The default is an
// in-memory limiter per process (RateLimit); a limiter shared by several
// replicas (server/redisstore) makes the limit exact across them.
type Limiter interface {
	// Allow spends one request of key's budget (key is a Principal.ID).
	// When the budget is spent it returns ok false and the wait until the
	// next request would be allowed. An error means the limiter cannot
	// decide (its store is unreachable): the request is refused with 503
	// rate_limit_unavailable, never let through unlimited.
	Allow(ctx context.Context, key string) (ok bool, retryAfter time.Duration, err error)
}

// Rate-limit defaults.
const (
	// limiterTimeout bounds one decision of a shared limiter: a store
	// slower than this is treated as unreachable (503), well inside a
	// client's patience.
	limiterTimeout = 2 * time.Second

	DefaultRateRequests  = 60
	DefaultRateWindow    = time.Minute
	DefaultMaxPrincipals = 10000
)

// limiter is the per-principal limiter: a map of token buckets with
// lazy eviction (no goroutine).
type limiter struct {
	every time.Duration // one token per every
	burst int
	max   int
	now   func() time.Time

	mu        sync.Mutex
	buckets   map[string]*rate.Limiter
	lastSweep time.Time
}

// newLimiter returns the in-memory limiter of c; nil when c is Unlimited.
func newLimiter(c RateLimit) *limiter {
	if c.Unlimited {
		return nil
	}
	c = c.WithDefaults()
	return &limiter{
		every:   c.Window / time.Duration(c.Requests),
		burst:   c.Requests,
		max:     c.MaxPrincipals,
		now:     time.Now,
		buckets: map[string]*rate.Limiter{},
	}
}

// WithDefaults returns c with its zero fields set to the defaults
// (DefaultRateRequests per DefaultRateWindow, DefaultMaxPrincipals), for
// limiters built elsewhere on the same settings.
func (c RateLimit) WithDefaults() RateLimit {
	defaults.Positive(&c.Requests, DefaultRateRequests)
	defaults.Positive(&c.Window, DefaultRateWindow)
	defaults.Positive(&c.MaxPrincipals, DefaultMaxPrincipals)
	return c
}

// Allow takes a token for principal id. When none is left it returns
// false and the wait until one is back. It never fails.
func (l *limiter) Allow(_ context.Context, id string) (bool, time.Duration, error) {
	ok, wait := l.allow(id)
	return ok, wait, nil
}

func (l *limiter) allow(id string) (bool, time.Duration) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[id]
	if !ok {
		if len(l.buckets) >= l.max || now.Sub(l.lastSweep) > l.every*time.Duration(l.burst) {
			l.sweep(now)
		}
		if len(l.buckets) >= l.max {
			return false, l.every
		}
		b = rate.NewLimiter(rate.Every(l.every), l.burst)
		l.buckets[id] = b
	}
	r := b.ReserveN(now, 1)
	if !r.OK() {
		return false, l.every
	}
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

// sweep forgets the principals whose bucket is full: they are exactly
// like a principal never seen.
func (l *limiter) sweep(now time.Time) {
	l.lastSweep = now
	for id, b := range l.buckets {
		if b.TokensAt(now) >= float64(l.burst) {
			delete(l.buckets, id)
		}
	}
}

// size returns the number of tracked principals.
func (l *limiter) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}

// retryAfterSeconds rounds d up to whole seconds, at least 1.
func retryAfterSeconds(d time.Duration) int {
	s := int(math.Ceil(d.Seconds()))
	if s < 1 {
		s = 1
	}
	return s
}
