package gemini

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

// sleeps records the waits of the retry loop instead of sleeping.
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
	opts.APIKey = testKey
	opts.BaseURL = srv.URL
	if opts.RetryBaseDelay == 0 {
		opts.RetryBaseDelay = time.Millisecond
	}
	m, err := New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	s := &sleeps{}
	m.client.Policy.Sleep = s.sleep
	return m, s
}

func temp(f float64) *float64 { return &f }

func noKey(t *testing.T, err error) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), testKey) {
		t.Fatalf("API key leaked in error: %v", err)
	}
}

func TestCompleteSuccess(t *testing.T) {
	srv := httpfake.New(t, httpfake.Reply{Body: okBody})
	m, _ := newModel(t, srv, Options{})
	schema := json.RawMessage(`{"type":"object","properties":{"sql":{"type":"string"}},"required":["sql"]}`)
	resp, err := m.Complete(context.Background(), text2sql.ModelRequest{
		System: "You write SQLite.",
		Messages: []text2sql.Message{
			{Role: text2sql.RoleUser, Content: "How many students?"},
			{Role: text2sql.RoleAssistant, Content: "SELECT count(*) FROM student"},
			{Role: text2sql.RoleUser, Content: "Only active ones."},
		},
		Schema:      schema,
		Temperature: temp(0.25),
		MaxTokens:   256,
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != `{"sql": "SELECT 1"}` || resp.Model != "gemini-2.5-flash-001" {
		t.Errorf("resp = %+v", resp)
	}
	if resp.Usage != (text2sql.Usage{InputTokens: 42, OutputTokens: 19}) {
		t.Errorf("usage = %+v", resp.Usage)
	}

	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Method != http.MethodPost || r.Path != "/v1beta/models/gemini-2.5-flash:generateContent" {
		t.Errorf("got %s %s", r.Method, r.Path)
	}
	if r.Header.Get("x-goog-api-key") != testKey {
		t.Errorf("x-goog-api-key header = %q", r.Header.Get("x-goog-api-key"))
	}
	if strings.Contains(r.Query, testKey) {
		t.Errorf("key in query %q", r.Query)
	}
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
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatalf("request body: %v\n%s", err, r.Body)
	}
	var roles []string
	for _, c := range body.Contents {
		roles = append(roles, c.Role)
	}
	if strings.Join(roles, ",") != "user,model,user" {
		t.Errorf("roles = %v", roles)
	}
	if body.Contents[1].Parts[0].Text != "SELECT count(*) FROM student" {
		t.Errorf("contents = %+v", body.Contents)
	}
	if len(body.SystemInstruction.Parts) != 1 || body.SystemInstruction.Parts[0].Text != "You write SQLite." {
		t.Errorf("systemInstruction = %+v", body.SystemInstruction)
	}
	g := body.GenerationConfig
	if g.ResponseMimeType != "application/json" || g.MaxOutputTokens != 256 || g.Temperature != 0.25 {
		t.Errorf("generationConfig = %+v", g)
	}
	var got, want any
	_ = json.Unmarshal(g.ResponseJsonSchema, &got)
	_ = json.Unmarshal(schema, &want)
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(want)
	if string(gb) != string(wb) {
		t.Errorf("responseJsonSchema = %s, want %s", gb, wb)
	}
}

func TestCompleteOmitsUnsetFields(t *testing.T) {
	srv := httpfake.New(t, httpfake.Reply{Body: okBody})
	m, _ := newModel(t, srv, Options{Model: "gemini-2.5-pro"})
	if _, err := m.Complete(context.Background(), text2sql.ModelRequest{
		Messages: []text2sql.Message{{Role: text2sql.RoleUser, Content: "hi"}},
	}); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	if r.Path != "/v1beta/models/gemini-2.5-pro:generateContent" {
		t.Errorf("path = %s", r.Path)
	}
	for _, f := range []string{"systemInstruction", "responseMimeType", "responseJsonSchema", "temperature", "maxOutputTokens"} {
		if strings.Contains(string(r.Body), f) {
			t.Errorf("body has %s: %s", f, r.Body)
		}
	}
}

func TestRetryAfterHeader(t *testing.T) {
	srv := httpfake.New(t,
		httpfake.Reply{Status: 429, Header: map[string]string{"Retry-After": "2"}, Body: quotaBody},
		httpfake.Reply{Body: okBody},
	)
	m, s := newModel(t, srv, Options{})
	resp, err := m.Complete(context.Background(), text2sql.ModelRequest{Messages: []text2sql.Message{{Role: text2sql.RoleUser, Content: "q"}}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text == "" {
		t.Error("empty text")
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
	if len(s.d) != 1 || s.d[0] != 2*time.Second {
		t.Errorf("waits = %v, want [2s] from Retry-After", s.d)
	}
}

func TestRetryInfoDetail(t *testing.T) {
	srv := httpfake.New(t, httpfake.Reply{Status: 429, Body: quotaBody}, httpfake.Reply{Body: okBody})
	m, s := newModel(t, srv, Options{})
	if _, err := m.Complete(context.Background(), text2sql.ModelRequest{Messages: []text2sql.Message{{Role: text2sql.RoleUser, Content: "q"}}}); err != nil {
		t.Fatal(err)
	}
	if len(s.d) != 1 || s.d[0] != 3*time.Second {
		t.Errorf("waits = %v, want [3s] from google.rpc.RetryInfo", s.d)
	}
}

func TestRetryAfterTooLongGivesUp(t *testing.T) {
	srv := httpfake.New(t, httpfake.Reply{Status: 429, Header: map[string]string{"Retry-After": "3600"}, Body: quotaBody}, httpfake.Reply{Body: okBody})
	m, _ := newModel(t, srv, Options{MaxRetryDelay: time.Minute})
	_, err := m.Complete(context.Background(), text2sql.ModelRequest{Messages: []text2sql.Message{{Role: text2sql.RoleUser, Content: "q"}}})
	var me *text2sql.ModelError
	if !errors.As(err, &me) || me.StatusCode != 429 || !me.Retryable {
		t.Fatalf("err = %v", err)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestServerErrorsExhausted(t *testing.T) {
	srv := httpfake.New(t, httpfake.Reply{Status: 503, Body: unavailableBody})
	m, s := newModel(t, srv, Options{MaxRetries: 2})
	_, err := m.Complete(context.Background(), text2sql.ModelRequest{Messages: []text2sql.Message{{Role: text2sql.RoleUser, Content: "q"}}})
	var me *text2sql.ModelError
	if !errors.As(err, &me) {
		t.Fatalf("err = %v (%T), want *ModelError", err, err)
	}
	if me.Provider != "gemini" || me.StatusCode != 503 || !me.Retryable || !errors.Is(err, text2sql.ErrModel) {
		t.Errorf("ModelError = %+v", me)
	}
	if !strings.Contains(me.Message, "overloaded") || !strings.Contains(me.Message, "3 attempts") {
		t.Errorf("message = %q", me.Message)
	}
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
	// Exponential backoff: 1ms base doubling, jitter takes off at most half.
	if len(s.d) != 2 || s.d[0] > time.Millisecond || s.d[1] < time.Millisecond || s.d[1] > 2*time.Millisecond {
		t.Errorf("waits = %v", s.d)
	}
}

func TestNonJSONServerError(t *testing.T) {
	srv := httpfake.New(t, httpfake.Reply{Status: 502, Header: map[string]string{"Content-Type": "text/html"}, Body: "<html><body>Bad Gateway</body></html>"})
	m, _ := newModel(t, srv, Options{MaxRetries: -1})
	_, err := m.Complete(context.Background(), text2sql.ModelRequest{Messages: []text2sql.Message{{Role: text2sql.RoleUser, Content: "q"}}})
	var me *text2sql.ModelError
	if !errors.As(err, &me) || me.StatusCode != 502 || !me.Retryable {
		t.Fatalf("err = %v", err)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests, want 1 (MaxRetries < 0)", n)
	}
}

func TestNonRetryable(t *testing.T) {
	for _, tc := range []struct {
		status int
		body   string
	}{
		{400, badKeyBody},
		{401, `{"error": {"code": 401, "message": "Request had invalid authentication credentials.", "status": "UNAUTHENTICATED"}}`},
		{403, `{"error": {"code": 403, "message": "Method doesn't allow unregistered callers.", "status": "PERMISSION_DENIED"}}`},
	} {
		srv := httpfake.New(t, httpfake.Reply{Status: tc.status, Body: tc.body}, httpfake.Reply{Body: okBody})
		m, _ := newModel(t, srv, Options{})
		_, err := m.Complete(context.Background(), text2sql.ModelRequest{Messages: []text2sql.Message{{Role: text2sql.RoleUser, Content: "q"}}})
		var me *text2sql.ModelError
		if !errors.As(err, &me) || me.StatusCode != tc.status || me.Retryable {
			t.Errorf("%d: err = %v", tc.status, err)
		}
		if n := len(srv.Requests()); n != 1 {
			t.Errorf("%d: %d requests, want 1", tc.status, n)
		}
		noKey(t, err)
	}
}

func TestMalformedBody(t *testing.T) {
	for _, body := range []string{`{"candidates": [`, `not json at all`, `[]`} {
		srv := httpfake.New(t, httpfake.Reply{Body: body})
		m, _ := newModel(t, srv, Options{})
		resp, err := m.Complete(context.Background(), text2sql.ModelRequest{Messages: []text2sql.Message{{Role: text2sql.RoleUser, Content: "q"}}})
		var me *text2sql.ModelError
		if !errors.As(err, &me) || me.Retryable || me.StatusCode != 200 {
			t.Errorf("%q: resp = %v, err = %v", body, resp, err)
			continue
		}
		if n := len(srv.Requests()); n != 1 {
			t.Errorf("%q: %d requests, want 1", body, n)
		}
	}
}

func TestBlockedAndEmpty(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`{"promptFeedback": {"blockReason": "SAFETY", "safetyRatings": [{"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH"}]}, "usageMetadata": {"promptTokenCount": 8, "totalTokenCount": 8}, "modelVersion": "gemini-2.5-flash"}`, "prompt blocked: SAFETY"},
		{`{"candidates": [], "modelVersion": "gemini-2.5-flash"}`, "no candidates"},
		{`{"candidates": [{"finishReason": "SAFETY", "index": 0}], "modelVersion": "gemini-2.5-flash"}`, "finish reason SAFETY"},
		{`{"candidates": [{"content": {"role": "model"}, "finishReason": "MAX_TOKENS", "index": 0}], "usageMetadata": {"promptTokenCount": 8, "thoughtsTokenCount": 100}}`, "finish reason MAX_TOKENS"},
	} {
		srv := httpfake.New(t, httpfake.Reply{Body: tc.body})
		m, _ := newModel(t, srv, Options{})
		_, err := m.Complete(context.Background(), text2sql.ModelRequest{Messages: []text2sql.Message{{Role: text2sql.RoleUser, Content: "q"}}})
		var me *text2sql.ModelError
		if !errors.As(err, &me) || me.Retryable || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("err = %v, want ModelError with %q", err, tc.want)
		}
		if n := len(srv.Requests()); n != 1 {
			t.Errorf("%d requests, want 1", n)
		}
	}
}

func TestThoughtPartsSkipped(t *testing.T) {
	body := `{"candidates": [{"content": {"parts": [{"text": "thinking...", "thought": true}, {"text": "SELECT "}, {"text": "1"}], "role": "model"}, "finishReason": "STOP"}]}`
	srv := httpfake.New(t, httpfake.Reply{Body: body})
	m, _ := newModel(t, srv, Options{})
	resp, err := m.Complete(context.Background(), text2sql.ModelRequest{Messages: []text2sql.Message{{Role: text2sql.RoleUser, Content: "q"}}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "SELECT 1" || resp.Model != DefaultModel {
		t.Errorf("resp = %+v", resp)
	}
}

func TestContextDeadline(t *testing.T) {
	srv := httpfake.New(t, httpfake.Reply{Block: true})
	m, _ := newModel(t, srv, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := m.Complete(ctx, text2sql.ModelRequest{Messages: []text2sql.Message{{Role: text2sql.RoleUser, Content: "q"}}})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want DeadlineExceeded", err)
	}
	if el := time.Since(start); el > time.Second {
		t.Errorf("took %v", el)
	}
	noKey(t, err)
}

func TestContextDeadlineDuringBackoff(t *testing.T) {
	srv := httpfake.New(t, httpfake.Reply{Status: 503, Body: unavailableBody})
	opts := Options{APIKey: testKey, BaseURL: srv.URL, RetryBaseDelay: 10 * time.Second}
	m, err := New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = m.Complete(ctx, text2sql.ModelRequest{Messages: []text2sql.Message{{Role: text2sql.RoleUser, Content: "q"}}})
	var me *text2sql.ModelError
	if !errors.As(err, &me) || me.StatusCode != 503 || !strings.Contains(me.Message, "deadline") {
		t.Fatalf("err = %v", err)
	}
	if el := time.Since(start); el > time.Second {
		t.Errorf("took %v: should not sleep past the deadline", el)
	}
}

func TestCancelledContext(t *testing.T) {
	srv := httpfake.New(t, httpfake.Reply{Body: okBody})
	m, _ := newModel(t, srv, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := m.Complete(ctx, text2sql.ModelRequest{Messages: []text2sql.Message{{Role: text2sql.RoleUser, Content: "q"}}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests, want 0", n)
	}
}

func TestKeyNeverInErrors(t *testing.T) {
	// A server (or proxy) echoing the key and a URL carrying it.
	echo := `{"error": {"code": 400, "message": "bad key ` + testKey + ` for https://generativelanguage.googleapis.com/v1beta/models/x:generateContent?key=` + testKey + `&alt=json", "status": "INVALID_ARGUMENT"}}`
	srv := httpfake.New(t, httpfake.Reply{Status: 400, Body: echo})
	m, _ := newModel(t, srv, Options{})
	_, err := m.Complete(context.Background(), text2sql.ModelRequest{Messages: []text2sql.Message{{Role: text2sql.RoleUser, Content: "q"}}})
	if err == nil {
		t.Fatal("no error")
	}
	noKey(t, err)
	if !strings.Contains(err.Error(), "[REDACTED]") {
		t.Errorf("err = %v", err)
	}

	// Malformed success body echoing the key.
	srv2 := httpfake.New(t, httpfake.Reply{Body: `{"oops": "` + testKey})
	m2, _ := newModel(t, srv2, Options{})
	_, err = m2.Complete(context.Background(), text2sql.ModelRequest{Messages: []text2sql.Message{{Role: text2sql.RoleUser, Content: "q"}}})
	if err == nil {
		t.Fatal("no error")
	}
	noKey(t, err)

	// Connection refused: the URL appears in net errors.
	srv3 := httpfake.New(t)
	url := srv3.URL
	srv3.Close()
	m3, err := New(context.Background(), Options{APIKey: testKey, BaseURL: url + "/?key=" + testKey, MaxRetries: -1})
	if err != nil {
		noKey(t, err)
		return
	}
	_, err = m3.Complete(context.Background(), text2sql.ModelRequest{Messages: []text2sql.Message{{Role: text2sql.RoleUser, Content: "q"}}})
	var me *text2sql.ModelError
	if !errors.As(err, &me) || me.StatusCode != 0 || !me.Retryable {
		t.Errorf("err = %v", err)
	}
	noKey(t, err)
}

func TestNewErrors(t *testing.T) {
	t.Setenv("GEMINI_API_KEY", "")
	t.Setenv("GOOGLE_API_KEY", "env-key-must-not-be-used")
	if _, err := New(context.Background(), Options{}); !errors.Is(err, text2sql.ErrInvalidConfig) {
		t.Errorf("no key: err = %v", err)
	}
	if _, err := FromEnv(context.Background(), Options{}); !errors.Is(err, text2sql.ErrInvalidConfig) {
		t.Errorf("FromEnv without GEMINI_API_KEY: err = %v", err)
	}
	if _, err := New(context.Background(), Options{APIKey: testKey, BaseURL: "localhost:8080"}); !errors.Is(err, text2sql.ErrInvalidConfig) {
		t.Errorf("bad URL: err = %v", err)
	}
	t.Setenv("GEMINI_API_KEY", testKey)
	m, err := FromEnv(context.Background(), Options{})
	if err != nil || m.Name() != DefaultModel {
		t.Errorf("FromEnv: %v, %v", m, err)
	}
}

func TestInvalidSchema(t *testing.T) {
	srv := httpfake.New(t, httpfake.Reply{Body: okBody})
	m, _ := newModel(t, srv, Options{})
	_, err := m.Complete(context.Background(), text2sql.ModelRequest{Schema: json.RawMessage(`{`), Messages: []text2sql.Message{{Role: text2sql.RoleUser, Content: "q"}}})
	if !errors.Is(err, text2sql.ErrInvalidConfig) {
		t.Errorf("err = %v", err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests", n)
	}
}

func TestConcurrent(t *testing.T) {
	srv := httpfake.New(t, httpfake.Reply{Body: okBody})
	m, _ := newModel(t, srv, Options{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := m.Complete(context.Background(), text2sql.ModelRequest{System: "s", Messages: []text2sql.Message{{Role: text2sql.RoleUser, Content: "q"}}}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := len(srv.Requests()); n != 8 {
		t.Errorf("%d requests", n)
	}
}
