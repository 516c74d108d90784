package gemini

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

const testKey = "AIzaSy-TEST-SECRET-KEY-0123456789"

// batchRequest is the batchEmbedContents request body.
type batchRequest struct {
	Requests []struct {
		Model   string `json:"model"`
		Content struct {
			Parts []struct {
				Text string `json:"text"`
			} `json:"parts"`
		} `json:"content"`
		TaskType             string `json:"taskType"`
		OutputDimensionality int    `json:"outputDimensionality"`
	} `json:"requests"`
}

// answer builds the batchEmbedContents response for a request: one vector
// of dim values per text, its first value the text's length so tests can
// check the order, not normalised.
func answer(dim int) func(r httpfake.Request) httpfake.Reply {
	return func(r httpfake.Request) httpfake.Reply {
		var req batchRequest
		if err := json.Unmarshal(r.Body, &req); err != nil {
			return httpfake.Reply{Status: 400, Body: `{"error": {"code": 400, "message": "Invalid JSON payload received.", "status": "INVALID_ARGUMENT"}}`}
		}
		var sb strings.Builder
		sb.WriteString(`{"embeddings": [`)
		for i, it := range req.Requests {
			if i > 0 {
				sb.WriteString(", ")
			}
			vals := make([]float64, dim)
			vals[0] = float64(len(it.Content.Parts[0].Text))
			vals[1] = 1
			b, _ := json.Marshal(vals)
			fmt.Fprintf(&sb, `{"values": %s}`, b)
		}
		sb.WriteString("]}")
		return httpfake.Reply{Body: sb.String()}
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
	opts.APIKey = testKey
	opts.BaseURL = srv.URL
	opts.RetryBaseDelay = time.Millisecond
	e, err := New(context.Background(), opts)
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
	srv.Handle = answer(DefaultDimension)
	e, _ := newEmbedder(t, srv, Options{BatchSize: 2})
	texts := []string{"a", "bb", "ccc", "dddd", "eeeee"}
	vs, err := e.EmbedDocuments(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != len(texts) {
		t.Fatalf("%d vectors", len(vs))
	}
	for i, v := range vs {
		if len(v) != 768 || math.Abs(norm(v)-1) > 1e-5 {
			t.Errorf("vector %d: len %d, norm %v", i, len(v), norm(v))
		}
		// Order: first value ∝ text length, second ∝ 1.
		if ratio := v[0] / v[1]; math.Abs(float64(ratio)-float64(len(texts[i]))) > 1e-4 {
			t.Errorf("vector %d is for the wrong text (ratio %v)", i, ratio)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3 (batches of 2, 2, 1)", len(reqs))
	}
	sizes := []int{2, 2, 1}
	for i, r := range reqs {
		if r.Method != http.MethodPost || r.Path != "/v1beta/models/gemini-embedding-001:batchEmbedContents" {
			t.Errorf("got %s %s", r.Method, r.Path)
		}
		if r.Header.Get("x-goog-api-key") != testKey {
			t.Error("no x-goog-api-key header")
		}
		var br batchRequest
		if err := json.Unmarshal(r.Body, &br); err != nil {
			t.Fatal(err)
		}
		if len(br.Requests) != sizes[i] {
			t.Errorf("request %d has %d items, want %d", i, len(br.Requests), sizes[i])
		}
		for _, it := range br.Requests {
			if it.Model != "models/gemini-embedding-001" || it.TaskType != "RETRIEVAL_DOCUMENT" || it.OutputDimensionality != 768 {
				t.Errorf("item = %+v", it)
			}
		}
	}
}

func TestEmbedQuery(t *testing.T) {
	srv := httpfake.New(t)
	srv.Handle = answer(256)
	e, _ := newEmbedder(t, srv, Options{OutputDimensionality: 256, Model: "text-embedding-004"})
	if e.Name() != "gemini/text-embedding-004" || e.Dimension() != 256 {
		t.Errorf("Name %q Dimension %d", e.Name(), e.Dimension())
	}
	v, err := e.EmbedQuery(context.Background(), "how many students?")
	if err != nil {
		t.Fatal(err)
	}
	if len(v) != 256 || math.Abs(norm(v)-1) > 1e-5 {
		t.Errorf("len %d norm %v", len(v), norm(v))
	}
	r := srv.Requests()[0]
	var br batchRequest
	_ = json.Unmarshal(r.Body, &br)
	if r.Path != "/v1beta/models/text-embedding-004:batchEmbedContents" || len(br.Requests) != 1 || br.Requests[0].TaskType != "RETRIEVAL_QUERY" || br.Requests[0].OutputDimensionality != 256 || br.Requests[0].Content.Parts[0].Text != "how many students?" {
		t.Errorf("request %s: %s", r.Path, r.Body)
	}
}

func TestEmpty(t *testing.T) {
	srv := httpfake.New(t)
	e, _ := newEmbedder(t, srv, Options{})
	vs, err := e.EmbedDocuments(context.Background(), nil)
	if err != nil || len(vs) != 0 || len(srv.Requests()) != 0 {
		t.Errorf("vs = %v, err = %v, %d requests", vs, err, len(srv.Requests()))
	}
	if e.Name() != "gemini/gemini-embedding-001" || e.Dimension() != 768 {
		t.Errorf("defaults: %q %d", e.Name(), e.Dimension())
	}
}

func TestRetryAfter(t *testing.T) {
	srv := httpfake.New(t)
	n := 0
	var mu sync.Mutex
	ok := answer(768)
	srv.Handle = func(r httpfake.Request) httpfake.Reply {
		mu.Lock()
		n++
		first := n == 1
		mu.Unlock()
		if first {
			return httpfake.Reply{Status: 429, Header: map[string]string{"Retry-After": "4"}, Body: `{"error": {"code": 429, "message": "Resource has been exhausted (e.g. check quota).", "status": "RESOURCE_EXHAUSTED"}}`}
		}
		return ok(r)
	}
	e, s := newEmbedder(t, srv, Options{})
	if _, err := e.EmbedDocuments(context.Background(), []string{"x", "y"}); err != nil {
		t.Fatal(err)
	}
	if len(srv.Requests()) != 2 || len(s.d) != 1 || s.d[0] != 4*time.Second {
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
		{"5xx exhausted", httpfake.Reply{Status: 500, Body: `{"error": {"code": 500, "message": "An internal error has occurred.", "status": "INTERNAL"}}`}, 500, true, 4},
		{"400", httpfake.Reply{Status: 400, Body: `{"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.", "status": "INVALID_ARGUMENT"}}`}, 400, false, 1},
		{"401", httpfake.Reply{Status: 401, Body: `{"error": {"code": 401, "message": "Request had invalid authentication credentials.", "status": "UNAUTHENTICATED"}}`}, 401, false, 1},
		{"malformed", httpfake.Reply{Body: `{"embeddings": [{"values": [0.1,`}, 200, false, 1},
		{"wrong count", httpfake.Reply{Body: `{"embeddings": []}`}, 200, false, 1},
		{"wrong dimension", httpfake.Reply{Body: `{"embeddings": [{"values": [0.1, 0.2]}]}`}, 200, false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httpfake.New(t, tc.reply)
			e, _ := newEmbedder(t, srv, Options{})
			_, err := e.EmbedDocuments(context.Background(), []string{"x"})
			var me *text2sql.ModelError
			if !errors.As(err, &me) || me.Provider != "gemini" || me.StatusCode != tc.status || me.Retryable != tc.retryable || !errors.Is(err, text2sql.ErrModel) {
				t.Fatalf("err = %v", err)
			}
			if n := len(srv.Requests()); n != tc.requests {
				t.Errorf("%d requests, want %d", n, tc.requests)
			}
			if strings.Contains(err.Error(), testKey) {
				t.Errorf("key leaked: %v", err)
			}
		})
	}
}

func TestKeyNeverInErrors(t *testing.T) {
	srv := httpfake.New(t, httpfake.Reply{Status: 403, Body: `{"error": {"code": 403, "message": "key ` + testKey + ` is blocked; see ?key=` + testKey + `", "status": "PERMISSION_DENIED"}}`})
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
		{},
		{APIKey: "k", OutputDimensionality: 4000},
		{APIKey: "k", OutputDimensionality: -1},
		{APIKey: "k", BatchSize: 101},
		{APIKey: "k", BaseURL: "::"},
	} {
		if _, err := New(context.Background(), o); !errors.Is(err, text2sql.ErrInvalidConfig) {
			t.Errorf("%+v: err = %v", o, err)
		}
	}
	t.Setenv("GEMINI_API_KEY", testKey)
	if _, err := FromEnv(context.Background(), Options{}); err != nil {
		t.Error(err)
	}
}

func TestConcurrent(t *testing.T) {
	srv := httpfake.New(t)
	srv.Handle = answer(64)
	e, _ := newEmbedder(t, srv, Options{BatchSize: 3, OutputDimensionality: 64})
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			if _, err := e.EmbedDocuments(context.Background(), []string{"a", "b", "c", "d"}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := len(srv.Requests()); n != 12 {
		t.Errorf("%d requests, want 12", n)
	}
}
