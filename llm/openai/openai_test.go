package openai

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/httpfake"
	"github.com/text2sql-go/text2sql/internal/providertest"
	"github.com/text2sql-go/text2sql/provider"
)

const testKey = "sk-proj-TEST-SECRET-0123456789abcdef"

// okBody is a chat completion as OpenAI sends it.
const okBody = `{
  "id": "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG",
  "object": "chat.completion",
  "created": 1741570283,
  "model": "gpt-4o-mini-2024-07-18",
  "choices": [{
    "index": 0,
    "message": {"role": "assistant", "content": "{\"sql\":\"SELECT 1\"}", "refusal": null, "annotations": []},
    "logprobs": null,
    "finish_reason": "stop"
  }],
  "usage": {
    "prompt_tokens": 1117, "completion_tokens": 46, "total_tokens": 1163,
    "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
    "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0, "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}
  },
  "service_tier": "default",
  "system_fingerprint": "fp_06737a9306"
}`

// ollamaBody is a chat completion as Ollama's /v1 endpoint sends it.
const ollamaBody = `{"id":"chatcmpl-241","object":"chat.completion","created":1733956455,"model":"qwen2.5-coder:7b","system_fingerprint":"fp_ollama","choices":[{"index":0,"message":{"role":"assistant","content":"SELECT 1"},"finish_reason":"stop"}],"usage":{"prompt_tokens":30,"completion_tokens":4,"total_tokens":34}}`

const rateLimitBody = `{"error": {"message": "Rate limit reached for gpt-4o-mini in organization org-abc on tokens per min (TPM): Limit 200000, Used 199000, Requested 2000. Please try again in 300ms.", "type": "tokens", "param": null, "code": "rate_limit_exceeded"}}`

const serverErrorBody = `{"error": {"message": "The server had an error while processing your request. Sorry about that!", "type": "server_error", "param": null, "code": null}}`

const badKeyBody = `{"error": {"message": "Incorrect API key provided: sk-proj-********cdef. You can find your API key at https://platform.openai.com/account/api-keys.", "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}}`

var q = text2sql.ModelRequest{Messages: []text2sql.Message{{Role: text2sql.RoleUser, Content: "q"}}}

// newModel builds a Model against srv's /v1 (opts.BaseURL instead, when
// set) with a 1 ms retry base delay, and the test key unless opts has
// one; its retry waits are recorded, not slept.
func newModel(t *testing.T, srv *httpfake.Server, opts Options) (*Model, *providertest.Sleeps) {
	t.Helper()
	opts.APIKey, opts.BaseURL, opts.RetryBaseDelay = cmp.Or(opts.APIKey, testKey), cmp.Or(opts.BaseURL, srv.URL+"/v1"), time.Millisecond
	m, err := New(opts)
	require.NoError(t, err)
	return m, providertest.Record(&m.client.Policy)
}

// client is the Model as the shared provider tests drive it: one
// Complete of q.
var client = providertest.Client{Provider: "openai", Key: testKey, New: func(t *testing.T, srv *httpfake.Server, s providertest.Setup) func(context.Context) error {
	m, _ := newModel(t, srv, Options{HTTP: provider.HTTP{Timeout: s.Timeout, MaxRetries: s.MaxRetries}, BaseURL: s.URL(srv.URL + "/v1")})
	m.client.Policy.Sleep = s.Sleep
	return func(ctx context.Context) error { _, err := m.Complete(ctx, q); return err }
}}

type chatBody struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
	Temperature         *float64 `json:"temperature"`
	MaxTokens           *int     `json:"max_tokens"`
	MaxCompletionTokens *int     `json:"max_completion_tokens"`
	ResponseFormat      *struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Name   string          `json:"name"`
			Strict bool            `json:"strict"`
			Schema json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	} `json:"response_format"`
}

func decode(t *testing.T, r httpfake.Request) chatBody {
	t.Helper()
	var b chatBody
	require.NoError(t, json.Unmarshal(r.Body, &b), "request body: %s", r.Body)
	return b
}

