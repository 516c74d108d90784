package redisstore

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/server"
)

// redisURL is the machine's Redis (TEXT2SQL_TEST_REDIS overrides it).
func redisURL() string {
	if u := os.Getenv("TEXT2SQL_TEST_REDIS"); u != "" {
		return u
	}
	return "redis://127.0.0.1:6379/0"
}

// open returns a Store on the test Redis under a prefix of its own, so
// runs never see each other's keys.
func open(t *testing.T) *Store {
	t.Helper()
	s, err := New(redisURL(), Options{Prefix: fmt.Sprintf("text2sql-test:%s:%d:", t.Name(), time.Now().UnixNano())})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Ping(ctx); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("Redis at %s: %v", redisURL(), err)
		}
		t.Skipf("Redis at %s: %v", redisURL(), err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestAnswerStore(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	_, ok, err := s.Get(ctx, "k")
	require.NoError(t, err)
	assert.False(t, ok)
	require.NoError(t, s.Set(ctx, "k", []byte(`{"sql":"SELECT 1"}`), 200*time.Millisecond))
	v, ok, err := s.Get(ctx, "k")
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, `{"sql":"SELECT 1"}`, string(v))
	require.Eventually(t, func() bool {
		_, ok, err := s.Get(ctx, "k")
		return err == nil && !ok
	}, 3*time.Second, 50*time.Millisecond, "the entry outlived its TTL")
}

// The budget is exact under concurrency and per principal.
func TestLimiter(t *testing.T) {
	s := open(t)
	lim := s.Limiter(server.RateLimit{Requests: 10, Window: time.Minute})
	var passed atomic.Int64
	var wg sync.WaitGroup
	for range 100 {
		wg.Go(func() {
			ok, wait, err := lim.Allow(context.Background(), "alice")
			assert.NoError(t, err)
			if ok {
				passed.Add(1)
			} else {
				assert.Greater(t, wait, time.Duration(0))
				assert.LessOrEqual(t, wait, 6*time.Second, "one request comes back every Window/Requests")
			}
		})
	}
	wg.Wait()
	assert.EqualValues(t, 10, passed.Load())
	ok, _, err := lim.Allow(context.Background(), "bob")
	require.NoError(t, err)
	assert.True(t, ok, "another principal has a budget of its own")
	assert.Nil(t, s.Limiter(server.RateLimit{Unlimited: true}))
}

func TestNewErrors(t *testing.T) {
	_, err := New("127.0.0.1:6379", Options{})
	assert.ErrorContains(t, err, "redis://", "not a redis URL")
	// Nothing listens on port 1: New succeeds (a replica starts while
	// Redis is down), every call fails quickly and names the server.
	s, err := New("redis://:secret-password@127.0.0.1:1/0", Options{})
	require.NoError(t, err)
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	err = s.Ping(ctx)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "127.0.0.1:1")
	assert.NotContains(t, err.Error(), "secret-password")
	_, _, err = s.Limiter(server.RateLimit{}).Allow(ctx, "alice")
	assert.Error(t, err, "an unreachable limiter must not allow")
	_, _, err = s.Get(ctx, "k")
	assert.Error(t, err)
}
