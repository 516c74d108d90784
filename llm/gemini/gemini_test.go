package gemini

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

const testKey = "AIzaSy-TEST-SECRET-KEY-0123456789"

// okBody is a generateContent response as the Gemini API sends it.
const okBody = `{
  "candidates": [{
    "content": {"parts": [{"text": "{\"sql\": \"SELECT 1\"}"}], "role": "model"},
    "finishReason": "STOP",
    "index": 0
  }],
  "usageMetadata": {
    "promptTokenCount": 42,
    "candidatesTokenCount": 7,
    "totalTokenCount": 61,
    "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 42}],
    "thoughtsTokenCount": 12
  },
  "modelVersion": "gemini-2.5-flash-001",
  "responseId": "mHWcaPWkKsqBz7IPnKOcwQ8"
}`

const quotaBody = `{"error": {"code": 429, "message": "You exceeded your current quota, please check your plan and billing details.", "status": "RESOURCE_EXHAUSTED", "details": [{"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [{"quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests", "quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier"}]}, {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "3s"}]}}`

const unavailableBody = `{"error": {"code": 503, "message": "The model is overloaded. Please try again later.", "status": "UNAVAILABLE"}}`

const badKeyBody = `{"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.", "status": "INVALID_ARGUMENT", "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID", "domain": "googleapis.com", "metadata": {"service": "generativelanguage.googleapis.com"}}]}}`

var q = text2sql.ModelRequest{Messages: []text2sql.Message{{Role: text2sql.RoleUser, Content: "q"}}}

// newModel builds a Model against srv (opts.BaseURL instead, when set)
// with the test key and a 1 ms retry base delay; its retry waits are
// recorded, not slept.
func newModel(t *testing.T, srv *httpfake.Server, opts Options) (*Model, *providertest.Sleeps) {
	t.Helper()
	opts.APIKey, opts.BaseURL, opts.RetryBaseDelay = testKey, cmp.Or(opts.BaseURL, srv.URL), time.Millisecond
	m, err := New(context.Background(), opts)
	require.NoError(t, err)
	return m, providertest.Record(&m.client.Policy)
}

// client is the Model as the shared provider tests drive it: one
// Complete of q.
var client = providertest.Client{Provider: "gemini", Key: testKey, New: func(t *testing.T, srv *httpfake.Server, s providertest.Setup) func(context.Context) error {
	m, _ := newModel(t, srv, Options{HTTP: provider.HTTP{Timeout: s.Timeout, MaxRetries: s.MaxRetries}, BaseURL: s.URL(srv.URL)})
	m.client.Policy.Sleep = s.Sleep
	return func(ctx context.Context) error { _, err := m.Complete(ctx, q); return err }
}}

func TestCompleteSuccess(t *testing.T) {
	srv := httpfake.New(t, httpfake.Reply{Body: okBody})
	m, _ := newModel(t, srv, Options{})
	schema := json.RawMessage(`{"type":"object","properties":{"sql":{"type":"string"}},"required":["sql"]}`)
	resp, err := m.Complete(context.Background(), providertest.Conversation(schema, 0.25, 256))
	require.NoError(t, err)
	assert.Equal(t, `{"sql": "SELECT 1"}`, resp.Text)
	assert.Equal(t, "gemini-2.5-flash-001", resp.Model)
	assert.Equal(t, text2sql.Usage{InputTokens: 42, OutputTokens: 19}, resp.Usage)

	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	r := reqs[0]
	assert.Equal(t, http.MethodPost, r.Method)
	assert.Equal(t, "/v1beta/models/gemini-2.5-flash:generateContent", r.Path)
	assert.Equal(t, testKey, r.Header.Get("x-goog-api-key"))
	assert.NotContains(t, r.Query, testKey)
	var body struct {
		Contents []struct {
			Role  string `json:"role"`
			Parts []struct {
				Text string `json:"text"`
			} `json:"parts"`
		} `json:"contents"`
		SystemInstruction struct {
			Parts []struct {
				Text string `json:"text"`
			} `json:"parts"`
		} `json:"systemInstruction"`
		GenerationConfig struct {
			ResponseMimeType   string          `json:"responseMimeType"`
			ResponseJsonSchema json.RawMessage `json:"responseJsonSchema"`
			Temperature        float64         `json:"temperature"`
			MaxOutputTokens    int             `json:"maxOutputTokens"`
		} `json:"generationConfig"`
	}
	require.NoError(t, json.Unmarshal(r.Body, &body), "request body: %s", r.Body)
	var roles []string
	for _, c := range body.Contents {
		roles = append(roles, c.Role)
	}
	assert.Equal(t, []string{"user", "model", "user"}, roles)
	assert.Equal(t, "SELECT count(*) FROM student", body.Contents[1].Parts[0].Text)
	require.Len(t, body.SystemInstruction.Parts, 1)
	assert.Equal(t, "You write SQLite.", body.SystemInstruction.Parts[0].Text)
	g := body.GenerationConfig
	assert.Equal(t, "application/json", g.ResponseMimeType)
	assert.Equal(t, 256, g.MaxOutputTokens)
	assert.InDelta(t, 0.25, g.Temperature, 0)
	assert.JSONEq(t, string(schema), string(g.ResponseJsonSchema))
}