func TestCompleteSuccess(t *testing.T) {
	srv := httpfake.New(t, httpfake.Reply{Body: okBody})
	m, _ := newModel(t, srv, Options{MaxTokensField: MaxCompletionTokens})
	schema := json.RawMessage(`{"type":"object","properties":{"sql":{"type":"string"}},"required":["sql"],"additionalProperties":false}`)
	resp, err := m.Complete(context.Background(), providertest.Conversation(schema, 0, 300))
	require.NoError(t, err)
	assert.Equal(t, `{"sql":"SELECT 1"}`, resp.Text)
	assert.Equal(t, "gpt-4o-mini-2024-07-18", resp.Model)
	assert.Equal(t, text2sql.Usage{InputTokens: 1117, OutputTokens: 46}, resp.Usage)
	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	r := reqs[0]
	assert.Equal(t, http.MethodPost, r.Method)
	assert.Equal(t, "/v1/chat/completions", r.Path)
	assert.Equal(t, "Bearer "+testKey, r.Header.Get("Authorization"))
	b := decode(t, r)
	assert.Equal(t, DefaultModel, b.Model)
	var roles []string
	for _, m := range b.Messages {
		roles = append(roles, m.Role)
	}
	require.Equal(t, []string{"system", "user", "assistant", "user"}, roles)
	assert.Equal(t, "You write SQLite.", b.Messages[0].Content)
	assert.Equal(t, "SELECT count(*) FROM student", b.Messages[2].Content)
	if assert.NotNil(t, b.Temperature, "0 must be sent") {
		assert.Zero(t, *b.Temperature)
	}
	if assert.NotNil(t, b.MaxCompletionTokens) {
		assert.Equal(t, 300, *b.MaxCompletionTokens)
	}
	assert.Nil(t, b.MaxTokens)
	rf := b.ResponseFormat
	require.NotNil(t, rf, "response_format: %s", r.Body)
	assert.Equal(t, "json_schema", rf.Type)
	require.NotNil(t, rf.JSONSchema, "response_format: %s", r.Body)
	assert.True(t, rf.JSONSchema.Strict)
	assert.NotEmpty(t, rf.JSONSchema.Name)
	assert.JSONEq(t, string(schema), string(rf.JSONSchema.Schema))
}

func TestLocalServer(t *testing.T) {
	// Ollama: no key, json_object mode, max_tokens field by default.
	t.Setenv("OPENAI_API_KEY", "env-key-must-not-be-sent")
	srv := httpfake.New(t, httpfake.Reply{Body: ollamaBody})
	m, err := New(Options{BaseURL: srv.URL + "/v1/", Model: "qwen2.5-coder:7b", JSONMode: JSONObject})
	require.NoError(t, err)
	resp, err := m.Complete(context.Background(), text2sql.ModelRequest{
		System:    "sys",
		Messages:  q.Messages,
		Schema:    json.RawMessage(`{"type":"object"}`),
		MaxTokens: 50,
	})
	require.NoError(t, err)
	assert.Equal(t, "SELECT 1", resp.Text)
	assert.Equal(t, "qwen2.5-coder:7b", resp.Model)
	assert.Equal(t, 30, resp.Usage.InputTokens)
	r := srv.Requests()[0]
	assert.Equal(t, "/v1/chat/completions", r.Path)
	assert.Empty(t, r.Header.Get("Authorization"))
	b := decode(t, r)
	if assert.NotNil(t, b.ResponseFormat, "response_format: %s", r.Body) {
		assert.Equal(t, "json_object", b.ResponseFormat.Type)
	}
	if assert.NotNil(t, b.MaxTokens, "max tokens: %s", r.Body) {
		assert.Equal(t, 50, *b.MaxTokens)
	}
	assert.Nil(t, b.MaxCompletionTokens)
	assert.Regexp(t, `^sys\n\n`, b.Messages[0].Content, "the schema is appended to the system message")
	assert.Contains(t, b.Messages[0].Content, `{"type":"object"}`)
	assert.Nil(t, b.Temperature)
}

func TestJSONOff(t *testing.T) {
	srv := httpfake.New(t, httpfake.Reply{Body: ollamaBody})
	m, _ := newModel(t, srv, Options{JSONMode: JSONOff})
	_, err := m.Complete(context.Background(), text2sql.ModelRequest{Messages: q.Messages, Schema: json.RawMessage(`{"type":"object"}`)})
	require.NoError(t, err)
	b := decode(t, srv.Requests()[0])
	assert.Nil(t, b.ResponseFormat)
	assert.Equal(t, "system", b.Messages[0].Role)
	assert.Contains(t, b.Messages[0].Content, "JSON Schema")
}

