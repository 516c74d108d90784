package retry

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/provider"
)

func retryable(status int) error {
	return &text2sql.ModelError{Provider: "p", StatusCode: status, Message: "m", Retryable: Retryable(status)}
}

func recorder(waits *[]time.Duration) func(context.Context, time.Duration) error {
	return func(ctx context.Context, d time.Duration) error {
		*waits = append(*waits, d)
		return ctx.Err()
	}
}

func TestDoRetriesThenSucceeds(t *testing.T) {
	var waits []time.Duration
	p := Policy{MaxRetries: 3, BaseDelay: 100 * time.Millisecond, Sleep: recorder(&waits)}
	n := 0
	err := p.Do(context.Background(), func(context.Context) error {
		n++
		if n < 3 {
			return retryable(503)
		}
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, 3, n, "calls")
	require.Len(t, waits, 2)
	// Exponential backoff from 100ms, jitter taking off at most half.
	assert.GreaterOrEqual(t, waits[0], 50*time.Millisecond)
	assert.LessOrEqual(t, waits[0], 100*time.Millisecond)
	assert.GreaterOrEqual(t, waits[1], 100*time.Millisecond)
	assert.LessOrEqual(t, waits[1], 200*time.Millisecond)
}

func TestDoExhausted(t *testing.T) {
	var waits []time.Duration
	p := Policy{MaxRetries: 2, BaseDelay: time.Millisecond, Sleep: recorder(&waits)}
	n := 0
	err := p.Do(context.Background(), func(context.Context) error { n++; return retryable(500) })
	var me *text2sql.ModelError
	require.ErrorAs(t, err, &me)
	assert.Equal(t, 500, me.StatusCode)
	assert.Contains(t, me.Message, "gave up after 3 attempts")
	assert.Equal(t, 3, n, "calls")
}

func TestDoNoRetry(t *testing.T) {
	for _, p := range []Policy{{MaxRetries: -1}, {}} {
		n := 0
		err := p.Do(context.Background(), func(context.Context) error { n++; return retryable(400) })
		assert.Equal(t, 1, n, "%+v: calls", p)
		assert.EqualError(t, err, "p: HTTP 400: m", "%+v", p)
	}
	n := 0
	plain := errors.New("plain")
	err := (Policy{}).Do(context.Background(), func(context.Context) error { n++; return plain })
	assert.Same(t, plain, err, "a plain error is returned as it is")
	assert.Equal(t, 1, n, "plain error: calls")
	n = 0
	err = (Policy{MaxRetries: -1}).Do(context.Background(), func(context.Context) error { n++; return retryable(503) })
	assert.Equal(t, 1, n, "MaxRetries<0: calls")
	assert.NotContains(t, err.Error(), "gave up")
}

func TestDoHint(t *testing.T) {
	var waits []time.Duration
	p := Policy{BaseDelay: time.Millisecond, MaxDelay: 10 * time.Second, Sleep: recorder(&waits)}
	n := 0
	err := p.Do(context.Background(), func(context.Context) error {
		n++
		if n == 1 {
			return After(retryable(429), 5*time.Second)
		}
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, []time.Duration{5 * time.Second}, waits)
	// A hint above MaxDelay ends the retries; the wrapper is removed.
	err = p.Do(context.Background(), func(context.Context) error { return After(retryable(429), time.Minute) })
	var me *text2sql.ModelError
	require.ErrorAs(t, err, &me)
	assert.Contains(t, me.Message, "server asked to wait 1m0s")
	_, leaked := err.(*hintError)
	assert.False(t, leaked, "hint wrapper leaked")
}

func TestDoContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	n := 0
	err := (Policy{}).Do(ctx, func(context.Context) error { n++; return nil })
	assert.ErrorIs(t, err, context.Canceled)
	assert.Zero(t, n, "calls")

	// Cancelled during the wait: ctx error, naming the last failure.
	ctx, cancel = context.WithCancel(context.Background())
	p := Policy{BaseDelay: time.Hour, MaxDelay: time.Hour}
	start := time.Now()
	err = p.Do(ctx, func(context.Context) error {
		time.AfterFunc(20*time.Millisecond, cancel)
		return retryable(503)
	})
	assert.ErrorIs(t, err, context.Canceled)
	assert.Contains(t, err.Error(), "HTTP 503")
	assert.Less(t, time.Since(start), time.Minute, "did not stop promptly") // the wait would be ≥ 30 min

	// A wait past the deadline is not started.
	ctx, cancel2 := context.WithTimeout(context.Background(), time.Second)
	defer cancel2()
	err = (Policy{BaseDelay: time.Minute, MaxDelay: time.Hour}).Do(ctx, func(context.Context) error { return retryable(503) })
	require.Error(t, err)
	assert.Contains(t, err.Error(), "pass the context deadline")
}

func TestBackoffCapped(t *testing.T) {
	p := Policy{BaseDelay: time.Second, MaxDelay: 4 * time.Second}
	for n := range 40 {
		d := p.Backoff(n)
		require.GreaterOrEqual(t, d, 500*time.Millisecond, "Backoff(%d)", n)
		require.LessOrEqual(t, d, 4*time.Second, "Backoff(%d)", n)
	}
}

func TestParseRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		h    http.Header
		want time.Duration
		ok   bool
	}{
		{http.Header{"Retry-After": {"7"}}, 7 * time.Second, true},
		{http.Header{"Retry-After": {"0.5"}}, 500 * time.Millisecond, true},
		{http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"1"}}, 250 * time.Millisecond, true},
		{http.Header{"Retry-After": {"soon"}}, 0, false},
		{http.Header{}, 0, false},
		{nil, 0, false},
	} {
		got, ok := ParseRetryAfter(tc.h)
		assert.Equal(t, tc.want, got, "%v", tc.h)
		assert.Equal(t, tc.ok, ok, "%v", tc.h)
	}
	date := time.Now().Add(30 * time.Second).UTC().Format(http.TimeFormat)
	d, ok := ParseRetryAfter(http.Header{"Retry-After": {date}})
	assert.True(t, ok, "date")
	assert.GreaterOrEqual(t, d, 28*time.Second)
	assert.LessOrEqual(t, d, 30*time.Second)
}

