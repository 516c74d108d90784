package providertest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/httpfake"
)

// Failure is one way a call fails, as Errors checks it.
type Failure struct {
	Name       string           // the subtest's name
	Replies    []httpfake.Reply // the server's script (the last repeats)
	MaxRetries int              // Setup.MaxRetries
	Status     int              // the ModelError's StatusCode (0: no answer)
	Retryable  bool             // its Retryable
	Requests   int              // how many requests the call makes
	Says       []string         // what its message holds
}

// Errors checks each failure: the call ends with a *text2sql.ModelError
// from c's provider, matching text2sql.ErrModel, with the failure's
// status, Retryable and words, after the failure's number of requests
// (retry waits are recorded, not slept), its message free of the key.
func Errors(t *testing.T, c Client, fs []Failure) {
	for _, f := range fs {
		t.Run(f.Name, func(t *testing.T) {
			srv := httpfake.New(t, f.Replies...)
			err := c.New(t, srv, Setup{MaxRetries: f.MaxRetries, Sleep: (&Sleeps{}).Sleep})(context.Background())
			var me *text2sql.ModelError
			require.ErrorAs(t, err, &me)
			assert.Equal(t, c.Provider, me.Provider)
			assert.Equal(t, f.Status, me.StatusCode)
			assert.Equal(t, f.Retryable, me.Retryable)
			assert.ErrorIs(t, err, text2sql.ErrModel)
			for _, s := range f.Says {
				assert.Contains(t, err.Error(), s)
			}
			assert.Len(t, srv.Requests(), f.Requests)
			noKey(t, c.Key, err)
		})
	}
}

// RetryAfter checks a call against srv, which refuses the first request
// asking for a wait and answers the second: the call succeeds after two
// requests, having waited want once.
func RetryAfter(t *testing.T, c Client, srv *httpfake.Server, want time.Duration) {
	t.Helper()
	var s Sleeps
	require.NoError(t, c.New(t, srv, Setup{Sleep: s.Sleep})(context.Background()))
	assert.Len(t, srv.Requests(), 2)
	assert.Equal(t, []time.Duration{want}, s.Waits())
}

// KeyNeverInErrors checks that the key stays out of the errors of a call
// refused with echo (an error answer quoting the key, in prose and in a
// URL: the message says "[REDACTED]" instead), of one answered with
// garbled (a 2xx answer the client cannot read, quoting the key), and of
// one to a closed server through a base URL carrying the key (a
// retryable *text2sql.ModelError without status).
func KeyNeverInErrors(t *testing.T, c Client, echo, garbled httpfake.Reply) {
	t.Run("echoed", func(t *testing.T) {
		err := c.New(t, httpfake.New(t, echo), Setup{})(context.Background())
		require.Error(t, err)
		assert.Contains(t, err.Error(), "[REDACTED]")
		noKey(t, c.Key, err)
	})
	t.Run("garbled", func(t *testing.T) {
		err := c.New(t, httpfake.New(t, garbled), Setup{})(context.Background())
		require.Error(t, err)
		noKey(t, c.Key, err)
	})
	t.Run("connection refused", func(t *testing.T) {
		srv := httpfake.New(t)
		srv.Close()
		err := c.New(t, srv, Setup{MaxRetries: -1, Query: "key=" + c.Key})(context.Background())
		var me *text2sql.ModelError
		require.ErrorAs(t, err, &me)
		assert.Zero(t, me.StatusCode)
		assert.True(t, me.Retryable)
		noKey(t, c.Key, err)
	})
}

// Concurrent checks that one client serves n calls at once, in rounds
// of n, over connections it keeps: each call succeeds, the server gets
// every request, and no more than 2n connections are opened (n for the
// first round, and room for a connection dialled while another came
// free). A client keeping Go's default 2 idle connections would open
// about n-2 anew in every round.
func Concurrent(t *testing.T, c Client, srv *httpfake.Server, n int) {
	const rounds = 8
	call := c.New(t, srv, Setup{})
	for r := range rounds {
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() { errs[i] = call(context.Background()) })
		}
		wg.Wait()
		for i, err := range errs {
			assert.NoError(t, err, "round %d, call %d", r, i)
		}
	}
	assert.Len(t, srv.Requests(), n*rounds)
	assert.LessOrEqual(t, srv.Conns(), 2*n, "connections opened for %d calls, %d at once", n*rounds, n)
}

