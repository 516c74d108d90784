package retry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/text2sql-go/text2sql"
)

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
