// Package gemini is a text2sql.Model backed by Google's Gemini API
// (generativelanguage.googleapis.com) through the google.golang.org/genai SDK.
//
// Each Complete call is one POST {BaseURL}/v1beta/models/{Model}:generateContent
// with the key in the x-goog-api-key header. Failed calls are retried by
// this package (the SDK's own retries are off): up to MaxRetries times on
// HTTP 429, 5xx or a connection failure, waiting RetryBaseDelay·2ⁿ less up
// to half of it as jitter, or longer when the server asks (Retry-After,
// google.rpc.RetryInfo), and never past the context's deadline. The whole
// call, retries included, ends within Options.Timeout (60s by default).
//
// The API key never appears in an error: every message is scrubbed of it.
package gemini

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"

	"google.golang.org/genai"

	"github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/geminiapi"
	"github.com/text2sql-go/text2sql/internal/retry"
	"github.com/text2sql-go/text2sql/provider"
)

// DefaultModel is the model used when Options.Model is empty.
const DefaultModel = "gemini-2.5-flash"

// DefaultBaseURL is the Gemini API endpoint used when Options.BaseURL is empty.
const DefaultBaseURL = geminiapi.DefaultBaseURL

// EnvAPIKey is the environment variable FromEnv reads the API key from.
const EnvAPIKey = "GEMINI_API_KEY"

// Options configure a Model. Only APIKey is required.
type Options struct {
	// APIKey is the Gemini API key. Required. It is sent in the
	// x-goog-api-key header and never appears in errors.
	APIKey string
	// Model is the model ID, e.g. "gemini-2.5-flash" (DefaultModel when
	// empty) or "gemini-2.5-pro".
	Model string
	// BaseURL is the API root, without the version (DefaultBaseURL when
	// empty). Point it at a proxy or a test server.
	BaseURL string
	// HTTP sets the client, the retries and the time limit of each
	// call (see provider.HTTP; the zero value is the default).
	provider.HTTP
}

// Model is a text2sql.Model over the Gemini API. It is safe for concurrent
// use.
type Model struct {
	client *geminiapi.Client
	model  string
}

var _ text2sql.Model = (*Model)(nil)

// New returns a Model. It makes no request. It returns an error wrapping
// text2sql.ErrInvalidConfig when APIKey is empty or BaseURL is not an
// absolute http(s) URL. ctx is only used while building the SDK client.
func New(ctx context.Context, opts Options) (*Model, error) {
	c, err := geminiapi.New(ctx, geminiapi.Config{APIKey: opts.APIKey, BaseURL: opts.BaseURL, HTTP: opts.HTTP})
	if err != nil {
		return nil, err
	}
	model := cmp.Or(opts.Model, DefaultModel)
	return &Model{client: c, model: model}, nil
}

// FromEnv is New with Options.APIKey taken from the GEMINI_API_KEY
// environment variable when opts.APIKey is empty. It returns an error
// wrapping text2sql.ErrInvalidConfig when no key is found.
func FromEnv(ctx context.Context, opts Options) (*Model, error) {
	if opts.APIKey == "" {
		opts.APIKey = os.Getenv(EnvAPIKey)
	}
	return New(ctx, opts)
}

// Name returns the configured model ID, e.g. "gemini-2.5-flash".
func (m *Model) Name() string { return m.model }

