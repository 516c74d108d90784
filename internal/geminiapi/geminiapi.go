// Package geminiapi holds what llm/gemini and embed/gemini share: building
// a google.golang.org/genai client for the Gemini API (Developer API
// backend, API key auth, the SDK's own retries off), running calls through
// the retry loop and mapping failures to *text2sql.ModelError with the API
// key scrubbed from every message.
package geminiapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"google.golang.org/genai"

	"github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/retry"
	"github.com/text2sql-go/text2sql/provider"
)

// Provider is the ModelError.Provider of Gemini failures.
const Provider = "gemini"

// DefaultBaseURL is the Gemini API endpoint.
const DefaultBaseURL = "https://generativelanguage.googleapis.com/"

// Config configures a Client.
type Config struct {
	APIKey  string        // required
	BaseURL string        // "" means DefaultBaseURL
	HTTP    provider.HTTP // client, retries and time limit
}

// Client is a genai client plus the retry policy and the key to scrub.
type Client struct {
	GenAI   *genai.Client // the SDK client; call it inside Do
	Policy  retry.Policy  // how Do retries
	Timeout time.Duration // Config.HTTP.Timeout resolved by retry.Timeout; 0: none
	key     string
}

// New builds a Client. It returns an error wrapping
// text2sql.ErrInvalidConfig when the key is missing or the base URL is not
// an absolute http(s) URL. The SDK does not read the environment for the
// key, backend or base URL: Config is the only source.
func New(ctx context.Context, cfg Config) (*Client, error) {
	if strings.TrimSpace(cfg.APIKey) == "" {
		return nil, fmt.Errorf("%w: gemini: APIKey is required (set Options.APIKey, or use FromEnv with GEMINI_API_KEY)", text2sql.ErrInvalidConfig)
	}
	base := cfg.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: gemini: BaseURL %q is not an absolute http(s) URL", text2sql.ErrInvalidConfig, retry.Redact(base, cfg.APIKey))
	}
	gc, err := genai.NewClient(ctx, &genai.ClientConfig{
		APIKey:     cfg.APIKey,
		Backend:    genai.BackendGeminiAPI,
		HTTPClient: retry.WrapClient(cfg.HTTP),
		HTTPOptions: genai.HTTPOptions{
			BaseURL: base,
			// RetryOptions stays nil: the SDK then sends each request
			// once, and our loop does the retrying.
		},
	})
	if err != nil {
		// The SDK prints its whole config, key included, in some errors.
		return nil, fmt.Errorf("%w: gemini: %s", text2sql.ErrInvalidConfig, retry.Redact(err.Error(), cfg.APIKey))
	}
	return &Client{GenAI: gc, Policy: retry.FromHTTP(cfg.HTTP), Timeout: retry.Timeout(cfg.HTTP.Timeout), key: cfg.APIKey}, nil
}

// Do runs fn under the retry policy, all of it within the client's time
// limit (retry.Bound: a *text2sql.ModelError with Timeout set when the
// limit ends it). fn's errors are mapped by Error; fn may also return a
// *text2sql.ModelError of its own (a blocked prompt), which is kept, its
// message scrubbed.
func (c *Client) Do(ctx context.Context, fn func(ctx context.Context) error) error {
	return retry.Bound(ctx, Provider, c.Timeout, func(ctx context.Context) error {
		return c.Policy.DoTracked(ctx, fn, c.Error)
	})
}

// Error maps an SDK error to what callers see (retry.Map): an HTTP error
// answer's status and message come from the SDK's genai.APIError when
// the tracker saw none, its canonical status (e.g. UNAVAILABLE) added to
// the message, and its google.rpc.RetryInfo detail gives the server's
// wait when no Retry-After header does. Every message has the API key
// and credential-like URL parameters removed.
func (c *Client) Error(ctx context.Context, err error, tr *retry.Tracker) error {
	status, hdr := tr.Last()
	var apiErr genai.APIError
	isAPI := errors.As(err, &apiErr)
	if status == 0 && isAPI {
		status = apiErr.Code
	}
	f := retry.Failure{Status: status, Header: hdr, Refused: isAPI && status != 0, Message: err.Error()}
	if isAPI {
		f.Message = apiErr.Message
		if f.Message == "" {
			f.Message = http.StatusText(status)
		}
		// Status is a canonical code such as UNAVAILABLE, or the HTTP
		// status line when the body was not JSON.
		if apiErr.Status != "" && !strings.Contains(f.Message, apiErr.Status) && !startsWithDigit(apiErr.Status) {
			f.Message += " [" + apiErr.Status + "]"
		}
		f.Wait, f.HasWait = retryInfo(apiErr.Details)
	}
	return retry.Map(ctx, Provider, c.key, err, f)
}

// retryInfo reads the wait of a google.rpc.RetryInfo error detail, e.g.
// {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "37s"}.
func retryInfo(details []map[string]any) (time.Duration, bool) {
	for _, d := range details {
		t, _ := d["@type"].(string)
		if !strings.HasSuffix(t, "google.rpc.RetryInfo") {
			continue
		}
		s, _ := d["retryDelay"].(string)
		if v, err := time.ParseDuration(s); err == nil && v >= 0 {
			return v, true
		}
	}
	return 0, false
}

func startsWithDigit(s string) bool { return s != "" && s[0] >= '0' && s[0] <= '9' }
