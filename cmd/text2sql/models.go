package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/embed/fastembed"
	"github.com/text2sql-go/text2sql/embed/gemini"
	"github.com/text2sql-go/text2sql/embed/hashing"
	"github.com/text2sql-go/text2sql/embed/openai"
	"github.com/text2sql-go/text2sql/internal/onnxrt"
	"github.com/text2sql-go/text2sql/knowledge"
	"github.com/text2sql-go/text2sql/rerank/crossencoder"
	llmrerank "github.com/text2sql-go/text2sql/rerank/llm"
	"github.com/text2sql-go/text2sql/retriever"
	"github.com/text2sql-go/text2sql/schema"
)

// modelFlags choose the embedder, the reranker and the value index of
// retrieval.
type modelFlags struct {
	embedder       string // --embedder: one of embedderNames
	embeddingModel string // --embedding-model: the embedder's model ("": its default)
	reranker       string // --reranker: one of rerankerNames
	modelDir       string // --model-dir: the local models' directory
	offline        bool   // --offline: never download a model
	noValues       bool   // --no-values: no value index (see valueIndex)
}

// The values of --embedder and --reranker, in the order help lists them;
// newEmbedder and newReranker have one case per value.
var (
	embedderNames = []string{"hashing", "fastembed", "gemini", "openai"}
	rerankerNames = []string{"none", "cross-encoder", "llm"}
)

func (m *modelFlags) bind(root *cobra.Command) {
	f := root.PersistentFlags()
	f.StringVar(&m.embedder, "embedder", "hashing", "retrieval embedder: hashing (offline, no model), fastembed (local ONNX model, default BGE-small-en v1.5), gemini or openai (hosted; their API keys)")
	f.StringVar(&m.embeddingModel, "embedding-model", "", "the embedder's model: a fastembed catalogue name (fast-bge-small-en-v1.5, fast-bge-base-en-v1.5, fast-all-MiniLM-L6-v2, …) or a hosted model ID (default: the embedder's default)")
	f.StringVar(&m.reranker, "reranker", "none", "reranker of the retrieved candidates: none, cross-encoder (local ONNX model, MS MARCO MiniLM-L-6-v2), or llm (schema selection by the --provider model, one call per question)")
	f.StringVar(&m.modelDir, "model-dir", "", "directory of the local models, one sub-directory per model (default: the user cache directory's text2sql/models)")
	f.BoolVar(&m.noValues, "no-values", false, "do not index the cell values of text columns (the index links the tables of the values a question names and shows the model the matched values as quoted data; keys, identifiers, secrets and contact details are never read)")
	f.BoolVar(&m.offline, "offline", false, "never download a local model: a model missing from --model-dir is an error saying what to download (the ONNX Runtime "+onnxrt.Version+" library: $"+onnxrt.LibraryEnv+", else "+onnxrt.InstallDir+" and the system library directories)")
}

// validate checks the values, as usage errors.
func (m *modelFlags) validate() error {
	for _, f := range []struct {
		flag, v string
		names   []string
	}{{"embedder", m.embedder, embedderNames}, {"reranker", m.reranker, rerankerNames}} {
		ok := false
		for _, n := range f.names {
			ok = ok || n == f.v
		}
		if !ok {
			return &exitErr{code: exitUsage, err: fmt.Errorf("--%s %q: use one of %v", f.flag, f.v, f.names)}
		}
	}
	if m.embeddingModel != "" && m.embedder == "fastembed" {
		if _, ok := fastembed.ModelNamed(m.embeddingModel); !ok {
			return &exitErr{code: exitUsage, err: fmt.Errorf("--embedding-model %q is not in the fastembed catalogue (%s)", m.embeddingModel, fastembedNames())}
		}
	}
	if m.embeddingModel != "" && m.embedder == "hashing" {
		return &exitErr{code: exitUsage, err: errors.New("--embedding-model: the hashing embedder has no model")}
	}
	return nil
}

func fastembedNames() string {
	s := ""
	for i, m := range fastembed.Models() {
		if i > 0 {
			s += ", "
		}
		s += m.Name
	}
	return s
}

// usesONNX reports whether the chosen embedder or reranker runs on ONNX
// Runtime.
func (m *modelFlags) usesONNX() bool {
	return m.embedder == "fastembed" || m.reranker == "cross-encoder"
}

// newEmbedder returns the embedder --embedder names and, for a local
// model, what releases it (nil otherwise). A local model missing from
// --model-dir offline, or whose download fails, is an error whose one line
// says what to download and where.
func (o *options) newEmbedder(ctx context.Context) (text2sql.Embedder, io.Closer, error) {
	m := o.models
	switch m.embedder {
	case "hashing":
		e, err := hashing.New(0)
		return e, nil, err
	case "fastembed":
		model, _ := fastembed.ModelNamed(m.embeddingModel) // validated; zero: the default
		e, err := fastembed.New(ctx, fastembed.Options{Model: model, CacheDir: m.modelDir, Offline: m.offline})
		if err != nil {
			return nil, nil, err
		}
		return e, e, nil
	case "gemini":
		e, err := gemini.FromEnv(ctx, gemini.Options{Model: m.embeddingModel, HTTP: o.providerHTTP()})
		return e, nil, err
	case "openai":
		e, err := openai.FromEnv(openai.Options{Model: m.embeddingModel, BaseURL: o.baseURL, HTTP: o.providerHTTP()})
		return e, nil, err
	}
	return nil, nil, &exitErr{code: exitUsage, err: fmt.Errorf("--embedder %q: use one of %v", m.embedder, embedderNames)}
}

// reranker is a retriever.Reranker with the name /health shows.
type reranker interface {
	retriever.Reranker
	Name() string
}

// newReranker returns the reranker --reranker names (nil for none) and
// what releases it (nil when nothing needs releasing).
func (o *options) newReranker(ctx context.Context, db *schema.Database, kb *knowledge.Base) (reranker, io.Closer, error) {
	m := o.models
	switch m.reranker {
	case "none":
		return nil, nil, nil
	case "llm":
		model, err := o.newModel(ctx)
		if err != nil {
			return nil, nil, err
		}
		if model == nil {
			return nil, nil, &exitErr{code: exitUsage, err: errors.New("--reranker llm: no model provider configured (set --provider and its API key, or --base-url)")}
		}
		r, err := llmrerank.New(model, llmrerank.Options{Schema: db, Knowledge: kb})
		return r, nil, err
	case "cross-encoder":
		r, err := crossencoder.New(ctx, crossencoder.Options{CacheDir: m.modelDir, Offline: m.offline})
		if err != nil {
			return nil, nil, err
		}
		return r, r, nil
	}
	return nil, nil, &exitErr{code: exitUsage, err: fmt.Errorf("--reranker %q: use one of %v", m.reranker, rerankerNames)}
}
