// Package openaiapi holds what llm/openai and embed/openai share: the
// request options for github.com/openai/openai-go/v3 services (explicit base
// URL and key, no OPENAI_* environment, the SDK's own retries off), running
// calls through the retry loop and mapping failures to
// *text2sql.ModelError with the API key scrubbed from every message.
package openaiapi

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/retry"
	"github.com/text2sql-go/text2sql/provider"
)

// Provider is the ModelError.Provider of OpenAI-compatible failures.
const Provider = "openai"

// DefaultBaseURL is the OpenAI API root.
const DefaultBaseURL = "https://api.openai.com/v1"

// Environment variables read by the providers' FromEnv.
const (
	EnvAPIKey  = "OPENAI_API_KEY"
	EnvBaseURL = "OPENAI_BASE_URL"
)

// FromEnv returns key and base, each taken from its environment variable
// (EnvAPIKey, EnvBaseURL) when empty.
func FromEnv(key, base string) (string, string) {
	return cmp.Or(key, os.Getenv(EnvAPIKey)), cmp.Or(base, os.Getenv(EnvBaseURL))
}

// Config configures a Client.
type Config struct {
	APIKey  string        // may be empty for local servers
	BaseURL string        // "" means DefaultBaseURL
	HTTP    provider.HTTP // client, retries and time limit
}

// Client holds the SDK request options plus the retry policy and the key
// to scrub.
type Client struct {
	Options []option.RequestOption // for openai.New…Service; call the service inside Do
	Policy  retry.Policy           // how Do retries
	BaseURL string                 // as resolved, without a trailing slash
	Timeout time.Duration          // Config.HTTP.Timeout resolved by retry.Timeout; 0: none
	key     string
}

// New builds a Client. It returns an error wrapping
// text2sql.ErrInvalidConfig when the base URL is not an absolute http(s)
// URL. Services built from Options do not read OPENAI_API_KEY,
// OPENAI_BASE_URL or other OPENAI_* variables: Config is the only source.
func New(cfg Config) (*Client, error) {
	base := strings.TrimRight(cfg.BaseURL, "/")
	if base == "" {
		base = DefaultBaseURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: openai: BaseURL %q is not an absolute http(s) URL", text2sql.ErrInvalidConfig, retry.Redact(cfg.BaseURL, cfg.APIKey))
	}
	opts := []option.RequestOption{
		option.WithBaseURL(base + "/"),
		option.WithHTTPClient(retry.WrapClient(cfg.HTTP)),
		option.WithMaxRetries(0),
		option.WithMiddleware(jsonByContent),
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	return &Client{Options: opts, Policy: retry.FromHTTP(cfg.HTTP), BaseURL: base, Timeout: retry.Timeout(cfg.HTTP.Timeout), key: cfg.APIKey}, nil
}

// Do runs fn under the retry policy, all of it within the client's time
// limit (retry.Bound: a *text2sql.ModelError with Timeout set when the
// limit ends it); fn's errors are mapped by Error.
func (c *Client) Do(ctx context.Context, fn func(ctx context.Context) error) error {
	return retry.Bound(ctx, Provider, c.Timeout, func(ctx context.Context) error {
		return c.Policy.DoTracked(ctx, fn, c.Error)
	})
}

// Error maps an SDK error to what callers see (retry.Map): an HTTP error
// answer's status, headers (retry-after-ms, Retry-After) and message come
// from the SDK's *openai.Error when the tracker saw none, its error code
// added to the message. Every message has the API key, bearer tokens and
// credential-like URL parameters removed.
func (c *Client) Error(ctx context.Context, err error, tr *retry.Tracker) error {
	status, hdr := tr.Last()
	var apiErr *openai.Error
	isAPI := errors.As(err, &apiErr)
	if isAPI && status == 0 {
		status = apiErr.StatusCode
		if apiErr.Response != nil {
			hdr = apiErr.Response.Header
		}
	}
	f := retry.Failure{Status: status, Header: hdr}
	if isAPI {
		f.Message = apiErr.Message
		if apiErr.Code != "" && !strings.Contains(f.Message, apiErr.Code) {
			f.Message += " [" + apiErr.Code + "]"
		}
	}
	return retry.Map(ctx, Provider, c.key, err, f)
}

// jsonByContent marks a successful answer whose body is valid JSON as
// application/json whatever Content-Type the server sent. The SDK decodes
// only answers labelled JSON and fails on the rest, while some
// OpenAI-compatible servers and proxies label JSON "text/plain"; the
// Gemini route (genai) reads the body whatever its label, and both routes
// should accept the same answers. A body that is not JSON keeps its label,
// so the SDK's own error reports it.
func jsonByContent(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	res, err := next(req)
	if err != nil || res.StatusCode < 200 || res.StatusCode > 299 || res.Body == nil {
		return res, err
	}
	mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type"))
	if mt == "application/json" || strings.HasSuffix(mt, "+json") || mt == "text/event-stream" {
		return res, nil
	}
	body, err := io.ReadAll(res.Body)
	_ = res.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("reading the answer: %w", err)
	}
	res.Body = io.NopCloser(bytes.NewReader(body))
	if json.Valid(body) {
		res.Header.Set("Content-Type", "application/json")
	}
	return res, nil
}
