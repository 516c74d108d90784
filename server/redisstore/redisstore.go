// Package redisstore keeps the state several replicas of the text2sql
// service share in Redis: the per-principal rate limit (Store.Limiter) and
// the answer cache (Store as a server.AnswerStore). It is opt-in: without
// it every replica keeps both in its own memory.
//
// The rate limit is GCRA (the generic cell rate algorithm) as implemented
// by github.com/go-redis/redis_rate: one Lua script per decision, run
// atomically by Redis on Redis's clock, so the limit is exact across any
// number of replicas and immune to their clock skew.
package redisstore

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"

	"github.com/text2sql-go/text2sql/server"
)

// DefaultPrefix starts the keys of this package, so one Redis can serve
// other applications (or several text2sql deployments, each with its own
// Options.Prefix): cache entries are PREFIX + "answer:…", rate-limit
// state is "rate:" + PREFIX + "limit:…" (redis_rate adds "rate:"). A
// Redis ACL user for text2sql needs both patterns (~PREFIX* ~rate:PREFIX*).
const DefaultPrefix = "text2sql:"

// Timeouts of the client. A replica whose Redis is slow must answer
// quickly (a 503 for the limit, no cache) rather than hang: every request
// also carries the server's own deadline (server.Config), which the
// client honours.
const (
	dialTimeout = 2 * time.Second
	ioTimeout   = time.Second
)

// Options configures a Store.
type Options struct {
	// Prefix starts every key; "" means DefaultPrefix.
	Prefix string
	// Logger receives the Redis client's own messages (reconnects, failed
	// dials) as warnings. The client logs through one logger per process,
	// so the last Store opened with a Logger sets it; nil leaves it as is
	// (the standard log package).
	Logger *slog.Logger
}

// Store is a connection pool to one Redis with the text2sql key space.
// It is safe for concurrent use; Close releases it.
type Store struct {
	rdb    *redis.Client
	prefix string
	gcra   *redis_rate.Limiter
}

// New returns a Store for the Redis at url ("redis://[user:password@]host:port/db"
// or "rediss://…" for TLS, as redis.ParseURL reads it). It does not
// connect: a replica starts while Redis is down, its calls fail until
// Redis answers (the pool reconnects by itself), and Ping says whether
// it does now. A malformed url is an error.
func New(url string, opts Options) (*Store, error) {
	o, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("redisstore: %w (want redis://host:6379/0 or rediss://…)", err)
	}
	o.DialTimeout, o.ReadTimeout, o.WriteTimeout = dialTimeout, ioTimeout, ioTimeout
	o.ContextTimeoutEnabled = true
	// One retry covers a connection Redis closed while idle (a restart);
	// more would only delay the 503 a caller gets while Redis is down.
	o.MaxRetries, o.DialerRetries = 1, 1
	if opts.Logger != nil {
		redis.SetLogger(slogPrinter{opts.Logger})
	}
	rdb := redis.NewClient(o)
	s := &Store{rdb: rdb, prefix: opts.Prefix, gcra: redis_rate.NewLimiter(rdb)}
	if s.prefix == "" {
		s.prefix = DefaultPrefix
	}
	return s, nil
}

// slogPrinter is the Redis client's logger on a slog.Logger.
type slogPrinter struct{ l *slog.Logger }

func (p slogPrinter) Printf(ctx context.Context, format string, v ...any) {
	p.l.WarnContext(ctx, "redis: "+fmt.Sprintf(format, v...))
}

// Ping reports whether Redis answers: nil, or an error naming the server.
// It is the readiness probe of a replica (server.Config.Readiness).
func (s *Store) Ping(ctx context.Context) error {
	if err := s.rdb.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("redisstore: redis at %s: %w", s.rdb.Options().Addr, err)
	}
	return nil
}

// Close closes the connection pool.
func (s *Store) Close() error { return s.rdb.Close() }

// Get returns the cached value under key (server.AnswerStore). It reads
// at most server.MaxCacheEntryBytes+1 bytes: a larger value, which this
// package never writes, is not loaded whole (and the server ignores it).
func (s *Store) Get(ctx context.Context, key string) ([]byte, bool, error) {
	b, err := s.rdb.GetRange(ctx, s.prefix+key, 0, server.MaxCacheEntryBytes).Bytes()
	if err != nil {
		return nil, false, fmt.Errorf("redisstore: %w", err)
	}
	// GETRANGE answers "" for a missing key; no entry is empty.
	return b, len(b) > 0, nil
}

// Set stores value under key for ttl (server.AnswerStore); a ttl under a
// millisecond is Redis's smallest, one millisecond.
func (s *Store) Set(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if err := s.rdb.Set(ctx, s.prefix+key, value, max(ttl, time.Millisecond)).Err(); err != nil {
		return fmt.Errorf("redisstore: %w", err)
	}
	return nil
}

// Limiter returns the rate limit of c shared through Redis: each
// principal may make c.Requests requests at once and regains one every
// c.Window / c.Requests, like the in-memory token bucket, but counted
// once for every replica using the same Redis and prefix. Nil when c is
// Unlimited. c.MaxPrincipals does not apply: an idle principal's state
// expires in Redis by itself.
func (s *Store) Limiter(c server.RateLimit) server.Limiter {
	if c.Unlimited {
		return nil
	}
	c = c.WithDefaults()
	return &limiter{s: s, limit: redis_rate.Limit{Rate: c.Requests, Burst: c.Requests, Period: c.Window}}
}

type limiter struct {
	s     *Store
	limit redis_rate.Limit
}

func (l *limiter) Allow(ctx context.Context, key string) (bool, time.Duration, error) {
	res, err := l.s.gcra.Allow(ctx, l.s.prefix+"limit:"+key, l.limit)
	if err != nil {
		return false, 0, fmt.Errorf("redisstore: rate limit: %w", err)
	}
	return res.Allowed > 0, res.RetryAfter, nil
}

var _ server.AnswerStore = (*Store)(nil)