// Complete sends req as one generateContent call and returns the answer.
//
// Mapping: req.System becomes the systemInstruction; req.Messages become
// contents in order, RoleAssistant as role "model" and anything else as
// "user"; req.Schema sets responseMimeType "application/json" and
// responseJsonSchema (the schema as given, JSON Schema); Temperature sets
// temperature; MaxTokens > 0 sets maxOutputTokens (on thinking models this
// budget includes the thinking tokens).
//
// The answer's Text is the concatenation of the text parts of the first
// candidate, thought parts excluded. Model is the response's modelVersion,
// or the configured model when absent. Usage.InputTokens is
// promptTokenCount; Usage.OutputTokens is candidatesTokenCount plus
// thoughtsTokenCount (thinking is billed as output).
//
// Errors: an error wrapping text2sql.ErrInvalidConfig when req.Schema is
// not valid JSON; an error wrapping ctx.Err() when ctx ends (errors.Is with
// context.DeadlineExceeded or context.Canceled); a *text2sql.ModelError with
// Timeout set when Options.Timeout passes first (errors.Is with
// text2sql.ErrModel and context.DeadlineExceeded); otherwise a
// *text2sql.ModelError (errors.Is(err, text2sql.ErrModel)) with Provider
// "gemini": StatusCode and Retryable for HTTP failures, and StatusCode 200,
// Retryable false, for an undecodable body, a blocked prompt
// (promptFeedback.blockReason), no candidates, or an empty answer (the
// message names the finish reason, e.g. SAFETY or MAX_TOKENS).
func (m *Model) Complete(ctx context.Context, req text2sql.ModelRequest) (*text2sql.ModelResponse, error) {
	contents := make([]*genai.Content, 0, len(req.Messages))
	for _, msg := range req.Messages {
		role := genai.RoleUser
		if msg.Role == text2sql.RoleAssistant {
			role = genai.RoleModel
		}
		contents = append(contents, &genai.Content{Role: role, Parts: []*genai.Part{{Text: msg.Content}}})
	}
	cfg := &genai.GenerateContentConfig{}
	if req.System != "" {
		cfg.SystemInstruction = &genai.Content{Parts: []*genai.Part{{Text: req.System}}}
	}
	if len(req.Schema) > 0 {
		if !json.Valid(req.Schema) {
			return nil, fmt.Errorf("%w: gemini: ModelRequest.Schema is not valid JSON", text2sql.ErrInvalidConfig)
		}
		cfg.ResponseMIMEType = "application/json"
		cfg.ResponseJsonSchema = json.RawMessage(req.Schema)
	}
	if req.Temperature != nil {
		t := float32(*req.Temperature)
		cfg.Temperature = &t
	}
	if req.MaxTokens > 0 {
		cfg.MaxOutputTokens = int32(min(req.MaxTokens, 1<<31-1))
	}

	return retry.Complete(ctx, m.client.Do, func(ctx context.Context) (*genai.GenerateContentResponse, error) {
		return m.client.GenAI.Models.GenerateContent(ctx, m.model, contents, cfg)
	}, m.answer)
}

// Ping reports whether the API answers and serves the configured model,
// without generating anything: one models.get call for it, under the same
// retries and time limit as Complete. Errors are Complete's; an unknown
// model is a *text2sql.ModelError with StatusCode 404.
func (m *Model) Ping(ctx context.Context) error {
	return m.client.Do(ctx, func(ctx context.Context) error {
		_, err := m.client.GenAI.Models.Get(ctx, m.model, nil)
		return err
	})
}

func (m *Model) answer(resp *genai.GenerateContentResponse) (*text2sql.ModelResponse, error) {
	fail := func(format string, args ...any) error {
		return &text2sql.ModelError{Provider: geminiapi.Provider, StatusCode: http.StatusOK, Message: fmt.Sprintf(format, args...)}
	}
	if resp == nil {
		return nil, fail("empty response")
	}
	if pf := resp.PromptFeedback; pf != nil && pf.BlockReason != "" {
		msg := "prompt blocked: " + string(pf.BlockReason)
		if pf.BlockReasonMessage != "" {
			msg += ": " + pf.BlockReasonMessage
		}
		return nil, fail("%s", msg)
	}
	if len(resp.Candidates) == 0 || resp.Candidates[0] == nil {
		return nil, fail("no candidates in response")
	}
	cand := resp.Candidates[0]
	var sb strings.Builder
	if cand.Content != nil {
		for _, p := range cand.Content.Parts {
			if p != nil && !p.Thought {
				sb.WriteString(p.Text)
			}
		}
	}
	text := sb.String()
	if strings.TrimSpace(text) == "" {
		reason := string(cand.FinishReason)
		if reason == "" {
			reason = "unspecified"
		}
		msg := "empty answer (finish reason " + reason + ")"
		if cand.FinishMessage != "" {
			msg += ": " + cand.FinishMessage
		}
		return nil, fail("%s", msg)
	}
	name := resp.ModelVersion
	if name == "" {
		name = m.model
	}
	var usage text2sql.Usage
	if u := resp.UsageMetadata; u != nil {
		usage.InputTokens = int(u.PromptTokenCount)
		usage.OutputTokens = int(u.CandidatesTokenCount) + int(u.ThoughtsTokenCount)
	}
	return &text2sql.ModelResponse{Text: text, Model: name, Usage: usage}, nil
}
