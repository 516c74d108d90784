package gemini

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"strings"
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

// answer builds the batchEmbedContents response for a request: a
// providertest.Vector of dim values per text.
func answer(dim int) func(r httpfake.Request) httpfake.Reply {
	return func(r httpfake.Request) httpfake.Reply {
		var req batchRequest
		if err := json.Unmarshal(r.Body, &req); err != nil {
			return httpfake.Reply{Status: 400, Body: `{"error": {"code": 400, "message": "Invalid JSON payload received.", "status": "INVALID_ARGUMENT"}}`}
		}
		type embedding struct {
			Values []float64 `json:"values"`
		}
		var resp struct {
			Embeddings []embedding `json:"embeddings"`
		}
		for _, it := range req.Requests {
			resp.Embeddings = append(resp.Embeddings, embedding{providertest.Vector(it.Content.Parts[0].Text, dim)})
		}
		b, _ := json.Marshal(resp)
		return httpfake.Reply{Body: string(b)}
	}
}

// newEmbedder builds an Embedder against srv (opts.BaseURL instead, when
// set) with the test key and a 1 ms retry base delay; its retry waits
// are recorded, not slept.
func newEmbedder(t *testing.T, srv *httpfake.Server, opts Options) (*Embedder, *providertest.Sleeps) {
	t.Helper()
	opts.APIKey, opts.BaseURL, opts.RetryBaseDelay = testKey, cmp.Or(opts.BaseURL, srv.URL), time.Millisecond
	e, err := New(context.Background(), opts)
	require.NoError(t, err)
	return e, providertest.Record(&e.client.Policy)
}

// client is the Embedder as the shared provider tests drive it: one
// EmbedQuery.
var client = providertest.Client{Provider: "gemini", Key: testKey, New: func(t *testing.T, srv *httpfake.Server, s providertest.Setup) func(context.Context) error {
	e, _ := newEmbedder(t, srv, Options{HTTP: provider.HTTP{Timeout: s.Timeout, MaxRetries: s.MaxRetries}, BaseURL: s.URL(srv.URL)})
	e.client.Policy.Sleep = s.Sleep
	return func(ctx context.Context) error { _, err := e.EmbedQuery(ctx, "q"); return err }
}}

func TestEmbedDocumentsBatches(t *testing.T) {
	srv := httpfake.New(t)
	srv.Handle = answer(DefaultDimension)
	e, _ := newEmbedder(t, srv, Options{BatchSize: 2})
	texts := []string{"a", "bb", "ccc", "dddd", "eeeee"}
	vs, err := e.EmbedDocuments(context.Background(), texts)
	require.NoError(t, err)
	providertest.Vectors(t, texts, vs, 768)
	reqs := srv.Requests()
	require.Len(t, reqs, 3, "batches of 2, 2, 1")
	for i, r := range reqs {
		assert.Equal(t, http.MethodPost, r.Method)
		assert.Equal(t, "/v1beta/models/gemini-embedding-001:batchEmbedContents", r.Path)
		assert.Equal(t, testKey, r.Header.Get("x-goog-api-key"))
		var br batchRequest
		require.NoError(t, json.Unmarshal(r.Body, &br))
		assert.Len(t, br.Requests, []int{2, 2, 1}[i], "request %d", i)
		for _, it := range br.Requests {
			assert.Equal(t, "models/gemini-embedding-001", it.Model)
			assert.Equal(t, "RETRIEVAL_DOCUMENT", it.TaskType)
			assert.Equal(t, 768, it.OutputDimensionality)
		}
	}
}

func TestEmbedQuery(t *testing.T) {
	srv := httpfake.New(t)
	srv.Handle = answer(256)
	e, _ := newEmbedder(t, srv, Options{OutputDimensionality: 256, Model: "text-embedding-004"})
	assert.Equal(t, "gemini/text-embedding-004", e.Name())
	assert.Equal(t, 256, e.Dimension())
	v, err := e.EmbedQuery(context.Background(), "how many students?")
	require.NoError(t, err)
	providertest.Vectors(t, []string{"how many students?"}, [][]float32{v}, 256)
	r := srv.Requests()[0]
	assert.Equal(t, "/v1beta/models/text-embedding-004:batchEmbedContents", r.Path)
	var br batchRequest
	require.NoError(t, json.Unmarshal(r.Body, &br))
	require.Len(t, br.Requests, 1)
	assert.Equal(t, "RETRIEVAL_QUERY", br.Requests[0].TaskType)
	assert.Equal(t, 256, br.Requests[0].OutputDimensionality)
	assert.Equal(t, "how many students?", br.Requests[0].Content.Parts[0].Text)
}

func TestEmpty(t *testing.T) {
	srv := httpfake.New(t)
	e, _ := newEmbedder(t, srv, Options{})
	vs, err := e.EmbedDocuments(context.Background(), nil)
	require.NoError(t, err)
	assert.Empty(t, vs)
	assert.Empty(t, srv.Requests())
	assert.Equal(t, "gemini/gemini-embedding-001", e.Name())
	assert.Equal(t, 768, e.Dimension())
}

