// Package retry runs provider HTTP calls with bounded retries and an overall
// time limit, and helps turn their failures into *text2sql.ModelError values
// that never hold a secret.
//
// It is shared by the model and embedding providers (llm/gemini, llm/openai,
// embed/gemini, embed/openai). The loop retries only errors that are a
// *text2sql.ModelError with Retryable set (HTTP 429, 5xx, or no response at
// all), waits with exponential backoff and jitter, honours a server-requested
// delay (Retry-After, retry-after-ms, Google RetryInfo) and stops as soon as
// the context ends.
package retry

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/provider"
)

// Defaults of a Policy's zero fields.
const (
	DefaultMaxRetries = 3
	DefaultBaseDelay  = 500 * time.Millisecond
	DefaultMaxDelay   = 60 * time.Second
)

// DefaultTimeout is the time limit of one provider call, every attempt and
// retry wait included, when a provider's Options.Timeout is 0. A structured
// answer takes a hosted model a few seconds, and a thinking model or a long
// prompt a few tens of seconds; 60 s leaves room for that plus a quick
// retry, and still reports a provider that never answers within a minute
// instead of leaving the caller waiting for ever. Slow local models (a
// large model on a CPU) may need a longer limit.
const DefaultTimeout = 60 * time.Second

// Timeout resolves a provider's Options.Timeout: 0 means DefaultTimeout; a
// negative value means no limit of the client's own, returned as 0 (the
// caller's context alone bounds the call).
func Timeout(d time.Duration) time.Duration { return Setting(d, DefaultTimeout) }

// Setting resolves a count or a limit whose 0 means def and whose
// negative values mean none, returned as 0; a positive v stands.
func Setting[T int | time.Duration](v, def T) T {
	switch {
	case v < 0:
		return 0
	case v == 0:
		return def
	}
	return v
}

// Bound runs fn with ctx limited to d; d <= 0 runs fn under ctx alone. fn
// is one whole provider call, retries included (Policy.Do, DoTracked), so
// d bounds all of it.
//
// When d, and not ctx's own deadline or cancellation, ended the call, Bound
// returns a *text2sql.ModelError with Provider provider and Timeout set,
// whose message names d: errors.Is with text2sql.ErrModel and with
// context.DeadlineExceeded both hold. Otherwise it returns fn's error
// unchanged, so a shorter deadline of the caller's still gives an error
// wrapping ctx.Err().
func Bound(ctx context.Context, provider string, d time.Duration, fn func(ctx context.Context) error) error {
	if d <= 0 {
		return fn(ctx)
	}
	limit := errors.New("model call time limit")
	bctx, cancel := context.WithTimeoutCause(ctx, d, limit)
	defer cancel()
	err := fn(bctx)
	if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) && context.Cause(bctx) == limit {
		return &text2sql.ModelError{
			Provider: provider,
			Message:  fmt.Sprintf("no answer within %v, the time limit of one model call (Options.Timeout)", d),
			Timeout:  true,
		}
	}
	return err
}

// Policy says how often and how long to retry.
type Policy struct {
	// MaxRetries is the number of retries after the first attempt. 0 means
	// DefaultMaxRetries; a negative value means no retry at all.
	MaxRetries int
	// BaseDelay is the wait before the first retry; it doubles on each
	// further retry, and a random jitter takes up to half of it off. 0 means
	// DefaultBaseDelay.
	BaseDelay time.Duration
	// MaxDelay caps every wait. A server asking for a longer wait ends the
	// retries at once with the last error. 0 means DefaultMaxDelay.
	MaxDelay time.Duration
	// Sleep waits d or until ctx ends, returning ctx.Err() in that case.
	// nil means a timer. Tests replace it to record waits.
	Sleep func(ctx context.Context, d time.Duration) error
}

// FromHTTP returns the Policy of a provider's settings.
func FromHTTP(h provider.HTTP) Policy {
	return Policy{MaxRetries: h.MaxRetries, BaseDelay: h.RetryBaseDelay, MaxDelay: h.MaxRetryDelay}
}

func (p Policy) retries() int { return Setting(p.MaxRetries, DefaultMaxRetries) }

func (p Policy) base() time.Duration {
	if p.BaseDelay <= 0 {
		return DefaultBaseDelay
	}
	return p.BaseDelay
}

func (p Policy) max() time.Duration {
	if p.MaxDelay <= 0 {
		return DefaultMaxDelay
	}
	return p.MaxDelay
}

