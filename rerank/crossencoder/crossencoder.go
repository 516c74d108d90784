// Package crossencoder is a retriever.Reranker that reads the question and
// each candidate together with a cross-encoder, the MS MARCO MiniLM models
// (cross-encoder/ms-marco-MiniLM-L-6-v2 and L-12-v2 as ONNX exports) or any
// BERT-class model with the same interface: inputs input_ids,
// attention_mask and optionally token_type_ids, int64 [batch, sequence],
// of "[CLS] question [SEP] candidate [SEP]" pairs; output logits, float32
// [batch, 1], higher meaning more relevant. It runs in-process on ONNX
// Runtime with one session per Reranker, opened by New and reused by every
// call; the tokenizer is the model's tokenizer.json (WordPiece), read by
// internal/wordpiece.
//
// Files follow the rules of embed/fastembed: the model lives in
// Options.Dir, else CacheDir/<Model.Name> (CacheDir defaults to
// os.UserCacheDir()/text2sql/models, shared with embed/fastembed); missing
// files are downloaded one by one from Model.Source unless Offline, and an
// offline miss or failed download is a *MissingModelError whose one-line
// message names the directory, the files and their URLs. The ONNX Runtime
// library is found as internal/onnxrt.Find says (Options.Library, else
// $ONNXRUNTIME_LIB, else /usr/local/lib/onnxruntime and the system
// directories).
package crossencoder

//go:generate go run ../../internal/tinymodel/gen -cross-encoder testdata/tiny

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/bertmodel"
	"github.com/text2sql-go/text2sql/internal/modelfiles"
	"github.com/text2sql-go/text2sql/internal/onnxrt"
	"github.com/text2sql-go/text2sql/internal/wordpiece"
	"github.com/text2sql-go/text2sql/retriever"
)

// DefaultFile is the ONNX file of a Hugging Face ONNX export.
const DefaultFile = "onnx/model.onnx"

// Model describes one cross-encoder.
type Model struct {
	// Name is the model's directory under CacheDir. Required.
	Name string
	// Source is the base URL of the model's files: a file's URL is Source
	// + "/" + its path in the directory. Empty: never downloaded.
	Source string
	// File is the ONNX file in the directory (DefaultFile when empty).
	File string
	// MaxLength is the limit of a pair in tokens, special tokens included;
	// longer pairs lose tokens from the end of the longer text. 0: the
	// tokenizer.json's truncation length, else 512.
	MaxLength int
}

// The catalogued models: ONNX exports of the sentence-transformers MS MARCO
// cross-encoders on Hugging Face.
var (
	// MiniLML6 is the default: cross-encoder/ms-marco-MiniLM-L-6-v2 (6
	// layers, 22.7M parameters, about 90 MB).
	MiniLML6 = Model{Name: "ms-marco-MiniLM-L-6-v2", Source: "https://huggingface.co/Xenova/ms-marco-MiniLM-L-6-v2/resolve/main"}
	// MiniLML12 is cross-encoder/ms-marco-MiniLM-L-12-v2 (12 layers, more
	// accurate, about twice as slow).
	MiniLML12 = Model{Name: "ms-marco-MiniLM-L-12-v2", Source: "https://huggingface.co/Xenova/ms-marco-MiniLM-L-12-v2/resolve/main"}
)

// Models returns the catalogued models, the default first.
func Models() []Model { return []Model{MiniLML6, MiniLML12} }

// ModelNamed returns the catalogued model of that Name.
func ModelNamed(name string) (Model, bool) {
	for _, m := range Models() {
		if m.Name == name {
			return m, true
		}
	}
	return Model{}, false
}

// DefaultBatchSize is the number of pairs per model run when
// Options.BatchSize is 0.
const DefaultBatchSize = 16

// MaxBatchSize is the largest Options.BatchSize.
const MaxBatchSize = 1024

// Options configure New. Zero values mean the documented defaults.
type Options struct {
	Model Model // MiniLML6 when Name is empty
	// CacheDir holds one directory per model (default
	// os.UserCacheDir()/text2sql/models).
	CacheDir string
	// Dir, when set, is the model's directory itself; CacheDir is then
	// not used.
	Dir string
	// Offline: never download; missing files are a *MissingModelError.
	Offline bool
	// HTTPClient downloads (http.DefaultClient when nil).
	HTTPClient *http.Client
	// Library is the ONNX Runtime shared library (see internal/onnxrt.Find).
	Library string
	// BatchSize is the number of pairs per model run, 1 to MaxBatchSize
	// (DefaultBatchSize when 0).
	BatchSize int
	// Threads is the number of threads of one model run (0: one per core).
	Threads int
}

// MissingModelError says the model's files are not in its directory and
// were not downloaded (offline, no Source, or the download failed: Err).
// Its message is one line naming the directory, the files and the URLs.
type MissingModelError = modelfiles.MissingError

// ModelFileError says a model file is there but unusable: not a model ONNX
// Runtime can load, a model with other inputs or outputs than a
// cross-encoder, or a malformed tokenizer.json.
type ModelFileError = modelfiles.FileError