func TestRedact(t *testing.T) {
	key := "sk-proj-SECRET123"
	in := "failed: Post \"https://x/v1?key=AIzaABC&alt=json\": token " + key + "\nAuthorization: Bearer sk-other-999"
	out := Redact(in, key, "")
	for _, s := range []string{key, "AIzaABC", "sk-other-999", "\n"} {
		assert.NotContains(t, out, s)
	}
	assert.Contains(t, out, "key=[REDACTED]&alt=json")
	r := Redact(strings.Repeat("é", MaxMessage))
	assert.LessOrEqual(t, len(r), MaxMessage+len("…"), "not cut")
	assert.True(t, strings.HasSuffix(r, "…"), "not cut: %q", r)
}

func TestWrapClientTracks(t *testing.T) {
	orig := &http.Client{Timeout: time.Second}
	c := WrapClient(provider.HTTP{Client: orig})
	require.Nil(t, orig.Transport, "original modified")
	require.Equal(t, time.Second, c.Timeout, "timeout lost")
	var tr *Tracker
	s, h := tr.Last()
	assert.Zero(t, s, "nil tracker")
	assert.Nil(t, h, "nil tracker")
}

// A client without a transport of its own keeps Conns idle connections
// per host, with the default transport's time limits; one with its own
// transport sends through it.
func TestWrapClientPool(t *testing.T) {
	base := func(h provider.HTTP) http.RoundTripper { return WrapClient(h).Transport.(transport).base }
	for conns, want := range map[int]int{0: provider.DefaultConns, -1: provider.DefaultConns, 8: 8, 200: 200} {
		tr, ok := base(provider.HTTP{Conns: conns}).(*http.Transport)
		require.True(t, ok)
		assert.Equal(t, want, tr.MaxIdleConnsPerHost, "Conns %d", conns)
		assert.GreaterOrEqual(t, tr.MaxIdleConns, want, "Conns %d", conns)
		def := http.DefaultTransport.(*http.Transport)
		assert.Equal(t, def.TLSHandshakeTimeout, tr.TLSHandshakeTimeout)
		assert.Equal(t, def.IdleConnTimeout, tr.IdleConnTimeout)
		assert.NotNil(t, tr.DialContext)
	}
	own := &http.Transport{}
	assert.Same(t, own, base(provider.HTTP{Client: &http.Client{Transport: own}, Conns: 8}))
	assert.NotSame(t, base(provider.HTTP{}), base(provider.HTTP{}), "clients share a pool")
}

