package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/httpfake"
)

const testKey = "sk-proj-TEST-SECRET-0123456789abcdef"

type embReq struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
	Dimensions     *int     `json:"dimensions"`
}

// answer builds the /v1/embeddings response: one vector of dim values per
// input, its first value the input's length, listed in reverse order with
// their index (as servers may), not normalised.
func answer(dim int, withIndex bool) func(r httpfake.Request) httpfake.Reply {
	return func(r httpfake.Request) httpfake.Reply {
		var req embReq
		if err := json.Unmarshal(r.Body, &req); err != nil {
			return httpfake.Reply{Status: 400, Body: `{"error": {"message": "We could not parse the JSON body of your request.", "type": "invalid_request_error", "param": null, "code": null}}`}
		}
		items := make([]string, len(req.Input))
		for i, in := range req.Input {
			vals := make([]float64, dim)
			vals[0] = float64(len(in))
			vals[1] = 1
			b, _ := json.Marshal(vals)
			if withIndex {
				items[len(items)-1-i] = fmt.Sprintf(`{"object": "embedding", "index": %d, "embedding": %s}`, i, b)
			} else {
				items[i] = fmt.Sprintf(`{"object": "embedding", "embedding": %s}`, b)
			}
		}
		return httpfake.Reply{Body: fmt.Sprintf(`{"object": "list", "data": [%s], "model": %q, "usage": {"prompt_tokens": 8, "total_tokens": 8}}`, strings.Join(items, ", "), req.Model)}
	}
}

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

func newEmbedder(t *testing.T, srv *httpfake.Server, opts Options) (*Embedder, *sleeps) {
	t.Helper()
	if opts.APIKey == "" {
		opts.APIKey = testKey
	}
	opts.BaseURL = srv.URL + "/v1"
	opts.RetryBaseDelay = time.Millisecond
	e, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	s := &sleeps{}
	e.client.Policy.Sleep = s.sleep
	return e, s
}

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