// RuntimeError says the ONNX Runtime library could not be found or loaded.
type RuntimeError = onnxrt.RuntimeError

// ErrClosed is returned by calls on a closed Reranker.
var ErrClosed = errors.New("crossencoder: reranker is closed")

// Reranker scores (question, item text) pairs with one model on one ONNX
// Runtime session. It is safe for concurrent use.
type Reranker struct {
	model Model
	m     *bertmodel.Model
}

var _ retriever.Reranker = (*Reranker)(nil)

// New loads the model, downloading missing files first unless Offline, and
// opens its session. Errors: text2sql.ErrInvalidConfig (BatchSize outside
// [1, MaxBatchSize], negative Threads), *MissingModelError,
// *ModelFileError, *RuntimeError, or the context's error during a
// download. Call Close to release the session.
func New(ctx context.Context, opts Options) (*Reranker, error) {
	m := opts.Model
	if m.Name == "" {
		m = MiniLML6
	}
	if m.File == "" {
		m.File = DefaultFile
	}
	r := &Reranker{model: m}
	var err error
	r.m, err = bertmodel.Load(ctx, bertmodel.Spec{
		Package: "crossencoder", Name: m.Name, File: m.File, MaxLength: m.MaxLength,
		Dir: opts.Dir, CacheDir: opts.CacheDir,
		BaseURL: m.Source, Offline: opts.Offline || m.Source == "", Client: opts.HTTPClient,
		Library: opts.Library, Output: "logits",
		BatchSize: opts.BatchSize, DefaultBatch: DefaultBatchSize, MaxBatch: MaxBatchSize, Threads: opts.Threads,
		Closed: ErrClosed,
	}, func(tok *wordpiece.Tokenizer, s *onnxrt.Session) error {
		_, err := r.run(s, tok.EncodePairs("probe", []string{"probe"}))
		return err
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// Model returns the model, with its defaults filled in.
func (r *Reranker) Model() Model { return r.model }

// Dir returns the directory the model was loaded from.
func (r *Reranker) Dir() string { return r.m.Dir }

// Name returns "cross-encoder/" + the model's name, e.g.
// "cross-encoder/ms-marco-MiniLM-L-6-v2".
func (r *Reranker) Name() string { return "cross-encoder/" + r.model.Name }

// Scores returns the model's logit for each (question, texts[i]) pair,
// BatchSize pairs per model run; higher is more relevant (MS MARCO MiniLM
// logits run from about -11 to 11). The context is checked before each run.
// Errors: the context's, ErrClosed, or ONNX Runtime's.
func (r *Reranker) Scores(ctx context.Context, question string, texts []string) ([]float64, error) {
	out := make([]float64, 0, len(texts))
	for start := 0; start < len(texts); start += r.m.Batch {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		scores, err := r.score(question, texts[start:min(start+r.m.Batch, len(texts))])
		if err != nil {
			return nil, err
		}
		out = append(out, scores...)
	}
	return out, nil
}

// Rerank returns all items, best first, each with Score set to its logit
// (see Scores); items of equal score keep their order. The caller's slice
// is not modified. Errors as for Scores.
func (r *Reranker) Rerank(ctx context.Context, question string, items []text2sql.Item) ([]text2sql.Item, error) {
	texts := make([]string, len(items))
	for i, it := range items {
		texts[i] = it.Text
	}
	scores, err := r.Scores(ctx, question, texts)
	if err != nil {
		return nil, err
	}
	out := slices.Clone(items)
	for i := range out {
		out[i].Score = scores[i]
	}
	slices.SortStableFunc(out, func(a, b text2sql.Item) int { return cmp.Compare(b.Score, a.Score) })
	return out, nil
}

// Close releases the session, after the runs in progress. Later calls
// return ErrClosed; closing twice is a no-op.
func (r *Reranker) Close() error { return r.m.Close() }

func (r *Reranker) score(question string, texts []string) ([]float64, error) {
	var scores []float64
	err := r.m.Run(func(s *onnxrt.Session) (err error) {
		scores, err = r.run(s, r.m.Tokenizer.EncodePairs(question, texts))
		return err
	})
	if err != nil && err != ErrClosed {
		return nil, fmt.Errorf("crossencoder: %s: %w", r.model.Name, err)
	}
	return scores, err
}

// run scores one encoded batch of pairs on session s.
func (r *Reranker) run(s *onnxrt.Session, b *wordpiece.Batch) ([]float64, error) {
	logits, shape, err := s.Run([]int64{int64(b.Rows), int64(b.Length)}, bertmodel.Inputs(s, b)...)
	if err != nil {
		return nil, err
	}
	if len(shape) != 2 || shape[0] != int64(b.Rows) || shape[1] != 1 {
		return nil, fmt.Errorf("logits have shape %v, want [%d 1] (one relevance logit per pair)", shape, b.Rows)
	}
	out := make([]float64, len(logits))
	for i, l := range logits {
		out[i] = float64(l)
	}
	return out, nil
}