// Backoff returns the wait before retry number n (0 for the first retry):
// BaseDelay·2ⁿ capped at MaxDelay, less a random jitter of up to half.
func (p Policy) Backoff(n int) time.Duration {
	d := p.base()
	for i := 0; i < n && d < p.max(); i++ {
		d *= 2
	}
	d = min(d, p.max())
	half := d / 2
	if half > 0 {
		d = half + rand.N(half+1)
	}
	return d
}

func (p Policy) sleep(ctx context.Context, d time.Duration) error {
	if p.Sleep != nil {
		return p.Sleep(ctx, d)
	}
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Do calls fn until it returns nil, returns an error that is not retryable,
// the retries are spent, or ctx ends.
//
// An error is retryable when it is (or wraps) a *text2sql.ModelError with
// Retryable set. fn may wrap its error with After to ask for a minimum wait.
//
// Do returns nil; fn's last error (with the After wrapper removed; when
// retries were made, a *text2sql.ModelError's message says how many attempts
// there were); or, when ctx ends before or between attempts, an error
// wrapping ctx.Err() (so errors.Is(err, context.DeadlineExceeded) or
// context.Canceled holds) that also names the last attempt's failure.
func (p Policy) Do(ctx context.Context, fn func(ctx context.Context) error) error {
	var last error
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return ctxError(err, last)
		}
		err := fn(ctx)
		if err == nil {
			return nil
		}
		wait, hinted := hint(err)
		err = strip(err)
		last = err
		if ctx.Err() != nil {
			return ctxError(ctx.Err(), last)
		}
		var me *text2sql.ModelError
		if !errors.As(err, &me) || !me.Retryable {
			return err
		}
		if attempt >= p.retries() {
			if attempt == 0 {
				return err
			}
			return annotate(err, fmt.Sprintf("gave up after %d attempts", attempt+1))
		}
		if hinted && wait > p.max() {
			return annotate(err, fmt.Sprintf("server asked to wait %v", wait.Round(time.Millisecond)))
		}
		d := max(p.Backoff(attempt), wait)
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d {
			// Waiting would outlast the caller's deadline: say so now
			// rather than sleep into it.
			return annotate(err, fmt.Sprintf("next retry in %v would pass the context deadline", d.Round(time.Millisecond)))
		}
		if serr := p.sleep(ctx, d); serr != nil {
			return ctxError(serr, last)
		}
	}
}

func ctxError(ctxErr, last error) error {
	if last == nil {
		return ctxErr
	}
	if errors.Is(last, ctxErr) {
		return last
	}
	return fmt.Errorf("%w (last attempt: %v)", ctxErr, last)
}

// annotate returns a copy of a *text2sql.ModelError err with note appended
// to its message; other errors are returned as they are.
func annotate(err error, note string) error {
	if me, ok := err.(*text2sql.ModelError); ok {
		c := *me
		c.Message += " (" + note + ")"
		return &c
	}
	return err
}

// hintError carries a server-requested wait along with an error.
type hintError struct {
	err   error
	after time.Duration
}

func (h *hintError) Error() string { return h.err.Error() }
func (h *hintError) Unwrap() error { return h.err }

// After wraps err with a server-requested minimum wait before the next
// attempt. Do removes the wrapper. A nil err or a non-positive d returns err.
func After(err error, d time.Duration) error {
	if err == nil || d <= 0 {
		return err
	}
	return &hintError{err: err, after: d}
}

func hint(err error) (time.Duration, bool) {
	if h, ok := err.(*hintError); ok {
		return h.after, true
	}
	return 0, false
}

func strip(err error) error {
	if h, ok := err.(*hintError); ok {
		return h.err
	}
	return err
}

// Retryable reports whether an HTTP status is worth retrying: 429 and 5xx.
func Retryable(status int) bool {
	return status == 429 || status >= 500
}

// Complete is one model call: send runs each attempt under do (a
// provider client's Do: retries and time limit), answer turns the
// response into a ModelResponse, and the result's Attempts is the number
// of attempts send made. An error of send, answer or do is returned as it
// is, with no response.
func Complete[R any](ctx context.Context, do func(context.Context, func(context.Context) error) error,
	send func(context.Context) (R, error), answer func(R) (*text2sql.ModelResponse, error)) (*text2sql.ModelResponse, error) {
	var out *text2sql.ModelResponse
	attempts := 0
	err := do(ctx, func(ctx context.Context) error {
		attempts++
		resp, err := send(ctx)
		if err != nil {
			return err
		}
		out, err = answer(resp)
		return err
	})
	if err != nil {
		return nil, err
	}
	out.Attempts = attempts
	return out, nil
}