func TestCompleteOmitsUnsetFields(t *testing.T) {
	srv := httpfake.New(t, httpfake.Reply{Body: okBody})
	m, _ := newModel(t, srv, Options{Model: "gemini-2.5-pro"})
	_, err := m.Complete(context.Background(), text2sql.ModelRequest{
		Messages: []text2sql.Message{{Role: text2sql.RoleUser, Content: "hi"}},
	})
	require.NoError(t, err)
	r := srv.Requests()[0]
	assert.Equal(t, "/v1beta/models/gemini-2.5-pro:generateContent", r.Path)
	for _, f := range []string{"systemInstruction", "responseMimeType", "responseJsonSchema", "temperature", "maxOutputTokens"} {
		assert.NotContains(t, string(r.Body), f)
	}
}

// The server's wait comes from the Retry-After header first, else from a
// google.rpc.RetryInfo detail.
func TestRetryAfter(t *testing.T) {
	t.Run("header", func(t *testing.T) {
		providertest.RetryAfter(t, client, httpfake.New(t,
			httpfake.Reply{Status: 429, Header: map[string]string{"Retry-After": "2"}, Body: quotaBody},
			httpfake.Reply{Body: okBody},
		), 2*time.Second)
	})
	t.Run("RetryInfo", func(t *testing.T) {
		providertest.RetryAfter(t, client, httpfake.New(t, httpfake.Reply{Status: 429, Body: quotaBody}, httpfake.Reply{Body: okBody}), 3*time.Second)
	})
}

// TestErrors: a refusal (followed by an answer the client must not ask
// for) or an answer the client cannot use, and the ModelError it gives.
func TestErrors(t *testing.T) {
	refused := func(status int, body string) []httpfake.Reply {
		return []httpfake.Reply{{Status: status, Body: body}, {Body: okBody}}
	}
	answer := func(body string) []httpfake.Reply { return []httpfake.Reply{{Body: body}} }
	providertest.Errors(t, client, []providertest.Failure{
		{Name: "5xx exhausted", Replies: []httpfake.Reply{{Status: 503, Body: unavailableBody}}, MaxRetries: 2, Status: 503, Retryable: true, Requests: 3, Says: []string{"overloaded", "3 attempts"}},
		{Name: "non-JSON 502", Replies: []httpfake.Reply{{Status: 502, Header: map[string]string{"Content-Type": "text/html"}, Body: "<html><body>Bad Gateway</body></html>"}}, MaxRetries: -1, Status: 502, Retryable: true, Requests: 1},
		{Name: "400", Replies: refused(400, badKeyBody), Status: 400, Requests: 1, Says: []string{"API key not valid"}},
		{Name: "401", Replies: refused(401, `{"error": {"code": 401, "message": "Request had invalid authentication credentials.", "status": "UNAUTHENTICATED"}}`), Status: 401, Requests: 1, Says: []string{"invalid authentication"}},
		{Name: "403", Replies: refused(403, `{"error": {"code": 403, "message": "Method doesn't allow unregistered callers.", "status": "PERMISSION_DENIED"}}`), Status: 403, Requests: 1, Says: []string{"unregistered callers"}},
		{Name: "truncated", Replies: answer(`{"candidates": [`), Status: 200, Requests: 1},
		{Name: "not JSON", Replies: answer(`not json at all`), Status: 200, Requests: 1},
		{Name: "array", Replies: answer(`[]`), Status: 200, Requests: 1},
		{Name: "blocked", Replies: answer(`{"promptFeedback": {"blockReason": "SAFETY", "safetyRatings": [{"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH"}]}, "usageMetadata": {"promptTokenCount": 8, "totalTokenCount": 8}, "modelVersion": "gemini-2.5-flash"}`), Status: 200, Requests: 1, Says: []string{"prompt blocked: SAFETY"}},
		{Name: "no candidates", Replies: answer(`{"candidates": [], "modelVersion": "gemini-2.5-flash"}`), Status: 200, Requests: 1, Says: []string{"no candidates"}},
		{Name: "safety", Replies: answer(`{"candidates": [{"finishReason": "SAFETY", "index": 0}], "modelVersion": "gemini-2.5-flash"}`), Status: 200, Requests: 1, Says: []string{"finish reason SAFETY"}},
		{Name: "max tokens", Replies: answer(`{"candidates": [{"content": {"role": "model"}, "finishReason": "MAX_TOKENS", "index": 0}], "usageMetadata": {"promptTokenCount": 8, "thoughtsTokenCount": 100}}`), Status: 200, Requests: 1, Says: []string{"finish reason MAX_TOKENS"}},
	})
}