func TestEmbedDocumentsBatches(t *testing.T) {
	srv := httpfake.New(t)
	srv.Handle = answer(512, true)
	e, _ := newEmbedder(t, srv, Options{Dimension: 512, BatchSize: 2})
	if e.Name() != "openai/text-embedding-3-small" || e.Dimension() != 512 {
		t.Errorf("%q %d", e.Name(), e.Dimension())
	}
	texts := []string{"a", "bb", "ccc", "dddd", "eeeee"}
	vs, err := e.EmbedDocuments(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vs {
		if len(v) != 512 || math.Abs(norm(v)-1) > 1e-5 {
			t.Errorf("vector %d: len %d norm %v", i, len(v), norm(v))
		}
		if r := v[0] / v[1]; math.Abs(float64(r)-float64(len(texts[i]))) > 1e-4 {
			t.Errorf("vector %d is for the wrong text", i)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	for i, r := range reqs {
		if r.Method != http.MethodPost || r.Path != "/v1/embeddings" || r.Header.Get("Authorization") != "Bearer "+testKey {
			t.Errorf("got %s %s", r.Method, r.Path)
		}
		var b embReq
		if err := json.Unmarshal(r.Body, &b); err != nil {
			t.Fatalf("%v: %s", err, r.Body)
		}
		if b.Model != DefaultModel || b.EncodingFormat != "float" || b.Dimensions == nil || *b.Dimensions != 512 || len(b.Input) != []int{2, 2, 1}[i] {
			t.Errorf("request %d: %s", i, r.Body)
		}
	}
}

func TestLocalModel(t *testing.T) {
	// Ollama: no key, unknown model (Dimension required), no "dimensions"
	// field, no index in the data.
	srv := httpfake.New(t)
	srv.Handle = answer(768, false)
	e, err := New(Options{BaseURL: srv.URL + "/v1", Model: "nomic-embed-text", Dimension: 768})
	if err != nil {
		t.Fatal(err)
	}
	v, err := e.EmbedQuery(context.Background(), "students")
	if err != nil {
		t.Fatal(err)
	}
	if len(v) != 768 || math.Abs(norm(v)-1) > 1e-5 {
		t.Errorf("len %d norm %v", len(v), norm(v))
	}
	vs, err := e.EmbedDocuments(context.Background(), []string{"a", "bbb"})
	if err != nil || vs[1][0]/vs[1][1] < 2.99 {
		t.Errorf("order without index: %v", err)
	}
	r := srv.Requests()[0]
	if r.Header.Get("Authorization") != "" || strings.Contains(string(r.Body), "dimensions") {
		t.Errorf("request: %v %s", r.Header, r.Body)
	}
	if e.Name() != "openai/nomic-embed-text" {
		t.Errorf("Name = %q", e.Name())
	}
}

func TestRetryAfter(t *testing.T) {
	srv := httpfake.New(t)
	var mu sync.Mutex
	n := 0
	ok := answer(1536, true)
	srv.Handle = func(r httpfake.Request) httpfake.Reply {
		mu.Lock()
		n++
		first := n == 1
		mu.Unlock()
		if first {
			return httpfake.Reply{Status: 429, Header: map[string]string{"Retry-After": "1"}, Body: `{"error": {"message": "Rate limit reached for text-embedding-3-small.", "type": "requests", "param": null, "code": "rate_limit_exceeded"}}`}
		}
		return ok(r)
	}
	e, s := newEmbedder(t, srv, Options{})
	if _, err := e.EmbedQuery(context.Background(), "x"); err != nil {
		t.Fatal(err)
	}
	if len(srv.Requests()) != 2 || len(s.d) != 1 || s.d[0] != time.Second {
		t.Errorf("%d requests, waits %v", len(srv.Requests()), s.d)
	}
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		name      string
		reply     httpfake.Reply
		status    int
		retryable bool
		requests  int
	}{
		{"5xx exhausted", httpfake.Reply{Status: 503, Body: `{"error": {"message": "The engine is currently overloaded, please try again later.", "type": "server_error", "param": null, "code": null}}`}, 503, true, 4},
		{"400", httpfake.Reply{Status: 400, Body: `{"error": {"message": "'$.input' is invalid.", "type": "invalid_request_error", "param": null, "code": null}}`}, 400, false, 1},
		{"401", httpfake.Reply{Status: 401, Body: `{"error": {"message": "Incorrect API key provided.", "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}}`}, 401, false, 1},
		{"malformed", httpfake.Reply{Body: `{"data": [{"embedding": [0.1,`}, 200, false, 1},
		{"wrong count", httpfake.Reply{Body: `{"object": "list", "data": [], "model": "m"}`}, 200, false, 1},
		{"wrong dimension", httpfake.Reply{Body: `{"object": "list", "data": [{"index": 0, "embedding": [0.1, 0.2]}], "model": "m"}`}, 200, false, 1},
		{"bad index", httpfake.Reply{Body: `{"object": "list", "data": [{"index": 5, "embedding": [0.1, 0.2]}], "model": "m"}`}, 200, false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httpfake.New(t, tc.reply)
			e, _ := newEmbedder(t, srv, Options{})
			_, err := e.EmbedDocuments(context.Background(), []string{"x"})
			var me *text2sql.ModelError
			if !errors.As(err, &me) || me.Provider != "openai" || me.StatusCode != tc.status || me.Retryable != tc.retryable || !errors.Is(err, text2sql.ErrModel) {
				t.Fatalf("err = %v", err)
			}
			if n := len(srv.Requests()); n != tc.requests {
				t.Errorf("%d requests, want %d", n, tc.requests)
			}
		})
	}
}

func TestKeyNeverInErrors(t *testing.T) {
	srv := httpfake.New(t, httpfake.Reply{Status: 401, Body: `{"error": {"message": "Incorrect API key provided: ` + testKey + `.", "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}}`})
	e, _ := newEmbedder(t, srv, Options{})
	_, err := e.EmbedQuery(context.Background(), "q")
	if err == nil || strings.Contains(err.Error(), testKey) {
		t.Fatalf("err = %v", err)
	}
}

func TestContextDeadline(t *testing.T) {
	srv := httpfake.New(t, httpfake.Reply{Block: true})
	e, _ := newEmbedder(t, srv, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := e.EmbedDocuments(ctx, []string{"x"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
	if time.Since(start) > time.Second {
		t.Error("not prompt")
	}
}

func TestNewErrors(t *testing.T) {
	for _, o := range []Options{
		{Model: "nomic-embed-text"},
		{Dimension: -3},
		{BatchSize: 5000},
		{BaseURL: "ftp://x"},
	} {
		if _, err := New(o); !errors.Is(err, text2sql.ErrInvalidConfig) {
			t.Errorf("%+v: err = %v", o, err)
		}
	}
	e, err := New(Options{Model: "text-embedding-3-large"})
	if err != nil || e.Dimension() != 3072 {
		t.Errorf("large: %v", err)
	}
	t.Setenv("OPENAI_API_KEY", testKey)
	if _, err := FromEnv(Options{}); err != nil {
		t.Error(err)
	}
}
