package retry

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/text2sql-go/text2sql"
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
	if err != nil || n != 3 {
		t.Fatalf("err = %v, calls = %d", err, n)
	}
	if len(waits) != 2 || waits[0] < 50*time.Millisecond || waits[0] > 100*time.Millisecond || waits[1] < 100*time.Millisecond || waits[1] > 200*time.Millisecond {
		t.Errorf("waits = %v", waits)
	}
}

func TestDoExhausted(t *testing.T) {
	var waits []time.Duration
	p := Policy{MaxRetries: 2, BaseDelay: time.Millisecond, Sleep: recorder(&waits)}
	n := 0
	err := p.Do(context.Background(), func(context.Context) error { n++; return retryable(500) })
	var me *text2sql.ModelError
	if !errors.As(err, &me) || me.StatusCode != 500 || !strings.Contains(me.Message, "gave up after 3 attempts") {
		t.Fatalf("err = %v", err)
	}
	if n != 3 {
		t.Errorf("calls = %d", n)
	}
}

func TestDoNoRetry(t *testing.T) {
	for _, p := range []Policy{{MaxRetries: -1}, {}} {
		n := 0
		err := p.Do(context.Background(), func(context.Context) error { n++; return retryable(400) })
		if n != 1 || err.Error() != "p: HTTP 400: m" {
			t.Errorf("%+v: calls = %d, err = %v", p, n, err)
		}
	}
	n := 0
	plain := errors.New("plain")
	if err := (Policy{}).Do(context.Background(), func(context.Context) error { n++; return plain }); err != plain || n != 1 {
		t.Errorf("plain error: %v after %d calls", err, n)
	}
	n = 0
	err := (Policy{MaxRetries: -1}).Do(context.Background(), func(context.Context) error { n++; return retryable(503) })
	if n != 1 || strings.Contains(err.Error(), "gave up") {
		t.Errorf("MaxRetries<0: calls = %d, err = %v", n, err)
	}
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
	if err != nil || len(waits) != 1 || waits[0] != 5*time.Second {
		t.Fatalf("err = %v, waits = %v", err, waits)
	}
	// A hint above MaxDelay ends the retries; the wrapper is removed.
	err = p.Do(context.Background(), func(context.Context) error { return After(retryable(429), time.Minute) })
	var me *text2sql.ModelError
	if !errors.As(err, &me) || !strings.Contains(me.Message, "server asked to wait 1m0s") {
		t.Fatalf("err = %v", err)
	}
	if _, ok := err.(*hintError); ok {
		t.Error("hint wrapper leaked")
	}
}

func TestDoContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	n := 0
	if err := (Policy{}).Do(ctx, func(context.Context) error { n++; return nil }); !errors.Is(err, context.Canceled) || n != 0 {
		t.Errorf("err = %v, calls = %d", err, n)
	}

	// Cancelled during the wait: ctx error, naming the last failure.
	ctx, cancel = context.WithCancel(context.Background())
	p := Policy{BaseDelay: time.Hour, MaxDelay: time.Hour}
	start := time.Now()
	err := p.Do(ctx, func(context.Context) error {
		time.AfterFunc(20*time.Millisecond, cancel)
		return retryable(503)
	})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "HTTP 503") {
		t.Errorf("err = %v", err)
	}
	if time.Since(start) > time.Second {
		t.Error("did not stop promptly")
	}

	// A wait past the deadline is not started.
	ctx, cancel2 := context.WithTimeout(context.Background(), time.Second)
	defer cancel2()
	err = (Policy{BaseDelay: time.Minute, MaxDelay: time.Hour}).Do(ctx, func(context.Context) error { return retryable(503) })
	if !strings.Contains(err.Error(), "pass the context deadline") {
		t.Errorf("err = %v", err)
	}
}

func TestBackoffCapped(t *testing.T) {
	p := Policy{BaseDelay: time.Second, MaxDelay: 4 * time.Second}
	for n := range 40 {
		d := p.Backoff(n)
		if d < 500*time.Millisecond || d > 4*time.Second {
			t.Fatalf("Backoff(%d) = %v", n, d)
		}
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
		if got != tc.want || ok != tc.ok {
			t.Errorf("%v: %v %v", tc.h, got, ok)
		}
	}
	date := time.Now().Add(30 * time.Second).UTC().Format(http.TimeFormat)
	if d, ok := ParseRetryAfter(http.Header{"Retry-After": {date}}); !ok || d < 28*time.Second || d > 30*time.Second {
		t.Errorf("date: %v %v", d, ok)
	}
}

func TestRedact(t *testing.T) {
	key := "sk-proj-SECRET123"
	in := "failed: Post \"https://x/v1?key=AIzaABC&alt=json\": token " + key + "\nAuthorization: Bearer sk-other-999"
	out := Redact(in, key, "")
	for _, s := range []string{key, "AIzaABC", "sk-other-999", "\n"} {
		if strings.Contains(out, s) {
			t.Errorf("%q still in %q", s, out)
		}
	}
	if !strings.Contains(out, "key=[REDACTED]&alt=json") {
		t.Errorf("out = %q", out)
	}
	long := strings.Repeat("é", MaxMessage)
	if r := Redact(long); len(r) > MaxMessage+len("…") || !strings.HasSuffix(r, "…") {
		t.Errorf("not cut: %d bytes", len(r))
	}
}

func TestWrapClientTracks(t *testing.T) {
	orig := &http.Client{Timeout: time.Second}
	c := WrapClient(orig)
	if orig.Transport != nil || c.Timeout != time.Second {
		t.Fatal("original modified or timeout lost")
	}
	var tr *Tracker
	if s, h := tr.Last(); s != 0 || h != nil {
		t.Error("nil tracker")
	}
}
