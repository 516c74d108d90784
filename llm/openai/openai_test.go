package openai

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/httpfake"
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

type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func newModel(t *testing.T, srv *httpfake.Server, opts Options) (*Model, *sleeps) {
	t.Helper()
	if opts.APIKey == "" {
		opts.APIKey = testKey
	}
	opts.BaseURL = srv.URL + "/v1"
	if opts.RetryBaseDelay == 0 {
		opts.RetryBaseDelay = time.Millisecond
	}
	m, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	s := &sleeps{}
	m.client.Policy.Sleep = s.sleep
	return m, s
}

var q = text2sql.ModelRequest{Messages: []text2sql.Message{{Role: text2sql.RoleUser, Content: "q"}}}

func noKey(t *testing.T, err error) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), testKey) {
		t.Fatalf("API key leaked in error: %v", err)
	}
}

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
	if err := json.Unmarshal(r.Body, &b); err != nil {
		t.Fatalf("request body: %v\n%s", err, r.Body)
	}
	return b
}

func TestCompleteSuccess(t *testing.T) {
	srv := httpfake.New(t, httpfake.Reply{Body: okBody})
	m, _ := newModel(t, srv, Options{MaxTokensField: MaxCompletionTokens})
	schema := json.RawMessage(`{"type":"object","properties":{"sql":{"type":"string"}},"required":["sql"],"additionalProperties":false}`)
	temp := 0.0
	resp, err := m.Complete(context.Background(), text2sql.ModelRequest{
		System: "You write SQLite.",
		Messages: []text2sql.Message{
			{Role: text2sql.RoleUser, Content: "How many students?"},
			{Role: text2sql.RoleAssistant, Content: "SELECT count(*) FROM student"},
			{Role: text2sql.RoleUser, Content: "Only active ones."},
		},
		Schema:      schema,
		Temperature: &temp,
		MaxTokens:   300,
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != `{"sql":"SELECT 1"}` || resp.Model != "gpt-4o-mini-2024-07-18" || resp.Usage != (text2sql.Usage{InputTokens: 1117, OutputTokens: 46}) {
		t.Errorf("resp = %+v", resp)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	r := reqs[0]
	if r.Method != http.MethodPost || r.Path != "/v1/chat/completions" {
		t.Errorf("got %s %s", r.Method, r.Path)
	}
	if got := r.Header.Get("Authorization"); got != "Bearer "+testKey {
		t.Errorf("Authorization = %q", got)
	}
	b := decode(t, r)
	if b.Model != DefaultModel {
		t.Errorf("model = %q", b.Model)
	}
	var roles []string
	for _, m := range b.Messages {
		roles = append(roles, m.Role)
	}
	if strings.Join(roles, ",") != "system,user,assistant,user" || b.Messages[0].Content != "You write SQLite." || b.Messages[2].Content != "SELECT count(*) FROM student" {
		t.Errorf("messages = %+v", b.Messages)
	}
	if b.Temperature == nil || *b.Temperature != 0 {
		t.Errorf("temperature = %v (0 must be sent)", b.Temperature)
	}
	if b.MaxCompletionTokens == nil || *b.MaxCompletionTokens != 300 || b.MaxTokens != nil {
		t.Errorf("max tokens = %v / %v", b.MaxCompletionTokens, b.MaxTokens)
	}
	rf := b.ResponseFormat
	if rf == nil || rf.Type != "json_schema" || rf.JSONSchema == nil || !rf.JSONSchema.Strict || rf.JSONSchema.Name == "" {
		t.Fatalf("response_format = %s", r.Body)
	}
	var got, want any
	_ = json.Unmarshal(rf.JSONSchema.Schema, &got)
	_ = json.Unmarshal(schema, &want)
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(want)
	if string(gb) != string(wb) {
		t.Errorf("schema = %s, want %s", gb, wb)
	}
}

func TestLocalServer(t *testing.T) {
	// Ollama: no key, json_object mode, max_tokens field by default.
	t.Setenv("OPENAI_API_KEY", "env-key-must-not-be-sent")
	srv := httpfake.New(t, httpfake.Reply{Body: ollamaBody})
	m, err := New(Options{BaseURL: srv.URL + "/v1/", Model: "qwen2.5-coder:7b", JSONMode: JSONObject})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := m.Complete(context.Background(), text2sql.ModelRequest{
		System:    "sys",
		Messages:  q.Messages,
		Schema:    json.RawMessage(`{"type":"object"}`),
		MaxTokens: 50,
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "SELECT 1" || resp.Model != "qwen2.5-coder:7b" || resp.Usage.InputTokens != 30 {
		t.Errorf("resp = %+v", resp)
	}
	r := srv.Requests()[0]
	if r.Path != "/v1/chat/completions" {
		t.Errorf("path = %s", r.Path)
	}
	if h := r.Header.Get("Authorization"); h != "" {
		t.Errorf("Authorization = %q, want none", h)
	}
	b := decode(t, r)
	if b.ResponseFormat == nil || b.ResponseFormat.Type != "json_object" {
		t.Errorf("response_format: %s", r.Body)
	}
	if b.MaxTokens == nil || *b.MaxTokens != 50 || b.MaxCompletionTokens != nil {
		t.Errorf("max tokens: %s", r.Body)
	}
	if !strings.HasPrefix(b.Messages[0].Content, "sys\n\n") || !strings.Contains(b.Messages[0].Content, `{"type":"object"}`) {
		t.Errorf("system = %q, want the schema appended", b.Messages[0].Content)
	}
	if b.Temperature != nil {
		t.Errorf("temperature sent: %s", r.Body)
	}
}

func TestJSONOff(t *testing.T) {
	srv := httpfake.New(t, httpfake.Reply{Body: ollamaBody})
	m, _ := newModel(t, srv, Options{JSONMode: JSONOff})
	if _, err := m.Complete(context.Background(), text2sql.ModelRequest{Messages: q.Messages, Schema: json.RawMessage(`{"type":"object"}`)}); err != nil {
		t.Fatal(err)
	}
	b := decode(t, srv.Requests()[0])
	if b.ResponseFormat != nil || b.Messages[0].Role != "system" || !strings.Contains(b.Messages[0].Content, "JSON Schema") {
		t.Errorf("body = %s", srv.Requests()[0].Body)
	}
}

func TestRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		hdr  map[string]string
		want time.Duration
	}{
		{map[string]string{"Retry-After": "2"}, 2 * time.Second},
		{map[string]string{"Retry-After-Ms": "300", "Retry-After": "1"}, 300 * time.Millisecond},
	} {
		srv := httpfake.New(t, httpfake.Reply{Status: 429, Header: tc.hdr, Body: rateLimitBody}, httpfake.Reply{Body: okBody})
		m, s := newModel(t, srv, Options{})
		if _, err := m.Complete(context.Background(), q); err != nil {
			t.Fatal(err)
		}
		if n := len(srv.Requests()); n != 2 {
			t.Errorf("%d requests, want 2", n)
		}
		if len(s.d) != 1 || s.d[0] != tc.want {
			t.Errorf("waits = %v, want [%v]", s.d, tc.want)
		}
		// The SDK's own retry header must not be sent with our retries
		// beyond its initial value.
		for _, r := range srv.Requests() {
			if v := r.Header.Get("X-Stainless-Retry-Count"); v != "" && v != "0" {
				t.Errorf("SDK retried: X-Stainless-Retry-Count = %s", v)
			}
		}
	}
}

func TestServerErrorsExhausted(t *testing.T) {
	srv := httpfake.New(t, httpfake.Reply{Status: 500, Body: serverErrorBody})
	m, _ := newModel(t, srv, Options{MaxRetries: 2})
	_, err := m.Complete(context.Background(), q)
	var me *text2sql.ModelError
	if !errors.As(err, &me) || me.Provider != "openai" || me.StatusCode != 500 || !me.Retryable || !errors.Is(err, text2sql.ErrModel) {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(me.Message, "The server had an error") {
		t.Errorf("message = %q", me.Message)
	}
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
}

func TestNonJSONErrorBody(t *testing.T) {
	srv := httpfake.New(t, httpfake.Reply{Status: 502, Header: map[string]string{"Content-Type": "text/html"}, Body: "<html>502 Bad Gateway</html>"}, httpfake.Reply{Body: okBody})
	m, _ := newModel(t, srv, Options{})
	resp, err := m.Complete(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text == "" || len(srv.Requests()) != 2 {
		t.Errorf("resp = %+v, %d requests", resp, len(srv.Requests()))
	}
	srv2 := httpfake.New(t, httpfake.Reply{Status: 503, Header: map[string]string{"Content-Type": "text/plain"}, Body: "upstream connect error"})
	m2, _ := newModel(t, srv2, Options{MaxRetries: -1})
	_, err = m2.Complete(context.Background(), q)
	var me *text2sql.ModelError
	if !errors.As(err, &me) || me.StatusCode != 503 || !me.Retryable {
		t.Errorf("err = %v", err)
	}
}

func TestNonRetryable(t *testing.T) {
	for _, tc := range []struct {
		status int
		body   string
	}{
		{400, `{"error": {"message": "Invalid schema for response_format 'response': In context=(), 'additionalProperties' is required to be supplied and to be false.", "type": "invalid_request_error", "param": "response_format", "code": null}}`},
		{401, badKeyBody},
		{404, `{"error": {"message": "model \"nope\" not found, try pulling it first", "type": "api_error", "param": null, "code": null}}`},
	} {
		srv := httpfake.New(t, httpfake.Reply{Status: tc.status, Body: tc.body}, httpfake.Reply{Body: okBody})
		m, _ := newModel(t, srv, Options{})
		_, err := m.Complete(context.Background(), q)
		var me *text2sql.ModelError
		if !errors.As(err, &me) || me.StatusCode != tc.status || me.Retryable || me.Message == "" {
			t.Errorf("%d: err = %v", tc.status, err)
		}
		if n := len(srv.Requests()); n != 1 {
			t.Errorf("%d: %d requests, want 1", tc.status, n)
		}
		noKey(t, err)
	}
}

func TestMalformedBody(t *testing.T) {
	for _, body := range []string{`{"choices": [`, `not json`, `{"choices": []}`, `{"choices": "x"}`} {
		srv := httpfake.New(t, httpfake.Reply{Body: body})
		m, _ := newModel(t, srv, Options{})
		_, err := m.Complete(context.Background(), q)
		var me *text2sql.ModelError
		if !errors.As(err, &me) || me.Retryable || me.StatusCode != 200 {
			t.Errorf("%q: err = %v", body, err)
		}
		if n := len(srv.Requests()); n != 1 {
			t.Errorf("%q: %d requests", body, n)
		}
	}
}

func TestRefusalAndEmpty(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`{"id":"x","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":"I'm sorry, I cannot assist with that request."},"finish_reason":"stop"}]}`, "refused"},
		{`{"id":"x","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":""},"finish_reason":"length"}]}`, "finish reason length"},
		{`{"id":"x","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":null},"finish_reason":"content_filter"}]}`, "finish reason content_filter"},
	} {
		srv := httpfake.New(t, httpfake.Reply{Body: tc.body})
		m, _ := newModel(t, srv, Options{})
		_, err := m.Complete(context.Background(), q)
		var me *text2sql.ModelError
		if !errors.As(err, &me) || me.Retryable || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("err = %v, want %q", err, tc.want)
		}
	}
}

func TestContextDeadline(t *testing.T) {
	srv := httpfake.New(t, httpfake.Reply{Block: true})
	m, _ := newModel(t, srv, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := m.Complete(ctx, q)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
	if el := time.Since(start); el > time.Second {
		t.Errorf("took %v", el)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests", n)
	}
}

func TestKeyNeverInErrors(t *testing.T) {
	echo := `{"error": {"message": "Incorrect API key provided: ` + testKey + ` (see https://x/v1?api_key=` + testKey + `)", "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}}`
	srv := httpfake.New(t, httpfake.Reply{Status: 401, Body: echo})
	m, _ := newModel(t, srv, Options{})
	_, err := m.Complete(context.Background(), q)
	if err == nil || !strings.Contains(err.Error(), "[REDACTED]") {
		t.Fatalf("err = %v", err)
	}
	noKey(t, err)

	srv2 := httpfake.New(t, httpfake.Reply{Body: `{"choices": "` + testKey + `"`})
	m2, _ := newModel(t, srv2, Options{})
	_, err = m2.Complete(context.Background(), q)
	noKey(t, err)

	srv3 := httpfake.New(t)
	srv3.Close()
	m3, err := New(Options{APIKey: testKey, BaseURL: srv3.URL + "/v1?key=" + testKey, MaxRetries: -1})
	if err != nil {
		noKey(t, err)
		return
	}
	_, err = m3.Complete(context.Background(), q)
	var me *text2sql.ModelError
	if !errors.As(err, &me) || me.StatusCode != 0 || !me.Retryable {
		t.Errorf("err = %v", err)
	}
	noKey(t, err)
}

func TestNewErrors(t *testing.T) {
	for _, o := range []Options{{JSONMode: "yaml"}, {MaxTokensField: "tokens"}, {BaseURL: "localhost:11434"}} {
		if _, err := New(o); !errors.Is(err, text2sql.ErrInvalidConfig) {
			t.Errorf("%+v: err = %v", o, err)
		}
	}
	m, err := New(Options{})
	if err != nil || m.maxField != MaxCompletionTokens || m.jsonMode != JSONSchema || m.Name() != DefaultModel {
		t.Errorf("defaults: %+v %v", m, err)
	}
	t.Setenv("OPENAI_API_KEY", testKey)
	t.Setenv("OPENAI_BASE_URL", "http://localhost:11434/v1")
	m, err = FromEnv(Options{})
	if err != nil || m.maxField != MaxTokens || m.client.BaseURL != "http://localhost:11434/v1" {
		t.Errorf("FromEnv: %v", err)
	}
}

func TestConcurrent(t *testing.T) {
	srv := httpfake.New(t, httpfake.Reply{Body: okBody})
	m, _ := newModel(t, srv, Options{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := m.Complete(context.Background(), q); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}
