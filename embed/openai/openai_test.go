package openai

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"slices"
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

type embReq struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
	Dimensions     *int     `json:"dimensions"`
}

// answer builds the /v1/embeddings response: a providertest.Vector of dim
// values per input; withIndex lists them in reverse order with their
// index (as servers may), else in order without one.
func answer(dim int, withIndex bool) func(r httpfake.Request) httpfake.Reply {
	return func(r httpfake.Request) httpfake.Reply {
		var req embReq
		if err := json.Unmarshal(r.Body, &req); err != nil {
			return httpfake.Reply{Status: 400, Body: `{"error": {"message": "We could not parse the JSON body of your request.", "type": "invalid_request_error", "param": null, "code": null}}`}
		}
		type item struct {
			Object    string    `json:"object"`
			Index     *int      `json:"index,omitempty"`
			Embedding []float64 `json:"embedding"`
		}
		items := make([]item, len(req.Input))
		for i, in := range req.Input {
			items[i] = item{Object: "embedding", Embedding: providertest.Vector(in, dim)}
			if withIndex {
				items[i].Index = &i
			}
		}
		if withIndex {
			slices.Reverse(items)
		}
		b, _ := json.Marshal(map[string]any{"object": "list", "data": items, "model": req.Model, "usage": map[string]int{"prompt_tokens": 8, "total_tokens": 8}})
		return httpfake.Reply{Body: string(b)}
	}
}

// newEmbedder builds an Embedder against srv's /v1 (opts.BaseURL
// instead, when set) with a 1 ms retry base delay, and the test key
// unless opts has one; its retry waits are recorded, not slept.
func newEmbedder(t *testing.T, srv *httpfake.Server, opts Options) (*Embedder, *providertest.Sleeps) {
	t.Helper()
	opts.APIKey, opts.BaseURL, opts.RetryBaseDelay = cmp.Or(opts.APIKey, testKey), cmp.Or(opts.BaseURL, srv.URL+"/v1"), time.Millisecond
	e, err := New(opts)
	require.NoError(t, err)
	return e, providertest.Record(&e.client.Policy)
}

// client is the Embedder as the shared provider tests drive it: one
// EmbedQuery.
var client = providertest.Client{Provider: "openai", Key: testKey, New: func(t *testing.T, srv *httpfake.Server, s providertest.Setup) func(context.Context) error {
	e, _ := newEmbedder(t, srv, Options{HTTP: provider.HTTP{Timeout: s.Timeout, MaxRetries: s.MaxRetries}, BaseURL: s.URL(srv.URL + "/v1")})
	e.client.Policy.Sleep = s.Sleep
	return func(ctx context.Context) error { _, err := e.EmbedQuery(ctx, "q"); return err }
}}

func TestEmbedDocumentsBatches(t *testing.T) {
	srv := httpfake.New(t)
	srv.Handle = answer(512, true)
	e, _ := newEmbedder(t, srv, Options{Dimension: 512, BatchSize: 2})
	assert.Equal(t, "openai/text-embedding-3-small", e.Name())
	assert.Equal(t, 512, e.Dimension())
	texts := []string{"a", "bb", "ccc", "dddd", "eeeee"}
	vs, err := e.EmbedDocuments(context.Background(), texts)
	require.NoError(t, err)
	providertest.Vectors(t, texts, vs, 512)
	reqs := srv.Requests()
	require.Len(t, reqs, 3)
	for i, r := range reqs {
		assert.Equal(t, http.MethodPost, r.Method)
		assert.Equal(t, "/v1/embeddings", r.Path)
		assert.Equal(t, "Bearer "+testKey, r.Header.Get("Authorization"))
		var b embReq
		require.NoError(t, json.Unmarshal(r.Body, &b), "%s", r.Body)
		assert.Equal(t, DefaultModel, b.Model)
		assert.Equal(t, "float", b.EncodingFormat)
		if assert.NotNil(t, b.Dimensions) {
			assert.Equal(t, 512, *b.Dimensions)
		}
		assert.Len(t, b.Input, []int{2, 2, 1}[i], "request %d", i)
	}
}

func TestLocalModel(t *testing.T) {
	// Ollama: no key, unknown model (Dimension required), no "dimensions"
	// field, no index in the data.
	srv := httpfake.New(t)
	srv.Handle = answer(768, false)
	e, err := New(Options{BaseURL: srv.URL + "/v1", Model: "nomic-embed-text", Dimension: 768})
	require.NoError(t, err)
	v, err := e.EmbedQuery(context.Background(), "students")
	require.NoError(t, err)
	providertest.Vectors(t, []string{"students"}, [][]float32{v}, 768)
	texts := []string{"a", "bbb"}
	vs, err := e.EmbedDocuments(context.Background(), texts)
	require.NoError(t, err)
	providertest.Vectors(t, texts, vs, 768)
	r := srv.Requests()[0]
	assert.Empty(t, r.Header.Get("Authorization"))
	assert.NotContains(t, string(r.Body), "dimensions")
	assert.Equal(t, "openai/nomic-embed-text", e.Name())
}

