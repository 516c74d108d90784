package retry

import (
	"context"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
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

// WrapClient returns a copy of c (nil means a new default client) whose
// transport records responses in the Tracker of the request's context. c
// itself is not modified.
func WrapClient(c *http.Client) *http.Client {
	var cp http.Client
	if c != nil {
		cp = *c
	}
	base := cp.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	cp.Transport = transport{base: base}
	return &cp
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