// limit is the time limit the tests give the client: long enough to be
// measured, short enough for a test.
const limit = 300 * time.Millisecond

// Timeout checks a client's time limit: a server that takes the request
// and never answers ends the call, no sooner than the limit, with a
// *text2sql.ModelError whose Timeout is set, matching text2sql.ErrModel
// and context.DeadlineExceeded, worded "<provider>: no answer within
// 300ms, …"; the limit covers the whole call, so the wait after a retried
// reply (retry, e.g. the provider's 503) runs under its deadline and a
// second attempt that hangs ends at it after two requests; and a caller's
// shorter deadline wins with its own error after one request, without the
// key. The server never answers, so only a deadline can end these calls:
// the errors say which one did, and no upper bound on the wall-clock time
// is asserted (it flakes on a loaded machine).
func Timeout(t *testing.T, c Client, retry httpfake.Reply) {
	t.Run("never answers", func(t *testing.T) {
		srv := httpfake.New(t, httpfake.Reply{Block: true})
		start := time.Now()
		err := c.New(t, srv, Setup{Timeout: limit})(context.Background())
		el := time.Since(start)
		var me *text2sql.ModelError
		require.ErrorAs(t, err, &me)
		assert.True(t, me.Timeout)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.ErrorIs(t, err, text2sql.ErrModel)
		assert.Equal(t, c.Provider+": no answer within 300ms, the time limit of one model call (Options.Timeout)", err.Error())
		assert.GreaterOrEqual(t, el, limit)
	})
	t.Run("covers retries", func(t *testing.T) {
		srv := httpfake.New(t, retry, httpfake.Reply{Block: true})
		var (
			mu    sync.Mutex
			waits []bool // per retry wait: whether it ran under the call's limit
		)
		sleep := func(ctx context.Context, _ time.Duration) error {
			dl, ok := ctx.Deadline() // the caller's context has none
			mu.Lock()
			defer mu.Unlock()
			waits = append(waits, ok && !dl.After(time.Now().Add(limit)))
			return ctx.Err()
		}
		err := c.New(t, srv, Setup{Timeout: limit, Sleep: sleep})(context.Background())
		var me *text2sql.ModelError
		require.ErrorAs(t, err, &me)
		assert.True(t, me.Timeout, "err = %v", err)
		assert.Len(t, srv.Requests(), 2)
		mu.Lock()
		defer mu.Unlock()
		assert.Equal(t, []bool{true}, waits, "one retry wait, under the call's deadline")
	})
	t.Run("caller deadline wins", func(t *testing.T) {
		srv := httpfake.New(t, httpfake.Reply{Block: true})
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		err := c.New(t, srv, Setup{Timeout: 10 * time.Second})(ctx)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		var me *text2sql.ModelError
		assert.False(t, errors.As(err, &me) && me.Timeout, "err = %v", err)
		assert.Len(t, srv.Requests(), 1)
		noKey(t, c.Key, err)
	})
}

// Attempts checks that a model's answer says how many requests it took: a
// retried reply (retry, e.g. the provider's 503) and then ok are 2
// attempts, and 2 requests reach the server. build makes the model against
// the server, with retry waits short enough for a test.
func Attempts(t *testing.T, retry, ok httpfake.Reply, build func(srv *httpfake.Server) text2sql.Model) {
	srv := httpfake.New(t, retry, ok)
	resp, err := build(srv).Complete(context.Background(), text2sql.ModelRequest{Messages: []text2sql.Message{{Role: text2sql.RoleUser, Content: "q"}}})
	require.NoError(t, err)
	assert.Equal(t, 2, resp.Attempts)
	assert.Len(t, srv.Requests(), 2)
}