func TestRetryAfter(t *testing.T) {
	srv := httpfake.New(t, httpfake.Reply{Status: 429, Header: map[string]string{"Retry-After": "1"}, Body: `{"error": {"message": "Rate limit reached for text-embedding-3-small.", "type": "requests", "param": null, "code": "rate_limit_exceeded"}}`})
	srv.Handle = answer(1536, true)
	providertest.RetryAfter(t, client, srv, time.Second)
}

// TestErrors: a refusal or an answer the client cannot use, and the
// ModelError it gives.
func TestErrors(t *testing.T) {
	one := func(status int, body string) []httpfake.Reply { return []httpfake.Reply{{Status: status, Body: body}} }
	providertest.Errors(t, client, []providertest.Failure{
		{Name: "5xx exhausted", Replies: one(503, `{"error": {"message": "The engine is currently overloaded, please try again later.", "type": "server_error", "param": null, "code": null}}`), Status: 503, Retryable: true, Requests: 4, Says: []string{"overloaded"}},
		{Name: "400", Replies: one(400, `{"error": {"message": "'$.input' is invalid.", "type": "invalid_request_error", "param": null, "code": null}}`), Status: 400, Requests: 1, Says: []string{"is invalid"}},
		{Name: "401", Replies: one(401, `{"error": {"message": "Incorrect API key provided.", "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}}`), Status: 401, Requests: 1, Says: []string{"Incorrect API key"}},
		{Name: "malformed", Replies: one(200, `{"data": [{"embedding": [0.1,`), Status: 200, Requests: 1},
		{Name: "wrong count", Replies: one(200, `{"object": "list", "data": [], "model": "m"}`), Status: 200, Requests: 1, Says: []string{"got 0 embeddings for 1 texts"}},
		{Name: "wrong dimension", Replies: one(200, `{"object": "list", "data": [{"index": 0, "embedding": [0.1, 0.2]}], "model": "m"}`), Status: 200, Requests: 1, Says: []string{"embedding 0 has 2 dimensions"}},
		{Name: "bad index", Replies: one(200, `{"object": "list", "data": [{"index": 5, "embedding": [0.1, 0.2]}], "model": "m"}`), Status: 200, Requests: 1, Says: []string{"embedding index 5 is out of range"}},
	})
}

func TestKeyNeverInErrors(t *testing.T) {
	echo := `{"error": {"message": "Incorrect API key provided: ` + testKey + `.", "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}}`
	providertest.KeyNeverInErrors(t, client, httpfake.Reply{Status: 401, Body: echo}, httpfake.Reply{Body: `{"data": "` + testKey})
}

func TestNewErrors(t *testing.T) {
	for _, o := range []Options{
		{Model: "nomic-embed-text"},
		{Dimension: -3},
		{BatchSize: 5000},
		{BaseURL: "ftp://x"},
	} {
		_, err := New(o)
		assert.ErrorIs(t, err, text2sql.ErrInvalidConfig, "%+v", o)
	}
	e, err := New(Options{Model: "text-embedding-3-large"})
	require.NoError(t, err)
	assert.Equal(t, 3072, e.Dimension())
	t.Setenv("OPENAI_API_KEY", testKey)
	_, err = FromEnv(Options{})
	assert.NoError(t, err)
}

// TestConformance runs the OpenAI embedder, against a local fake of the
// API that answers each text with a vector computed from it, through the
// Embedder kit.
func TestConformance(t *testing.T) {
	refusal := httpfake.Reply{Status: 401, Body: `{"error": {"message": "Incorrect API key provided.", "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}}`}
	providertest.EmbedderKit(t, refusal, answer(16, true), func(srv *httpfake.Server) text2sql.Embedder {
		e, _ := newEmbedder(t, srv, Options{Dimension: 16})
		return e
	})
}

// The time limit of a call (Options.Timeout), as every provider client
// keeps it: see providertest.Timeout.
func TestTimeout(t *testing.T) {
	providertest.Timeout(t, client, httpfake.Reply{Status: 503, Body: `{"error": {"message": "overloaded", "type": "server_error"}}`})
}

// Concurrent calls reuse the Embedder's connections.
func TestConnectionsReused(t *testing.T) {
	srv := httpfake.New(t)
	srv.Handle = answer(1536, true)
	providertest.Concurrent(t, client, srv, 16)
}
