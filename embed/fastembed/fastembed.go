// Package fastembed is a local text2sql.Embedder: the ONNX embedding models
// of the fastembed catalogue (BGE small and base, English and Chinese,
// all-MiniLM-L6-v2) run in-process on ONNX Runtime. No API key, and no text
// leaves the machine.
//
// # Why not github.com/anush008/fastembed-go itself
//
// This package keeps fastembed-go's model catalogue, its archive source
// (the qdrant-fastembed bucket, one .tar.gz per model) and its cache layout
// (CacheDir/<model name>/model_optimized.onnx, tokenizer.json, …), so a
// directory filled by fastembed-go, or by hand from the archive, works
// unchanged. It does not import fastembed-go (v1.0.0, which builds against
// onnxruntime_go v1.27.0 but cannot be used as it is): it opens a new ONNX
// Runtime session inside every call, in unexported code, so the model is
// parsed and optimised again each time and no caller can keep the session;
// it panics on an unusual special_tokens_map.json; it downloads from a
// fixed URL with no offline mode; its tokenizer (sugarme/tokenizer) writes
// to standard output; it prefixes "query: " and "passage: " for every model
// (the E5 convention, not BGE's); it takes no context; and its Destroy
// destroys the process-wide ONNX Runtime environment, under any other model
// of the process (the cross-encoder of rerank/crossencoder). Instead the
// model runs on github.com/yalue/onnxruntime_go through internal/onnxrt
// with one session per Embedder, opened by New and reused by every call,
// and the tokenizer is internal/wordpiece, which reads the model's
// tokenizer.json, never panics and prints nothing; special_tokens_map.json
// is not read.
//
// # Models, prefixes, pooling
//
// A Model gives the directory name, the dimension, the pooling of the
// model's last_hidden_state [batch, sequence, Dimension] into one vector
// per text (the [CLS] row for BGE, the attention-masked mean for MiniLM),
// and the prefixes the model's authors specify: BGE v1.5 embeds queries
// after the instruction "Represent this sentence for searching relevant
// passages: " and documents without one; all-MiniLM-L6-v2 uses none.
// Vectors are L2-normalised, so a dot product is a cosine similarity.
//
// # Files and downloads
//
// New looks for the model in Options.Dir, else CacheDir/<Model.Name>
// (CacheDir defaults to os.UserCacheDir()/text2sql/models). When files are
// missing it downloads Source/<Model.Name>.tar.gz, unless Offline; an
// offline miss or a failed download is a *MissingModelError whose one-line
// message names the directory to fill, the files and the URL. The ONNX
// Runtime library is found as internal/onnxrt.Find says (Options.Library,
// else $ONNXRUNTIME_LIB, else /usr/local/lib/onnxruntime and the system
// directories); .ci/install-onnxruntime.sh installs it.
package fastembed

//go:generate go run ../../internal/tinymodel/gen -embedder testdata/tiny

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/bertmodel"
	"github.com/text2sql-go/text2sql/internal/modelfiles"
	"github.com/text2sql-go/text2sql/internal/onnxrt"
	"github.com/text2sql-go/text2sql/internal/wordpiece"
)

// Pooling is how a text's token vectors become its one vector.
type Pooling int

const (
	// PoolCLS takes the first token's ([CLS]) vector: BGE models.
	PoolCLS Pooling = iota
	// PoolMean averages the vectors of the text's tokens, padding
	// excluded: sentence-transformers models such as all-MiniLM-L6-v2.
	PoolMean
)

// DefaultFile is the ONNX file of a fastembed archive.
const DefaultFile = "model_optimized.onnx"

// Model describes one embedding model.
type Model struct {
	// Name is the model's directory under CacheDir and its archive's name
	// at Source, e.g. "fast-bge-small-en-v1.5". Required.
	Name string
	// Dimension is the vector length: the model's hidden size. Required;
	// New checks it against the model's output.
	Dimension int
	Pooling   Pooling
	// QueryPrefix is put before a query, DocumentPrefix before each
	// document, as the model expects.
	QueryPrefix, DocumentPrefix string
	// File is the ONNX file in the directory (DefaultFile when empty).
	File string
	// MaxLength is the sequence limit in tokens, [CLS] and [SEP] included;
	// longer texts are truncated. 0: the tokenizer.json's truncation
	// length, else 512.
	MaxLength int
}

// bgeQuery is the query instruction of the English BGE models.
const bgeQuery = "Represent this sentence for searching relevant passages: "