func TestMap(t *testing.T) {
	ctx := context.Background()
	const key = "sk-KEY"
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	assert.ErrorIs(t, Map(cancelled, "p", key, errors.New("x"), Failure{Status: 500}), context.Canceled)

	own := &text2sql.ModelError{Provider: "p", StatusCode: 200, Message: "blocked " + key}
	var me *text2sql.ModelError
	require.ErrorAs(t, Map(ctx, "p", key, own, Failure{}), &me)
	assert.Equal(t, "blocked [REDACTED]", me.Message, "the client's own error is kept, scrubbed")

	// The header's wait wins over the body's; without one the body's is used.
	err := Map(ctx, "p", key, errors.New("x"), Failure{Status: 429, Header: http.Header{"Retry-After": {"2"}}, Wait: time.Minute, HasWait: true})
	var h *hintError
	require.ErrorAs(t, err, &h)
	assert.Equal(t, 2*time.Second, h.after)
	require.ErrorAs(t, Map(ctx, "p", key, errors.New("x"), Failure{Status: 503, Wait: time.Minute, HasWait: true}), &h)
	assert.Equal(t, time.Minute, h.after)

	// Refused marks an error answer below 300; a blank message is the status text.
	require.ErrorAs(t, Map(ctx, "p", key, errors.New("x"), Failure{Status: 400, Message: " "}), &me)
	assert.Equal(t, "Bad Request", me.Message)
	require.ErrorAs(t, Map(ctx, "p", key, errors.New("x"), Failure{Status: 200, Refused: true, Message: "odd"}), &me)
	assert.Equal(t, "odd", me.Message)
	require.ErrorAs(t, Map(ctx, "p", key, errors.New("eof "+key), Failure{Status: 200}), &me)
	assert.Equal(t, "invalid response: eof [REDACTED]", me.Message)
	assert.False(t, me.Retryable)
	require.ErrorAs(t, Map(ctx, "p", key, &url.Error{Op: "Post", URL: "http://x", Err: errors.New("refused")}, Failure{}), &me)
	assert.Equal(t, "request failed: refused", me.Message)
	assert.True(t, me.Retryable)
	require.ErrorAs(t, Map(ctx, "p", key, errors.New("bad request "+key), Failure{}), &me)
	assert.Equal(t, "bad request [REDACTED]", me.Message)
	assert.False(t, me.Retryable)
}

func TestBound(t *testing.T) {
	hang := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }

	err := Bound(context.Background(), "p", 20*time.Millisecond, hang)
	var me *text2sql.ModelError
	require.ErrorAs(t, err, &me)
	assert.True(t, me.Timeout)
	assert.Equal(t, "p", me.Provider)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.ErrorIs(t, err, text2sql.ErrModel)

	// The caller's cancellation is the caller's error.
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(10 * time.Millisecond); cancel() }()
	err = Bound(ctx, "p", time.Hour, hang)
	assert.ErrorIs(t, err, context.Canceled)
	assert.False(t, errors.As(err, &me))

	// Other errors pass unchanged; no limit means no deadline.
	plain := errors.New("x")
	assert.Same(t, plain, Bound(context.Background(), "p", time.Hour, func(context.Context) error { return plain }))
	require.NoError(t, Bound(context.Background(), "p", 0, func(ctx context.Context) error {
		_, ok := ctx.Deadline()
		assert.False(t, ok)
		return nil
	}))
}

func TestTimeout(t *testing.T) {
	assert.Equal(t, DefaultTimeout, Timeout(0))
	assert.Equal(t, time.Duration(0), Timeout(-time.Second))
	assert.Equal(t, time.Second, Timeout(time.Second))
}

func TestSetting(t *testing.T) {
	assert.Equal(t, 3, Setting(0, 3))
	assert.Equal(t, 0, Setting(-1, 3))
	assert.Equal(t, 5, Setting(5, 3))
}
