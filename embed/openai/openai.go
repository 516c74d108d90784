// Package openai is a text2sql.Embedder over the Embeddings API of OpenAI
// and of OpenAI-compatible servers (Ollama, vLLM, LM Studio, llama.cpp
// server, gateways), through the github.com/openai/openai-go/v3 SDK.
//
// Texts are sent in batches to POST {BaseURL}/embeddings as
// {"model": ..., "input": [texts...], "encoding_format": "float"}, plus
// "dimensions" for text-embedding-3-* models. Retries and errors follow the
// rules of llm/openai: up to MaxRetries retries on 429, 5xx or a connection
// failure, exponential backoff with jitter, the server's Retry-After
// honoured, the context obeyed, and the API key never in an error.
//
// Vectors are normalised to unit length (L2 norm 1). OpenAI's are already;
// local models' often are not, and unit vectors make the dot product equal
// to the cosine similarity.
package openai

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3"

	"github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/openaiapi"
	"github.com/text2sql-go/text2sql/internal/vectors"
	"github.com/text2sql-go/text2sql/provider"
)

// Defaults of Options.
const (
	DefaultModel     = "text-embedding-3-small"
	DefaultBatchSize = 100
	DefaultBaseURL   = openaiapi.DefaultBaseURL
	// MaxBatchSize is OpenAI's limit of inputs per request.
	MaxBatchSize = 2048
)

// Environment variables read by FromEnv.
const (
	EnvAPIKey  = openaiapi.EnvAPIKey
	EnvBaseURL = openaiapi.EnvBaseURL
)

// nativeDims are the output sizes of OpenAI's embedding models.
var nativeDims = map[string]int{
	"text-embedding-3-small": 1536,
	"text-embedding-3-large": 3072,
	"text-embedding-ada-002": 1536,
}

// Options configure an Embedder.
type Options struct {
	// APIKey is sent as a bearer token; empty sends no Authorization
	// header (local servers). Never appears in errors.
	APIKey string
	// Model is the embedding model ID (DefaultModel when empty), e.g.
	// "text-embedding-3-large" or, on Ollama, "nomic-embed-text".
	Model string
	// Dimension is the vector length. 0 means the native size of OpenAI's
	// models (1536 for text-embedding-3-small and ada-002, 3072 for
	// text-embedding-3-large) and is an error for any other model. For
	// text-embedding-3-* models it is sent as "dimensions" (shortened
	// vectors); for others it must equal the model's output size.
	Dimension int
	// BatchSize is the number of texts per request, 1 to 2048 (100 when 0).
	BatchSize int
	// BaseURL is the API root including the version path (DefaultBaseURL
	// when empty), e.g. "http://localhost:11434/v1".
	BaseURL string
	// HTTP sets the client, the retries and the time limit of each
	// call (see provider.HTTP; the zero value is the default).
	provider.HTTP
}

// Embedder is a text2sql.Embedder over an OpenAI-compatible Embeddings API.
// It is safe for concurrent use.
type Embedder struct {
	client   *openaiapi.Client
	svc      openai.EmbeddingService
	model    string
	dim      int
	sendDims bool
	batch    int
}

var _ text2sql.Embedder = (*Embedder)(nil)

// New returns an Embedder. It makes no request. It returns an error
// wrapping text2sql.ErrInvalidConfig when BaseURL is not an absolute
// http(s) URL, Dimension is negative or missing for a model of unknown
// size, or BatchSize is outside [1, 2048] (zero values take the defaults).
func New(opts Options) (*Embedder, error) {
	model := cmp.Or(opts.Model, DefaultModel)
	dim := opts.Dimension
	if dim == 0 {
		dim = nativeDims[model]
	}
	if dim <= 0 {
		return nil, fmt.Errorf("%w: openai embedder: Dimension is required for model %q", text2sql.ErrInvalidConfig, model)
	}
	batch := opts.BatchSize
	if batch == 0 {
		batch = DefaultBatchSize
	}
	if batch < 1 || batch > MaxBatchSize {
		return nil, fmt.Errorf("%w: openai embedder: BatchSize %d is outside [1, %d]", text2sql.ErrInvalidConfig, batch, MaxBatchSize)
	}
	c, err := openaiapi.New(openaiapi.Config{APIKey: opts.APIKey, BaseURL: opts.BaseURL, HTTP: opts.HTTP})
	if err != nil {
		return nil, err
	}
	return &Embedder{
		client:   c,
		svc:      openai.NewEmbeddingService(c.Options...),
		model:    model,
		dim:      dim,
		sendDims: strings.HasPrefix(model, "text-embedding-3"),
		batch:    batch,
	}, nil
}

// FromEnv is New with Options.APIKey taken from OPENAI_API_KEY and
// Options.BaseURL from OPENAI_BASE_URL when they are empty.
func FromEnv(opts Options) (*Embedder, error) {
	opts.APIKey, opts.BaseURL = openaiapi.FromEnv(opts.APIKey, opts.BaseURL)
	return New(opts)
}

// Name returns "openai/" + the model ID, e.g. "openai/text-embedding-3-small".
func (e *Embedder) Name() string { return "openai/" + e.model }

// Dimension returns the length of every vector.
func (e *Embedder) Dimension() int { return e.dim }

// EmbedDocuments returns one unit-length vector of Dimension() float32s per
// text, in order. It sends ceil(len(texts)/BatchSize) requests, one after
// the other; no texts means no request and an empty result.
//
// Errors: an error wrapping ctx.Err() when ctx ends; a *text2sql.ModelError
// with Timeout set when a request outlasts Options.Timeout (errors.Is with
// context.DeadlineExceeded holds); otherwise a
// *text2sql.ModelError (errors.Is(err, text2sql.ErrModel)) with Provider
// "openai" for a failed request, or with StatusCode 200 when the response
// holds the wrong number of vectors, a bad index, or a vector of the wrong
// length. No partial result is returned.
func (e *Embedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	return vectors.Batched(ctx, texts, e.batch, e.embed)
}

// EmbedQuery returns the unit-length vector of a search query (the same
// embedding as a document: the Embeddings API has no task types). Errors
// are those of EmbedDocuments.
func (e *Embedder) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	vs, err := e.embed(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	return vs[0], nil
}

func (e *Embedder) embed(ctx context.Context, texts []string) ([][]float32, error) {
	params := openai.EmbeddingNewParams{
		Model:          e.model,
		Input:          openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: texts},
		EncodingFormat: openai.EmbeddingNewParamsEncodingFormatFloat,
	}
	if e.sendDims {
		params.Dimensions = openai.Int(int64(e.dim))
	}
	var out [][]float32
	err := e.client.Do(ctx, func(ctx context.Context) error {
		resp, err := e.svc.New(ctx, params)
		if err != nil {
			return err
		}
		if resp == nil {
			resp = &openai.CreateEmbeddingResponse{} // no vectors
		}
		out, err = vectors.Collect(openaiapi.Provider, len(resp.Data), len(texts), e.dim, func(k int) (int, []float64) {
			d := resp.Data[k]
			if !d.JSON.Index.Valid() {
				return k, d.Embedding // some compatible servers omit the index
			}
			return int(d.Index), d.Embedding
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
