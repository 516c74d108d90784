// Package gemini is a text2sql.Embedder backed by the Gemini API's
// gemini-embedding-001 model, through the google.golang.org/genai SDK.
//
// Texts are sent in batches to POST
// {BaseURL}/v1beta/models/{Model}:batchEmbedContents, one request per batch,
// each item carrying taskType RETRIEVAL_DOCUMENT (EmbedDocuments) or
// RETRIEVAL_QUERY (EmbedQuery) and outputDimensionality. Retries and errors
// follow the rules of llm/gemini: up to MaxRetries retries on 429, 5xx or a
// connection failure, exponential backoff with jitter, the server's
// Retry-After honoured, the context obeyed, and the API key never in an
// error.
//
// Vectors are normalised to unit length (L2 norm 1). Gemini only normalises
// the full 3072-dimension output; truncated ones (768, 1536) are not, and
// Google asks callers to normalise them. Unit vectors make the dot product
// equal to the cosine similarity.
package gemini

import (
	"cmp"
	"context"
	"fmt"
	"os"

	"google.golang.org/genai"

	"github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/geminiapi"
	"github.com/text2sql-go/text2sql/internal/vectors"
	"github.com/text2sql-go/text2sql/provider"
)

// Defaults of Options.
const (
	DefaultModel     = "gemini-embedding-001"
	DefaultDimension = 768
	// DefaultBatchSize is the batchEmbedContents limit of texts per request.
	DefaultBatchSize = 100
	DefaultBaseURL   = geminiapi.DefaultBaseURL
)

// The task types sent with each text.
const (
	TaskDocument = "RETRIEVAL_DOCUMENT" // EmbedDocuments
	TaskQuery    = "RETRIEVAL_QUERY"    // EmbedQuery
)

// EnvAPIKey is the environment variable FromEnv reads the API key from.
const EnvAPIKey = "GEMINI_API_KEY"

// Options configure an Embedder. Only APIKey is required.
type Options struct {
	// APIKey is the Gemini API key. Required; never appears in errors.
	APIKey string
	// Model is the embedding model ID (DefaultModel when empty).
	Model string
	// OutputDimensionality is the vector length asked for and returned by
	// Dimension: 768 when 0. gemini-embedding-001 accepts 128 to 3072
	// (768, 1536 and 3072 are recommended).
	OutputDimensionality int
	// BatchSize is the number of texts per request, 1 to 100 (100 when 0).
	BatchSize int
	// BaseURL is the API root, without the version (DefaultBaseURL when
	// empty).
	BaseURL string
	// HTTP sets the client, the retries and the time limit of each
	// call (see provider.HTTP; the zero value is the default).
	provider.HTTP
}

// Embedder is a text2sql.Embedder over the Gemini API. It is safe for
// concurrent use.
type Embedder struct {
	client *geminiapi.Client
	model  string
	dim    int
	batch  int
}

var _ text2sql.Embedder = (*Embedder)(nil)

// New returns an Embedder. It makes no request. It returns an error
// wrapping text2sql.ErrInvalidConfig when APIKey is empty, BaseURL is not
// an absolute http(s) URL, OutputDimensionality is outside [1, 3072] or
// BatchSize outside [1, 100] (zero values take the defaults).
func New(ctx context.Context, opts Options) (*Embedder, error) {
	dim := opts.OutputDimensionality
	if dim == 0 {
		dim = DefaultDimension
	}
	if dim < 1 || dim > 3072 {
		return nil, fmt.Errorf("%w: gemini embedder: OutputDimensionality %d is outside [1, 3072]", text2sql.ErrInvalidConfig, dim)
	}
	batch := opts.BatchSize
	if batch == 0 {
		batch = DefaultBatchSize
	}
	if batch < 1 || batch > 100 {
		return nil, fmt.Errorf("%w: gemini embedder: BatchSize %d is outside [1, 100]", text2sql.ErrInvalidConfig, batch)
	}
	c, err := geminiapi.New(ctx, geminiapi.Config{APIKey: opts.APIKey, BaseURL: opts.BaseURL, HTTP: opts.HTTP})
	if err != nil {
		return nil, err
	}
	model := cmp.Or(opts.Model, DefaultModel)
	return &Embedder{client: c, model: model, dim: dim, batch: batch}, nil
}

// FromEnv is New with Options.APIKey taken from the GEMINI_API_KEY
// environment variable when opts.APIKey is empty.
func FromEnv(ctx context.Context, opts Options) (*Embedder, error) {
	if opts.APIKey == "" {
		opts.APIKey = os.Getenv(EnvAPIKey)
	}
	return New(ctx, opts)
}

// Name returns "gemini/" + the model ID, e.g. "gemini/gemini-embedding-001".
func (e *Embedder) Name() string { return "gemini/" + e.model }

// Dimension returns the length of every vector: OutputDimensionality.
func (e *Embedder) Dimension() int { return e.dim }

// EmbedDocuments returns one unit-length vector of Dimension() float32s per
// text, in order, embedded with task type RETRIEVAL_DOCUMENT. It sends
// ceil(len(texts)/BatchSize) requests, one after the other; no texts means
// no request and an empty result.
//
// Errors: an error wrapping ctx.Err() when ctx ends; a *text2sql.ModelError
// with Timeout set when a request outlasts Options.Timeout (errors.Is with
// context.DeadlineExceeded holds); otherwise a
// *text2sql.ModelError (errors.Is(err, text2sql.ErrModel)) with Provider
// "gemini" for a failed request, or with StatusCode 200 when the response
// holds the wrong number of vectors or a vector of the wrong length. No
// partial result is returned.
func (e *Embedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	return vectors.Batched(ctx, texts, e.batch, func(ctx context.Context, batch []string) ([][]float32, error) {
		return e.embed(ctx, batch, TaskDocument)
	})
}

// EmbedQuery returns the unit-length vector of a search query, embedded
// with task type RETRIEVAL_QUERY. Errors are those of EmbedDocuments.
func (e *Embedder) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	vs, err := e.embed(ctx, []string{text}, TaskQuery)
	if err != nil {
		return nil, err
	}
	return vs[0], nil
}

func (e *Embedder) embed(ctx context.Context, texts []string, task string) ([][]float32, error) {
	contents := make([]*genai.Content, len(texts))
	for i, t := range texts {
		contents[i] = &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: t}}}
	}
	dim := int32(e.dim)
	cfg := &genai.EmbedContentConfig{TaskType: task, OutputDimensionality: &dim}
	var out [][]float32
	err := e.client.Do(ctx, func(ctx context.Context) error {
		resp, err := e.client.GenAI.Models.EmbedContent(ctx, e.model, contents, cfg)
		if err != nil {
			return err
		}
		if resp == nil {
			resp = &genai.EmbedContentResponse{} // no vectors
		}
		out, err = vectors.Collect(geminiapi.Provider, len(resp.Embeddings), len(texts), e.dim, func(i int) (int, []float32) {
			if emb := resp.Embeddings[i]; emb != nil {
				return i, emb.Values
			}
			return i, nil
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