// The catalogued models (those fastembed-go v1.0.0 lists).
var (
	// BGESmallENV15 is the default: BAAI/bge-small-en-v1.5, 384 dimensions.
	BGESmallENV15 = Model{Name: "fast-bge-small-en-v1.5", Dimension: 384, Pooling: PoolCLS, QueryPrefix: bgeQuery}
	BGESmallEN    = Model{Name: "fast-bge-small-en", Dimension: 384, Pooling: PoolCLS, QueryPrefix: bgeQuery}
	BGEBaseENV15  = Model{Name: "fast-bge-base-en-v1.5", Dimension: 768, Pooling: PoolCLS, QueryPrefix: bgeQuery}
	BGEBaseEN     = Model{Name: "fast-bge-base-en", Dimension: 768, Pooling: PoolCLS, QueryPrefix: bgeQuery}
	// BGESmallZHV15 is BAAI/bge-small-zh-v1.5 (Chinese), 512 dimensions.
	BGESmallZHV15 = Model{Name: "fast-bge-small-zh-v1.5", Dimension: 512, Pooling: PoolCLS, QueryPrefix: "为这个句子生成表示以用于检索相关文章："}
	// AllMiniLML6V2 is sentence-transformers/all-MiniLM-L6-v2, 384
	// dimensions.
	AllMiniLML6V2 = Model{Name: "fast-all-MiniLM-L6-v2", Dimension: 384, Pooling: PoolMean}
)

// Models returns the catalogued models, the default first.
func Models() []Model {
	return []Model{BGESmallENV15, BGESmallEN, BGEBaseENV15, BGEBaseEN, BGESmallZHV15, AllMiniLML6V2}
}

// ModelNamed returns the catalogued model of that Name.
func ModelNamed(name string) (Model, bool) {
	for _, m := range Models() {
		if m.Name == name {
			return m, true
		}
	}
	return Model{}, false
}

// DefaultSource is the base URL of the model archives.
const DefaultSource = "https://storage.googleapis.com/qdrant-fastembed"

// DefaultBatchSize is the number of texts per model run when
// Options.BatchSize is 0.
const DefaultBatchSize = 32

// MaxBatchSize is the largest Options.BatchSize.
const MaxBatchSize = 1024

// Options configure New. Zero values mean the documented defaults.
type Options struct {
	Model Model // BGESmallENV15 when Name is empty
	// CacheDir holds one directory per model (default
	// os.UserCacheDir()/text2sql/models).
	CacheDir string
	// Dir, when set, is the model's directory itself; CacheDir is then
	// not used.
	Dir string
	// Offline: never download; missing files are a *MissingModelError.
	Offline bool
	// Source is the base URL of the archives (DefaultSource when empty):
	// the model is Source + "/" + Model.Name + ".tar.gz".
	Source string
	// HTTPClient downloads (http.DefaultClient when nil).
	HTTPClient *http.Client
	// Library is the ONNX Runtime shared library (see internal/onnxrt.Find).
	Library string
	// BatchSize is the number of texts per model run, 1 to MaxBatchSize
	// (DefaultBatchSize when 0).
	BatchSize int
	// Threads is the number of threads of one model run (0: one per core).
	Threads int
}

// MissingModelError says the model's files are not in its directory and
// were not downloaded (offline, or the download failed: Err). Its message
// is one line naming the directory, the missing files and the URL.
type MissingModelError = modelfiles.MissingError

// ModelFileError says a model file is there but unusable: not a model ONNX
// Runtime can load, a model with other inputs or outputs than a BERT-class
// embedder, a malformed tokenizer.json, or a dimension other than
// Model.Dimension.
type ModelFileError = modelfiles.FileError

// RuntimeError says the ONNX Runtime library could not be found or loaded.
type RuntimeError = onnxrt.RuntimeError

// ErrClosed is returned by calls on a closed Embedder.
var ErrClosed = errors.New("fastembed: embedder is closed")

// Embedder embeds texts with one model on one ONNX Runtime session, opened
// by New and reused by every call. It is safe for concurrent use.
type Embedder struct {
	model Model
	m     *bertmodel.Model
}

var _ text2sql.Embedder = (*Embedder)(nil)

