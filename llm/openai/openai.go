// Package openai is a text2sql.Model over the Chat Completions API of OpenAI
// and of OpenAI-compatible servers (Ollama at http://localhost:11434/v1,
// vLLM, LM Studio, llama.cpp server, Azure-compatible gateways), through the
// github.com/openai/openai-go/v3 SDK.
//
// Each Complete call is one POST {BaseURL}/chat/completions, with
// "Authorization: Bearer <APIKey>" when a key is set. Failed calls are
// retried by this package (the SDK's own retries are off): up to
// MaxRetries times on HTTP 429, 5xx or a connection failure, waiting
// RetryBaseDelay·2ⁿ less up to half of it as jitter, or longer when the
// server asks (retry-after-ms, Retry-After), and never past the context's
// deadline. The whole call, retries included, ends within Options.Timeout
// (60s by default). The OPENAI_* environment variables are not read, except by
// FromEnv.
//
// The API key never appears in an error: every message is scrubbed of it.
package openai

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/openai/openai-go/v3"

	"github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/openaiapi"
	"github.com/text2sql-go/text2sql/internal/retry"
	"github.com/text2sql-go/text2sql/provider"
)

// DefaultModel is the model used when Options.Model is empty.
const DefaultModel = "gpt-4o-mini"

// DefaultBaseURL is the OpenAI API root used when Options.BaseURL is empty.
const DefaultBaseURL = openaiapi.DefaultBaseURL

// Environment variables read by FromEnv.
const (
	EnvAPIKey  = openaiapi.EnvAPIKey
	EnvBaseURL = openaiapi.EnvBaseURL
)

// JSON modes: how ModelRequest.Schema reaches the server.
const (
	// JSONSchema sends response_format {"type": "json_schema", "json_schema":
	// {"name": "response", "strict": true, "schema": <Schema>}}. Strict mode
	// makes OpenAI enforce the schema, and requires every object in it to
	// list all its properties as required and set additionalProperties to
	// false. The default.
	JSONSchema = "schema"
	// JSONObject sends response_format {"type": "json_object"} (valid JSON,
	// no schema) and appends the schema to the system message; for servers
	// without json_schema support.
	JSONObject = "object"
	// JSONOff sends no response_format and appends the schema to the system
	// message.
	JSONOff = "off"
)

// The fields that can carry ModelRequest.MaxTokens.
const (
	MaxCompletionTokens = "max_completion_tokens" // OpenAI's current field, required by reasoning models
	MaxTokens           = "max_tokens"            // the legacy field most compatible servers read
)

// Options configure a Model. Everything is optional for a local server;
// OpenAI itself needs APIKey.
type Options struct {
	// APIKey is sent as a bearer token; empty sends no Authorization
	// header (local servers). Never appears in errors.
	APIKey string
	// Model is the model ID (DefaultModel when empty), e.g. "gpt-4.1" or,
	// on Ollama, "qwen2.5-coder:7b".
	Model string
	// BaseURL is the API root including the version path (DefaultBaseURL
	// when empty), e.g. "http://localhost:11434/v1".
	BaseURL string
	// HTTP sets the client, the retries and the time limit of each
	// call (see provider.HTTP; the zero value is the default).
	provider.HTTP
	// JSONMode is JSONSchema (when empty), JSONObject or JSONOff; it only
	// matters for requests with a Schema.
	JSONMode string
	// MaxTokensField names the request field for ModelRequest.MaxTokens:
	// MaxCompletionTokens or MaxTokens. Empty means MaxCompletionTokens
	// with the default BaseURL and MaxTokens with any other.
	MaxTokensField string
}

// Model is a text2sql.Model over an OpenAI-compatible Chat Completions API.
// It is safe for concurrent use.
type Model struct {
	client   *openaiapi.Client
	chat     openai.ChatCompletionService
	models   openai.ModelService
	model    string
	jsonMode string
	maxField string
}

var _ text2sql.Model = (*Model)(nil)

