package retry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/provider"
)

// Tracker records the status and headers of the last HTTP response a call
// received, so that errors of SDKs which hide them (status of a non-JSON
// error body, Retry-After) can still be classified. It is safe for
// concurrent use.
type Tracker struct {
	mu     sync.Mutex
	status int
	header http.Header
}

type trackerKey struct{}

// Track returns a context whose HTTP requests, when sent through a client
// wrapped by WrapClient, are recorded in the returned Tracker.
func Track(ctx context.Context) (context.Context, *Tracker) {
	t := &Tracker{}
	return context.WithValue(ctx, trackerKey{}, t), t
}

// Last returns the status code (0 when no response arrived) and headers of
// the last response recorded.
func (t *Tracker) Last() (int, http.Header) {
	if t == nil {
		return 0, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.status, t.header
}

// Reset forgets the last response, before a new attempt.
func (t *Tracker) Reset() {
	if t == nil {
		return
	}
	t.mu.Lock()
	t.status, t.header = 0, nil
	t.mu.Unlock()
}

func (t *Tracker) set(status int, h http.Header) {
	t.mu.Lock()
	t.status, t.header = status, h
	t.mu.Unlock()
}

type transport struct{ base http.RoundTripper }

func (t transport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if tr, ok := req.Context().Value(trackerKey{}).(*Tracker); ok && resp != nil {
		tr.set(resp.StatusCode, resp.Header.Clone())
	}
	return resp, err
}

// WrapClient returns a copy of h.Client (nil means a new client) whose
// transport records responses in the Tracker of the request's context.
// h.Client itself is not modified. A client without a Transport sends
// through pool(h.Conns).
func WrapClient(h provider.HTTP) *http.Client {
	var cp http.Client
	if h.Client != nil {
		cp = *h.Client
	}
	base := cp.Transport
	if base == nil {
		base = pool(h.Conns)
	}
	cp.Transport = transport{base: base}
	return &cp
}

// pool returns a new transport with http.DefaultTransport's settings that
// keeps up to conns idle connections per host (provider.DefaultConns when
// conns <= 0). When a program has replaced http.DefaultTransport by a
// RoundTripper that is no *http.Transport, pool returns that one, whose
// pooling the program chose.
func pool(conns int) http.RoundTripper {
	dt, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return http.DefaultTransport
	}
	if conns <= 0 {
		conns = provider.DefaultConns
	}
	t := dt.Clone()
	t.MaxIdleConnsPerHost = conns
	t.MaxIdleConns = max(t.MaxIdleConns, conns)
	return t
}

// ParseRetryAfter reads a server-requested wait from response headers:
// "retry-after-ms" (milliseconds, sent by OpenAI), then "Retry-After" as
// delay-seconds or an HTTP date. It returns false when neither is present
// and valid.
func ParseRetryAfter(h http.Header) (time.Duration, bool) {
	if h == nil {
		return 0, false
	}
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0), true
	}
	return 0, false
}

// keyParam matches credentials in URL query strings: key=, api_key=,
// api-key=, access_token=.
var keyParam = regexp.MustCompile(`(?i)([?&](?:key|api[_-]?key|access_token)=)[^&\s"']+`)

// bearer matches an Authorization header value.
var bearer = regexp.MustCompile(`(?i)(bearer\s+)[A-Za-z0-9._~+/=-]+`)

// MaxMessage is the length, in bytes, at which Redact cuts a message.
const MaxMessage = 600

// Redact returns s with every secret (empty ones are ignored), every
// credential-like URL query parameter and every bearer token replaced by
// "[REDACTED]", white space runs (newlines included) collapsed to one
// space, cut to MaxMessage bytes (on a rune boundary, with "…").
func Redact(s string, secrets ...string) string {
	for _, sec := range secrets {
		if sec != "" {
			s = strings.ReplaceAll(s, sec, "[REDACTED]")
		}
	}
	s = keyParam.ReplaceAllString(s, "${1}[REDACTED]")
	s = bearer.ReplaceAllString(s, "${1}[REDACTED]")
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > MaxMessage {
		cut := MaxMessage
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// DoTracked runs fn under p with each attempt's HTTP responses tracked,
// mapping a failed attempt's error with mapErr (which sees the Tracker, for
// SDK errors that hide the status or Retry-After) before p decides on a
// retry.
func (p Policy) DoTracked(ctx context.Context, fn func(ctx context.Context) error,
	mapErr func(ctx context.Context, err error, tr *Tracker) error) error {
	return p.Do(ctx, func(ctx context.Context) error {
		tctx, tr := Track(ctx)
		if err := fn(tctx); err != nil {
			return mapErr(ctx, err, tr)
		}
		return nil
	})
}

// Failure is what a provider client read from the error of a failed SDK
// call: the HTTP answer, when one came.
type Failure struct {
	Status int         // the HTTP status; 0 when no answer came
	Header http.Header // the answer's headers, for Retry-After
	// Refused marks an error answer whatever its status (an API error the
	// SDK decoded); a status of 300 or more is one anyway.
	Refused bool
	// Message is the server's message of an error answer; blank means the
	// status text.
	Message string
	// Wait, when HasWait is set, is the wait the answer's body asks for
	// (e.g. google.rpc.RetryInfo), used when no header asks for one.
	Wait    time.Duration
	HasWait bool
}

// Map turns err, the error of a failed call to provider, into what the
// provider clients' callers see, every message scrubbed of key (Redact):
//   - ctx ended: an error wrapping ctx.Err();
//   - a *text2sql.ModelError made by the client (a blocked prompt): kept;
//   - an error answer (f.Refused or f.Status ≥ 300): a *text2sql.ModelError
//     with the status and f.Message, Retryable for 429/5xx, and the
//     server's wait (Retry-After or retry-after-ms, else f.Wait) attached
//     for the retry loop (After);
//   - a 2xx answer the SDK could not decode: a non-retryable ModelError
//     "invalid response: …";
//   - no answer (a *url.Error, e.g. connection refused): a retryable
//     ModelError "request failed: …" with StatusCode 0;
//   - anything else (the SDK refused the request): a non-retryable
//     ModelError.
func Map(ctx context.Context, provider, key string, err error, f Failure) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", provider, ctx.Err())
	}
	var me *text2sql.ModelError
	if errors.As(err, &me) {
		cp := *me
		cp.Message = Redact(cp.Message, key)
		return &cp
	}
	switch {
	case f.Status >= 300 || f.Refused:
		msg := f.Message
		if strings.TrimSpace(msg) == "" {
			msg = http.StatusText(f.Status)
		}
		out := &text2sql.ModelError{
			Provider:   provider,
			StatusCode: f.Status,
			Message:    Redact(msg, key),
			Retryable:  Retryable(f.Status),
		}
		wait, ok := ParseRetryAfter(f.Header)
		if !ok {
			wait, ok = f.Wait, f.HasWait
		}
		if ok && out.Retryable {
			return After(out, wait)
		}
		return out
	case f.Status >= 200:
		return &text2sql.ModelError{
			Provider:   provider,
			StatusCode: f.Status,
			Message:    "invalid response: " + Redact(err.Error(), key),
		}
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return &text2sql.ModelError{
			Provider:  provider,
			Message:   "request failed: " + Redact(ue.Err.Error(), key),
			Retryable: true,
		}
	}
	return &text2sql.ModelError{Provider: provider, Message: Redact(err.Error(), key)}
}