// Exponential backoff: a 1 ms base doubling, jitter taking off at most
// half of each wait.
func TestBackoff(t *testing.T) {
	srv := httpfake.New(t, httpfake.Reply{Status: 503, Body: unavailableBody})
	m, s := newModel(t, srv, Options{HTTP: provider.HTTP{MaxRetries: 2}})
	_, err := m.Complete(context.Background(), q)
	require.Error(t, err)
	w := s.Waits()
	require.Len(t, w, 2)
	assert.LessOrEqual(t, w[0], time.Millisecond)
	assert.GreaterOrEqual(t, w[1], time.Millisecond)
	assert.LessOrEqual(t, w[1], 2*time.Millisecond)
}

func TestRetryAfterTooLongGivesUp(t *testing.T) {
	srv := httpfake.New(t, httpfake.Reply{Status: 429, Header: map[string]string{"Retry-After": "3600"}, Body: quotaBody}, httpfake.Reply{Body: okBody})
	m, _ := newModel(t, srv, Options{HTTP: provider.HTTP{MaxRetryDelay: time.Minute}})
	_, err := m.Complete(context.Background(), q)
	var me *text2sql.ModelError
	require.ErrorAs(t, err, &me)
	assert.Equal(t, 429, me.StatusCode)
	assert.True(t, me.Retryable)
	assert.Len(t, srv.Requests(), 1)
}

func TestThoughtPartsSkipped(t *testing.T) {
	body := `{"candidates": [{"content": {"parts": [{"text": "thinking...", "thought": true}, {"text": "SELECT "}, {"text": "1"}], "role": "model"}, "finishReason": "STOP"}]}`
	srv := httpfake.New(t, httpfake.Reply{Body: body})
	m, _ := newModel(t, srv, Options{})
	resp, err := m.Complete(context.Background(), q)
	require.NoError(t, err)
	assert.Equal(t, "SELECT 1", resp.Text)
	assert.Equal(t, DefaultModel, resp.Model)
}

func TestContextDeadlineDuringBackoff(t *testing.T) {
	srv := httpfake.New(t, httpfake.Reply{Status: 503, Body: unavailableBody})
	m, err := New(context.Background(), Options{APIKey: testKey, BaseURL: srv.URL, HTTP: provider.HTTP{RetryBaseDelay: 10 * time.Second}})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = m.Complete(ctx, q)
	var me *text2sql.ModelError
	require.ErrorAs(t, err, &me)
	assert.Equal(t, 503, me.StatusCode)
	assert.Contains(t, me.Message, "deadline")
	assert.Less(t, time.Since(start), 4*time.Second, "should not sleep past the deadline") // the wait would be ≥ 5 s (half the base delay)
}