// New returns a Model. It makes no request. It returns an error wrapping
// text2sql.ErrInvalidConfig when BaseURL is not an absolute http(s) URL or
// JSONMode or MaxTokensField hold an unknown value.
func New(opts Options) (*Model, error) {
	mode := opts.JSONMode
	switch mode {
	case "":
		mode = JSONSchema
	case JSONSchema, JSONObject, JSONOff:
	default:
		return nil, fmt.Errorf("%w: openai: JSONMode %q is not %q, %q or %q", text2sql.ErrInvalidConfig, mode, JSONSchema, JSONObject, JSONOff)
	}
	c, err := openaiapi.New(openaiapi.Config{APIKey: opts.APIKey, BaseURL: opts.BaseURL, HTTP: opts.HTTP})
	if err != nil {
		return nil, err
	}
	field := opts.MaxTokensField
	switch field {
	case "":
		field = MaxTokens
		if c.BaseURL == DefaultBaseURL {
			field = MaxCompletionTokens
		}
	case MaxTokens, MaxCompletionTokens:
	default:
		return nil, fmt.Errorf("%w: openai: MaxTokensField %q is not %q or %q", text2sql.ErrInvalidConfig, field, MaxCompletionTokens, MaxTokens)
	}
	model := cmp.Or(opts.Model, DefaultModel)
	return &Model{
		client:   c,
		chat:     openai.NewChatCompletionService(c.Options...),
		models:   openai.NewModelService(c.Options...),
		model:    model,
		jsonMode: mode,
		maxField: field,
	}, nil
}

// FromEnv is New with Options.APIKey taken from OPENAI_API_KEY and
// Options.BaseURL from OPENAI_BASE_URL when they are empty.
func FromEnv(opts Options) (*Model, error) {
	opts.APIKey, opts.BaseURL = openaiapi.FromEnv(opts.APIKey, opts.BaseURL)
	return New(opts)
}

// Name returns the configured model ID.
func (m *Model) Name() string { return m.model }

// Complete sends req as one chat completion and returns the answer.
//
// Mapping: req.System becomes a leading "system" message; req.Messages
// follow in order as "user" or "assistant" messages; req.Schema becomes a
// response_format as JSONMode says; Temperature sets temperature;
// MaxTokens > 0 sets the field named by MaxTokensField.
//
// The answer's Text is choices[0].message.content; Model is the response's
// model (the configured one when absent); Usage is usage.prompt_tokens and
// usage.completion_tokens (zero when the server sends no usage).
//
// Errors: an error wrapping text2sql.ErrInvalidConfig when req.Schema is
// not valid JSON; an error wrapping ctx.Err() when ctx ends (errors.Is with
// context.DeadlineExceeded or context.Canceled); a *text2sql.ModelError with
// Timeout set when Options.Timeout passes first (errors.Is with
// text2sql.ErrModel and context.DeadlineExceeded); otherwise a
// *text2sql.ModelError (errors.Is(err, text2sql.ErrModel)) with Provider
// "openai": StatusCode and Retryable for HTTP failures, and StatusCode 200,
// Retryable false, for an undecodable body, no choices, a refusal, or an
// empty answer (the message names the finish reason, e.g. length or
// content_filter).
func (m *Model) Complete(ctx context.Context, req text2sql.ModelRequest) (*text2sql.ModelResponse, error) {
	params := openai.ChatCompletionNewParams{Model: m.model}
	system := req.System
	if len(req.Schema) > 0 {
		if !json.Valid(req.Schema) {
			return nil, fmt.Errorf("%w: openai: ModelRequest.Schema is not valid JSON", text2sql.ErrInvalidConfig)
		}
		switch m.jsonMode {
		case JSONSchema:
			params.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{
				OfJSONSchema: &openai.ResponseFormatJSONSchemaParam{
					JSONSchema: openai.ResponseFormatJSONSchemaJSONSchemaParam{
						Name:   "response",
						Strict: openai.Bool(true),
						Schema: json.RawMessage(req.Schema),
					},
				},
			}
		case JSONObject:
			params.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{
				OfJSONObject: &openai.ResponseFormatJSONObjectParam{},
			}
			system = withSchema(system, req.Schema)
		case JSONOff:
			system = withSchema(system, req.Schema)
		}
	}
	if system != "" {
		params.Messages = append(params.Messages, openai.SystemMessage(system))
	}
	for _, msg := range req.Messages {
		if msg.Role == text2sql.RoleAssistant {
			params.Messages = append(params.Messages, openai.AssistantMessage(msg.Content))
		} else {
			params.Messages = append(params.Messages, openai.UserMessage(msg.Content))
		}
	}
	if req.Temperature != nil {
		params.Temperature = openai.Float(*req.Temperature)
	}
	if req.MaxTokens > 0 {
		if m.maxField == MaxCompletionTokens {
			params.MaxCompletionTokens = openai.Int(int64(req.MaxTokens))
		} else {
			params.MaxTokens = openai.Int(int64(req.MaxTokens))
		}
	}

	return retry.Complete(ctx, m.client.Do, func(ctx context.Context) (*openai.ChatCompletion, error) {
		return m.chat.New(ctx, params)
	}, m.answer)
}

