// Package provider holds the settings every hosted model and embedding
// provider of this module shares (llm/gemini, llm/openai, embed/gemini,
// embed/openai): how calls to the provider's HTTP API are sent, retried
// and bounded in time. Each provider's Options embeds an HTTP value.
package provider

import (
	"net/http"
	"time"
)

// DefaultConns is HTTP.Conns when 0 or less: room for the concurrent calls
// of a busy service. Idle connections are only those the calls opened, and
// close after 90s unused, so the room costs nothing at low concurrency.
const DefaultConns = 64

// HTTP configures how a provider sends its requests. The zero value is
// the default: 3 retries, 500ms base delay, 60s delay cap, 60s call limit,
// a new client keeping up to 64 idle connections to the provider.
//
// A failed request is retried on HTTP 429, 5xx or a connection failure,
// waiting RetryBaseDelay·2ⁿ less up to half of it as jitter, or longer when
// the server asks (Retry-After, retry-after-ms, google.rpc.RetryInfo), never
// past the context's deadline.
type HTTP struct {
	// MaxRetries is the number of retries after the first attempt of each
	// request: 0 means 3, a negative value means none.
	MaxRetries int
	// RetryBaseDelay is the wait before the first retry, doubled at each
	// further one (500ms when 0).
	RetryBaseDelay time.Duration
	// MaxRetryDelay caps each wait (60s when 0). A server asking for a
	// longer wait ends the retries with its error.
	MaxRetryDelay time.Duration
	// Timeout bounds one call — a model's Complete, or one embedding
	// batch — every attempt and retry wait included: when it passes, the
	// call returns a *text2sql.ModelError with Timeout set (errors.Is with
	// context.DeadlineExceeded holds, and the message names the limit). 0
	// means 60s (room for a thinking model's answer and a quick retry); a
	// negative value means no limit of its own. A shorter deadline on ctx
	// still wins.
	Timeout time.Duration
	// Client sends the requests (a new client when nil). It is copied,
	// not modified; its own Timeout bounds each attempt. Without a
	// Transport of its own, it sends through a new transport with the
	// settings of http.DefaultTransport (dial, TLS handshake and idle
	// timeouts, proxy from the environment) sized by Conns.
	Client *http.Client
	// Conns is the number of calls expected at once (DefaultConns when 0
	// or less): up to that many idle connections to the provider's host
	// are kept for reuse. Go's default keeps 2, so that beyond 2
	// concurrent calls most calls open a new connection (a TCP and TLS
	// handshake, and a socket left in TIME_WAIT). It sets no limit on the
	// connections open at once. It does not apply to a Client with a
	// Transport of its own.
	Conns int
}
