// Package bertmodel loads a BERT-class ONNX model for embed/fastembed and
// rerank/crossencoder: it checks the run options, finds or downloads the
// model's files (internal/modelfiles), loads ONNX Runtime and the
// WordPiece tokenizer, and keeps one session that concurrent runs share
// until Close.
package bertmodel

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/modelfiles"
	"github.com/text2sql-go/text2sql/internal/onnxrt"
	"github.com/text2sql-go/text2sql/internal/wordpiece"
)

// Spec says which model to load and how to run it.
type Spec struct {
	Package   string // error prefix, e.g. "fastembed"
	Name      string // the model's directory under CacheDir
	File      string // the ONNX file inside the directory, slash-separated
	MaxLength int    // tokenizer limit in tokens; 0: the tokenizer.json's
	// Dir is the model's directory; empty: CacheDir (or
	// modelfiles.DefaultRoot()) joined with Name.
	Dir, CacheDir string
	// Archive or BaseURL is where missing files come from (see
	// modelfiles.Spec); Offline never downloads.
	Archive, BaseURL string
	Offline          bool
	Client           *http.Client
	Library          string // ONNX Runtime library, see onnxrt.Find
	Output           string // the output Run returns, e.g. "logits"
	// BatchSize is the number of texts per run: 0 means DefaultBatch, and
	// it must lie in [1, MaxBatch]. Threads is the number of threads of a
	// run (0: one per core), never negative.
	BatchSize, DefaultBatch, MaxBatch, Threads int
	// Closed is the error of a run after Close (the package's ErrClosed).
	Closed error
}

// Model is a loaded model. It is safe for concurrent use.
type Model struct {
	Dir       string // the directory it was loaded from
	File      string // the ONNX file's path
	Tokenizer *wordpiece.Tokenizer
	Batch     int // texts per run

	closed  error
	mu      sync.RWMutex // held for reading by runs, for writing by Close
	session *onnxrt.Session
}

// bertInputs are the inputs every BERT-class model has; token_type_ids is
// optional (some exports drop it).
var (
	bertInputs   = []string{"input_ids", "attention_mask"}
	optionalType = []string{"token_type_ids"}
)

// Load checks s, ensures the files, loads ONNX Runtime and the tokenizer,
// opens the session and runs probe with the tokenizer on it (a probe that fails means a model
// with other outputs than expected). Errors: text2sql.ErrInvalidConfig
// (BatchSize outside [1, MaxBatch], negative Threads), *modelfiles.MissingError,
// *modelfiles.FileError (tokenizer, model, or probe), *onnxrt.RuntimeError,
// or the context's error during a download; each prefixed by s.Package.
func Load(ctx context.Context, s Spec, probe func(*wordpiece.Tokenizer, *onnxrt.Session) error) (*Model, error) {
	if s.BatchSize == 0 {
		s.BatchSize = s.DefaultBatch
	}
	if s.BatchSize < 1 || s.BatchSize > s.MaxBatch {
		return nil, fmt.Errorf("%w: %s: batch size %d outside [1, %d]", text2sql.ErrInvalidConfig, s.Package, s.BatchSize, s.MaxBatch)
	}
	if s.Threads < 0 {
		return nil, fmt.Errorf("%w: %s: negative thread count %d", text2sql.ErrInvalidConfig, s.Package, s.Threads)
	}
	dir := s.Dir
	if dir == "" {
		root := s.CacheDir
		if root == "" {
			root = modelfiles.DefaultRoot()
		}
		dir = filepath.Join(root, s.Name)
	}
	err := modelfiles.Ensure(ctx, modelfiles.Spec{
		Model: s.Name, Dir: dir, Files: []string{s.File, "tokenizer.json"},
		Archive: s.Archive, BaseURL: s.BaseURL, Offline: s.Offline, Client: s.Client,
	})
	if err == nil {
		err = onnxrt.Init(s.Library)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.Package, err)
	}
	m := &Model{Dir: dir, File: filepath.Join(dir, filepath.FromSlash(s.File)), Batch: s.BatchSize, closed: s.Closed}
	tokPath := filepath.Join(dir, "tokenizer.json")
	data, err := os.ReadFile(tokPath)
	if err == nil {
		m.Tokenizer, err = wordpiece.Load(data, s.MaxLength)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.Package, &modelfiles.FileError{Path: tokPath, Err: err})
	}
	sess, err := Open(m.File, s.Output, s.Threads)
	if err == nil {
		if err = probe(m.Tokenizer, sess); err != nil {
			sess.Close()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.Package, &modelfiles.FileError{Path: m.File, Err: err})
	}
	m.session = sess
	return m, nil
}

// Open opens a session of the BERT-class model in file that returns
// output, with threads threads per run (0: one per core).
func Open(file, output string, threads int) (*onnxrt.Session, error) {
	return onnxrt.Open(file, bertInputs, optionalType, output, threads)
}

// Run calls f with the session, or returns the Closed error after Close.
func (m *Model) Run(f func(*onnxrt.Session) error) error {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.session == nil {
		return m.closed
	}
	return f(m.session)
}

// Session returns the open session (nil after Close), for tests.
func (m *Model) Session() *onnxrt.Session {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.session
}

// Close releases the session, after the runs in progress; closing twice
// is a no-op.
func (m *Model) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.session == nil {
		return nil
	}
	err := m.session.Close()
	m.session = nil
	return err
}

// Inputs returns the batch's input tensors in the session's order:
// input_ids, attention_mask, and token_type_ids when the model has it.
func Inputs(s *onnxrt.Session, b *wordpiece.Batch) [][]int64 {
	in := [][]int64{b.IDs, b.AttentionMask}
	if len(s.Inputs()) == 3 {
		in = append(in, b.TypeIDs)
	}
	return in
}