// The server's wait comes from retry-after-ms first, else from
// Retry-After; the SDK's own retry header is never sent beyond its
// initial value.
func TestRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		hdr  map[string]string
		want time.Duration
	}{
		{map[string]string{"Retry-After": "2"}, 2 * time.Second},
		{map[string]string{"Retry-After-Ms": "300", "Retry-After": "1"}, 300 * time.Millisecond},
	} {
		srv := httpfake.New(t, httpfake.Reply{Status: 429, Header: tc.hdr, Body: rateLimitBody}, httpfake.Reply{Body: okBody})
		providertest.RetryAfter(t, client, srv, tc.want)
		for _, r := range srv.Requests() {
			assert.Contains(t, []string{"", "0"}, r.Header.Get("X-Stainless-Retry-Count"), "SDK retried")
		}
	}
}

// TestErrors: a refusal (followed by an answer the client must not ask
// for) or an answer the client cannot use, and the ModelError it gives.
func TestErrors(t *testing.T) {
	refused := func(status int, body string) []httpfake.Reply {
		return []httpfake.Reply{{Status: status, Body: body}, {Body: okBody}}
	}
	answer := func(body string) []httpfake.Reply { return []httpfake.Reply{{Body: body}} }
	reply := func(content, finish string) []httpfake.Reply {
		return answer(`{"id":"x","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant",` + content + `},"finish_reason":"` + finish + `"}]}`)
	}
	providertest.Errors(t, client, []providertest.Failure{
		{Name: "5xx exhausted", Replies: []httpfake.Reply{{Status: 500, Body: serverErrorBody}}, MaxRetries: 2, Status: 500, Retryable: true, Requests: 3, Says: []string{"The server had an error"}},
		{Name: "non-JSON 503", Replies: []httpfake.Reply{{Status: 503, Header: map[string]string{"Content-Type": "text/plain"}, Body: "upstream connect error"}}, MaxRetries: -1, Status: 503, Retryable: true, Requests: 1},
		{Name: "400", Replies: refused(400, `{"error": {"message": "Invalid schema for response_format 'response': In context=(), 'additionalProperties' is required to be supplied and to be false.", "type": "invalid_request_error", "param": "response_format", "code": null}}`), Status: 400, Requests: 1, Says: []string{"Invalid schema"}},
		{Name: "401", Replies: refused(401, badKeyBody), Status: 401, Requests: 1, Says: []string{"Incorrect API key"}},
		{Name: "404", Replies: refused(404, `{"error": {"message": "model \"nope\" not found, try pulling it first", "type": "api_error", "param": null, "code": null}}`), Status: 404, Requests: 1, Says: []string{"not found"}},
		{Name: "truncated", Replies: answer(`{"choices": [`), Status: 200, Requests: 1},
		{Name: "not JSON", Replies: answer(`not json`), Status: 200, Requests: 1},
		{Name: "no choices", Replies: answer(`{"choices": []}`), Status: 200, Requests: 1},
		{Name: "choices not a list", Replies: answer(`{"choices": "x"}`), Status: 200, Requests: 1},
		{Name: "refusal", Replies: reply(`"content":null,"refusal":"I'm sorry, I cannot assist with that request."`, "stop"), Status: 200, Requests: 1, Says: []string{"refused"}},
		{Name: "length", Replies: reply(`"content":""`, "length"), Status: 200, Requests: 1, Says: []string{"finish reason length"}},
		{Name: "content filter", Replies: reply(`"content":null`, "content_filter"), Status: 200, Requests: 1, Says: []string{"finish reason content_filter"}},
	})
}

// A 5xx answer that is not JSON is retried like any other.
func TestNonJSONErrorRetried(t *testing.T) {
	srv := httpfake.New(t, httpfake.Reply{Status: 502, Header: map[string]string{"Content-Type": "text/html"}, Body: "<html>502 Bad Gateway</html>"}, httpfake.Reply{Body: okBody})
	m, _ := newModel(t, srv, Options{})
	resp, err := m.Complete(context.Background(), q)
	require.NoError(t, err)
	assert.NotEmpty(t, resp.Text)
	assert.Len(t, srv.Requests(), 2)
}

func TestKeyNeverInErrors(t *testing.T) {
	echo := `{"error": {"message": "Incorrect API key provided: ` + testKey + ` (see https://x/v1?api_key=` + testKey + `)", "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}}`
	providertest.KeyNeverInErrors(t, client, httpfake.Reply{Status: 401, Body: echo}, httpfake.Reply{Body: `{"choices": "` + testKey + `"`})
}