// maxListed bounds the model IDs a Ping error names: enough to spot a
// misspelt or unpulled model, short enough for one line.
const maxListed = 8

// Ping reports whether the server answers and serves the configured model,
// without generating anything: one GET {BaseURL}/models (the list every
// OpenAI-compatible server offers), under the same retries and time limit
// as Complete. A model is served when the list has its ID, or, as Ollama
// lists untagged names, its ID with ":latest".
//
// Errors: as Complete's for a failed request (a *text2sql.ModelError, or an
// error wrapping ctx.Err()); a *text2sql.ModelError with StatusCode 200
// naming up to eight of the listed IDs when the model is not among them.
func (m *Model) Ping(ctx context.Context) error {
	var ids []string
	err := m.client.Do(ctx, func(ctx context.Context) error {
		page, err := m.models.List(ctx)
		if err != nil {
			return err
		}
		ids = ids[:0]
		for _, md := range page.Data {
			ids = append(ids, md.ID)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, id := range ids {
		if id == m.model || id == m.model+":latest" {
			return nil
		}
	}
	shown := ids[:min(len(ids), maxListed)]
	more := ""
	if len(ids) > len(shown) {
		more = fmt.Sprintf(" and %d more", len(ids)-len(shown))
	}
	return &text2sql.ModelError{Provider: openaiapi.Provider, StatusCode: http.StatusOK,
		Message: fmt.Sprintf("model %q is not among the %d models the server lists (%s%s)", m.model, len(ids), strings.Join(shown, ", "), more)}
}

// withSchema appends the JSON Schema to a system instruction, for servers
// that cannot enforce it.
func withSchema(system string, schema json.RawMessage) string {
	s := "Answer with a single JSON value that follows this JSON Schema:\n" + string(schema)
	if strings.TrimSpace(system) == "" {
		return s
	}
	return system + "\n\n" + s
}

func (m *Model) answer(resp *openai.ChatCompletion) (*text2sql.ModelResponse, error) {
	fail := func(format string, args ...any) error {
		return &text2sql.ModelError{Provider: openaiapi.Provider, StatusCode: http.StatusOK, Message: fmt.Sprintf(format, args...)}
	}
	if resp == nil || len(resp.Choices) == 0 {
		return nil, fail("no choices in response")
	}
	ch := resp.Choices[0]
	if ch.Message.Refusal != "" {
		return nil, fail("model refused: %s", ch.Message.Refusal)
	}
	if strings.TrimSpace(ch.Message.Content) == "" {
		reason := ch.FinishReason
		if reason == "" {
			reason = "unspecified"
		}
		return nil, fail("empty answer (finish reason %s)", reason)
	}
	name := resp.Model
	if name == "" {
		name = m.model
	}
	return &text2sql.ModelResponse{
		Text:  ch.Message.Content,
		Model: name,
		Usage: text2sql.Usage{
			InputTokens:  int(resp.Usage.PromptTokens),
			OutputTokens: int(resp.Usage.CompletionTokens),
		},
	}, nil
}