func TestCancelledContext(t *testing.T) {
	srv := httpfake.New(t, httpfake.Reply{Body: okBody})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := client.New(t, srv, providertest.Setup{})(ctx)
	require.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, srv.Requests())
}

func TestKeyNeverInErrors(t *testing.T) {
	// A server (or proxy) echoing the key and a URL carrying it.
	echo := `{"error": {"code": 400, "message": "bad key ` + testKey + ` for https://generativelanguage.googleapis.com/v1beta/models/x:generateContent?key=` + testKey + `&alt=json", "status": "INVALID_ARGUMENT"}}`
	providertest.KeyNeverInErrors(t, client, httpfake.Reply{Status: 400, Body: echo}, httpfake.Reply{Body: `{"oops": "` + testKey})
}

func TestNewErrors(t *testing.T) {
	t.Setenv("GEMINI_API_KEY", "")
	t.Setenv("GOOGLE_API_KEY", "env-key-must-not-be-used")
	_, err := New(context.Background(), Options{})
	assert.ErrorIs(t, err, text2sql.ErrInvalidConfig, "no key")
	_, err = FromEnv(context.Background(), Options{})
	assert.ErrorIs(t, err, text2sql.ErrInvalidConfig, "FromEnv without GEMINI_API_KEY")
	_, err = New(context.Background(), Options{APIKey: testKey, BaseURL: "localhost:8080"})
	assert.ErrorIs(t, err, text2sql.ErrInvalidConfig, "bad URL")
	t.Setenv("GEMINI_API_KEY", testKey)
	m, err := FromEnv(context.Background(), Options{})
	require.NoError(t, err)
	assert.Equal(t, DefaultModel, m.Name())
}

func TestInvalidSchema(t *testing.T) {
	srv := httpfake.New(t, httpfake.Reply{Body: okBody})
	m, _ := newModel(t, srv, Options{})
	_, err := m.Complete(context.Background(), text2sql.ModelRequest{Schema: json.RawMessage(`{`), Messages: q.Messages})
	assert.ErrorIs(t, err, text2sql.ErrInvalidConfig)
	assert.Empty(t, srv.Requests())
}

// TestSharedContract runs the Gemini model, against a local fake of the
// API, through the tests every provider client passes (providertest.Model).
func TestSharedContract(t *testing.T) {
	providertest.Model(t, providertest.ModelSuite{
		Client: client, OK: httpfake.Reply{Body: okBody}, Unavailable: httpfake.Reply{Status: 503, Body: unavailableBody}, Refusal: httpfake.Reply{Status: 400, Body: badKeyBody},
		Body: func(text string) string {
			return `{"candidates": [{"content": {"parts": [{"text": ` + text + `}], "role": "model"}, "finishReason": "STOP", "index": 0}],
			"usageMetadata": {"promptTokenCount": 12, "candidatesTokenCount": 5, "totalTokenCount": 17}, "modelVersion": "gemini-2.5-flash-001"}`
		},
		Build: providertest.Build(t, newModel),
	})
}

// Ping asks models.get for the configured model and generates nothing.
func TestPing(t *testing.T) {
	srv := httpfake.New(t, httpfake.Reply{Body: `{"name": "models/gemini-2.5-flash", "version": "001", "displayName": "Gemini 2.5 Flash", "inputTokenLimit": 1048576, "outputTokenLimit": 65536, "supportedGenerationMethods": ["generateContent", "countTokens"]}`})
	m, _ := newModel(t, srv, Options{Model: "gemini-2.5-flash"})
	require.NoError(t, m.Ping(context.Background()))
	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, http.MethodGet, reqs[0].Method)
	assert.Equal(t, "/v1beta/models/gemini-2.5-flash", reqs[0].Path)

	srv = httpfake.New(t, httpfake.Reply{Status: 404, Body: `{"error": {"code": 404, "message": "models/gemini-9 is not found for API version v1beta, or is not supported for generateContent.", "status": "NOT_FOUND"}}`})
	m, _ = newModel(t, srv, Options{Model: "gemini-9"})
	var me *text2sql.ModelError
	require.ErrorAs(t, m.Ping(context.Background()), &me)
	assert.Equal(t, 404, me.StatusCode)
	assert.Contains(t, me.Message, "gemini-9 is not found")
}