func TestNewErrors(t *testing.T) {
	for _, o := range []Options{{JSONMode: "yaml"}, {MaxTokensField: "tokens"}, {BaseURL: "localhost:11434"}} {
		_, err := New(o)
		assert.ErrorIs(t, err, text2sql.ErrInvalidConfig, "%+v", o)
	}
	m, err := New(Options{})
	require.NoError(t, err)
	assert.Equal(t, MaxCompletionTokens, m.maxField)
	assert.Equal(t, JSONSchema, m.jsonMode)
	assert.Equal(t, DefaultModel, m.Name())
	t.Setenv("OPENAI_API_KEY", testKey)
	t.Setenv("OPENAI_BASE_URL", "http://localhost:11434/v1")
	m, err = FromEnv(Options{})
	require.NoError(t, err)
	assert.Equal(t, MaxTokens, m.maxField)
	assert.Equal(t, "http://localhost:11434/v1", m.client.BaseURL)
}

// TestSharedContract runs the OpenAI model, against a local fake of the
// API, through the tests every provider client passes (providertest.Model).
func TestSharedContract(t *testing.T) {
	providertest.Model(t, providertest.ModelSuite{
		Client: client, OK: httpfake.Reply{Body: okBody}, Unavailable: httpfake.Reply{Status: 503, Body: serverErrorBody}, Refusal: httpfake.Reply{Status: 401, Body: badKeyBody},
		Body: func(text string) string {
			return `{"id": "chatcmpl-1", "object": "chat.completion", "created": 1733956455, "model": "gpt-4o-mini-2024-07-18",
			"choices": [{"index": 0, "message": {"role": "assistant", "content": ` + text + `}, "finish_reason": "stop"}],
			"usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17}}`
		},
		Build: providertest.Build(t, newModel),
	})
}

// Some OpenAI-compatible servers and proxies label JSON "text/plain": the
// answer is read as the Gemini route reads it, by its body; a body that is
// not JSON stays an error whatever its label.
func TestJSONLabelledAsText(t *testing.T) {
	for _, ct := range []string{"text/plain; charset=utf-8", "application/octet-stream"} {
		srv := httpfake.New(t, httpfake.Reply{Header: map[string]string{"Content-Type": ct}, Body: okBody})
		m, _ := newModel(t, srv, Options{})
		resp, err := m.Complete(context.Background(), q)
		require.NoError(t, err, "Content-Type %q", ct)
		assert.Equal(t, `{"sql":"SELECT 1"}`, resp.Text)
	}
	srv := httpfake.New(t, httpfake.Reply{Header: map[string]string{"Content-Type": "text/plain"}, Body: "hello"})
	m, _ := newModel(t, srv, Options{HTTP: provider.HTTP{MaxRetries: -1}})
	_, err := m.Complete(context.Background(), q)
	var me *text2sql.ModelError
	require.ErrorAs(t, err, &me)
	assert.Equal(t, 200, me.StatusCode)
}

// Ping lists the server's models and generates nothing; Ollama's untagged
// name matches its ":latest" entry; a model the server does not list is an
// error naming what it does list.
func TestPing(t *testing.T) {
	list := `{"object": "list", "data": [{"id": "qwen2.5-coder:7b", "object": "model", "created": 1733956455, "owned_by": "library"}, {"id": "llama3.1:latest", "object": "model", "created": 1733956400, "owned_by": "library"}]}`
	for _, name := range []string{"qwen2.5-coder:7b", "llama3.1"} {
		srv := httpfake.New(t, httpfake.Reply{Body: list})
		m, _ := newModel(t, srv, Options{Model: name})
		require.NoError(t, m.Ping(context.Background()), name)
		reqs := srv.Requests()
		require.Len(t, reqs, 1)
		assert.Equal(t, http.MethodGet, reqs[0].Method)
		assert.Equal(t, "/v1/models", reqs[0].Path)
	}
	srv := httpfake.New(t, httpfake.Reply{Body: list})
	m, _ := newModel(t, srv, Options{Model: "mistral"})
	var me *text2sql.ModelError
	require.ErrorAs(t, m.Ping(context.Background()), &me)
	assert.Equal(t, `model "mistral" is not among the 2 models the server lists (qwen2.5-coder:7b, llama3.1:latest)`, me.Message)

	srv = httpfake.New(t, httpfake.Reply{Status: 401, Body: badKeyBody})
	m, _ = newModel(t, srv, Options{})
	require.ErrorAs(t, m.Ping(context.Background()), &me)
	assert.Equal(t, 401, me.StatusCode)
	assert.NotContains(t, me.Error(), testKey)
}