func TestRetryAfter(t *testing.T) {
	srv := httpfake.New(t, httpfake.Reply{Status: 429, Header: map[string]string{"Retry-After": "4"}, Body: `{"error": {"code": 429, "message": "Resource has been exhausted (e.g. check quota).", "status": "RESOURCE_EXHAUSTED"}}`})
	srv.Handle = answer(768)
	providertest.RetryAfter(t, client, srv, 4*time.Second)
}

// TestErrors: a refusal or an answer the client cannot use, and the
// ModelError it gives.
func TestErrors(t *testing.T) {
	one := func(status int, body string) []httpfake.Reply { return []httpfake.Reply{{Status: status, Body: body}} }
	providertest.Errors(t, client, []providertest.Failure{
		{Name: "5xx exhausted", Replies: one(500, `{"error": {"code": 500, "message": "An internal error has occurred.", "status": "INTERNAL"}}`), Status: 500, Retryable: true, Requests: 4, Says: []string{"internal error"}},
		{Name: "400", Replies: one(400, `{"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.", "status": "INVALID_ARGUMENT"}}`), Status: 400, Requests: 1, Says: []string{"API key not valid"}},
		{Name: "401", Replies: one(401, `{"error": {"code": 401, "message": "Request had invalid authentication credentials.", "status": "UNAUTHENTICATED"}}`), Status: 401, Requests: 1, Says: []string{"invalid authentication"}},
		{Name: "malformed", Replies: one(200, `{"embeddings": [{"values": [0.1,`), Status: 200, Requests: 1},
		{Name: "wrong count", Replies: one(200, `{"embeddings": []}`), Status: 200, Requests: 1, Says: []string{"got 0 embeddings for 1 texts"}},
		{Name: "wrong dimension", Replies: one(200, `{"embeddings": [{"values": [0.1, 0.2]}]}`), Status: 200, Requests: 1, Says: []string{"embedding 0 has 2 dimensions"}},
	})
}

func TestKeyNeverInErrors(t *testing.T) {
	echo := `{"error": {"code": 403, "message": "key ` + testKey + ` is blocked; see ?key=` + testKey + `", "status": "PERMISSION_DENIED"}}`
	providertest.KeyNeverInErrors(t, client, httpfake.Reply{Status: 403, Body: echo}, httpfake.Reply{Body: `{"embeddings": "` + testKey})
}

func TestNewErrors(t *testing.T) {
	for _, o := range []Options{
		{},
		{APIKey: "k", OutputDimensionality: 4000},
		{APIKey: "k", OutputDimensionality: -1},
		{APIKey: "k", BatchSize: 101},
		{APIKey: "k", BaseURL: "::"},
	} {
		_, err := New(context.Background(), o)
		assert.ErrorIs(t, err, text2sql.ErrInvalidConfig, "%+v", o)
	}
	t.Setenv("GEMINI_API_KEY", testKey)
	_, err := FromEnv(context.Background(), Options{})
	assert.NoError(t, err)
}

// One Embedder serves concurrent calls, each split into batches.
func TestConcurrent(t *testing.T) {
	srv := httpfake.New(t)
	srv.Handle = answer(64)
	e, _ := newEmbedder(t, srv, Options{BatchSize: 3, OutputDimensionality: 64})
	texts := strings.Split("a b c d", " ")
	errs := make(chan error, 6)
	for range 6 {
		go func() {
			_, err := e.EmbedDocuments(context.Background(), texts)
			errs <- err
		}()
	}
	for range 6 {
		assert.NoError(t, <-errs)
	}
	assert.Len(t, srv.Requests(), 12, "two batches a call")
}

// TestConformance runs the Gemini embedder, against a local fake of the
// API that answers each text with a vector computed from it, through the
// Embedder kit.
func TestConformance(t *testing.T) {
	refusal := httpfake.Reply{Status: 400, Body: `{"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.", "status": "INVALID_ARGUMENT"}}`}
	providertest.EmbedderKit(t, refusal, answer(16), func(srv *httpfake.Server) text2sql.Embedder {
		e, _ := newEmbedder(t, srv, Options{OutputDimensionality: 16})
		return e
	})
}

// The time limit of a call (Options.Timeout), as every provider client
// keeps it: see providertest.Timeout.
func TestTimeout(t *testing.T) {
	providertest.Timeout(t, client, httpfake.Reply{Status: 503, Body: `{"error": {"code": 503, "message": "overloaded", "status": "UNAVAILABLE"}}`})
}

// Concurrent calls reuse the Embedder's connections.
func TestConnectionsReused(t *testing.T) {
	srv := httpfake.New(t)
	srv.Handle = answer(768)
	providertest.Concurrent(t, client, srv, 16)
}