// New loads the model, downloading it first unless it is in its directory
// or Offline, and opens its session. Errors: text2sql.ErrInvalidConfig
// (a Model without Name or Dimension, BatchSize outside [1, MaxBatchSize],
// negative Threads), *MissingModelError, *ModelFileError, *RuntimeError,
// or the context's error during a download. Call Close to release the
// session.
func New(ctx context.Context, opts Options) (*Embedder, error) {
	if opts.Model.Name == "" && opts.Model.Dimension == 0 {
		opts.Model = BGESmallENV15
	}
	m := opts.Model
	if m.Name == "" || m.Dimension <= 0 {
		return nil, fmt.Errorf("%w: fastembed: model needs a Name and a positive Dimension (got %q, %d)", text2sql.ErrInvalidConfig, m.Name, m.Dimension)
	}
	if m.File == "" {
		m.File = DefaultFile
	}
	source := opts.Source
	if source == "" {
		source = DefaultSource
	}
	e := &Embedder{model: m}
	var err error
	e.m, err = bertmodel.Load(ctx, bertmodel.Spec{
		Package: "fastembed", Name: m.Name, File: m.File, MaxLength: m.MaxLength,
		Dir: opts.Dir, CacheDir: opts.CacheDir,
		Archive: source + "/" + m.Name + ".tar.gz", Offline: opts.Offline, Client: opts.HTTPClient,
		Library: opts.Library, Output: "last_hidden_state",
		BatchSize: opts.BatchSize, DefaultBatch: DefaultBatchSize, MaxBatch: MaxBatchSize, Threads: opts.Threads,
		Closed: ErrClosed,
	}, func(tok *wordpiece.Tokenizer, s *onnxrt.Session) error {
		_, err := e.run(s, tok.Encode([]string{"dimension probe"}))
		return err
	})
	if err != nil {
		return nil, err
	}
	return e, nil
}

// Dir returns the directory the model was loaded from.
func (e *Embedder) Dir() string { return e.m.Dir }

// Close releases the session, after the runs in progress. Later calls
// return ErrClosed; closing twice is a no-op.
func (e *Embedder) Close() error { return e.m.Close() }

// Name returns "fastembed/" + the model's name, e.g.
// "fastembed/fast-bge-small-en-v1.5".
func (e *Embedder) Name() string { return "fastembed/" + e.model.Name }

// Dimension returns the vector length.
func (e *Embedder) Dimension() int { return e.model.Dimension }

// Model returns the model, with its defaults filled in.
func (e *Embedder) Model() Model { return e.model }

// EmbedDocuments returns one L2-normalised vector of Dimension() values per
// text, each embedded after Model.DocumentPrefix, BatchSize texts per
// model run. The context is checked before each run (a run in progress
// finishes). Errors: the context's, ErrClosed, or ONNX Runtime's.
func (e *Embedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([][]float32, 0, len(texts))
	batch := make([]string, 0, min(e.m.Batch, len(texts)))
	for start := 0; start < len(texts); start += e.m.Batch {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		batch = batch[:0]
		for _, t := range texts[start:min(start+e.m.Batch, len(texts))] {
			batch = append(batch, e.model.DocumentPrefix+t)
		}
		vecs, err := e.embed(batch)
		if err != nil {
			return nil, err
		}
		out = append(out, vecs...)
	}
	return out, nil
}

// EmbedQuery returns the L2-normalised vector of Model.QueryPrefix + text.
// Errors as for EmbedDocuments.
func (e *Embedder) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	vecs, err := e.embed([]string{e.model.QueryPrefix + text})
	if err != nil {
		return nil, err
	}
	return vecs[0], nil
}

func (e *Embedder) embed(texts []string) ([][]float32, error) {
	var vecs [][]float32
	err := e.m.Run(func(s *onnxrt.Session) (err error) {
		vecs, err = e.run(s, e.m.Tokenizer.Encode(texts))
		return err
	})
	if err != nil && err != ErrClosed {
		return nil, fmt.Errorf("fastembed: %s: %w", e.model.Name, err)
	}
	return vecs, err
}

// run embeds one encoded batch on session s.
func (e *Embedder) run(s *onnxrt.Session, b *wordpiece.Batch) ([][]float32, error) {
	shape := []int64{int64(b.Rows), int64(b.Length)}
	hidden, outShape, err := s.Run(shape, bertmodel.Inputs(s, b)...)
	if err != nil {
		return nil, err
	}
	dim := e.model.Dimension
	if len(outShape) != 3 || outShape[0] != shape[0] || outShape[1] != shape[1] || outShape[2] != int64(dim) {
		return nil, fmt.Errorf("last_hidden_state has shape %v, want [%d %d %d] (is Dimension %d right for this model?)", outShape, b.Rows, b.Length, dim, dim)
	}
	out := make([][]float32, b.Rows)
	for i := range out {
		v := make([]float32, dim)
		rows := hidden[i*b.Length*dim : (i+1)*b.Length*dim]
		switch e.model.Pooling {
		case PoolMean:
			n := 0
			for j := range b.Length {
				if b.AttentionMask[i*b.Length+j] == 0 {
					continue
				}
				n++
				for k, x := range rows[j*dim : (j+1)*dim] {
					v[k] += x
				}
			}
			for k := range v {
				v[k] /= float32(n)
			}
		default:
			copy(v, rows[:dim])
		}
		out[i] = normalize(v)
	}
	return out, nil
}

// normalize scales v to unit length in place; a zero vector stays zero.
func normalize(v []float32) []float32 {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 {
		return v
	}
	inv := float32(1 / math.Sqrt(sum))
	for i := range v {
		v[i] *= inv
	}
	return v
}
