package retriever

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	chromem "github.com/philippgille/chromem-go"
	text2sql "github.com/text2sql-go/text2sql"
)

// Names of the chromem-go collections a ChromemStore uses.
const (
	chromemDocs = "text2sql-index"
	chromemMeta = "text2sql-index-meta"
	markerID    = "index"
)

// errChromemEmbed is returned by the embedding function given to chromem-go:
// the retriever always passes its own vectors, so chromem must never embed.
var errChromemEmbed = errors.New("retriever: chromem store: embedding by chromem-go is disabled; vectors come from the retriever's Embedder")

func refuseEmbedding(context.Context, string) ([]float32, error) { return nil, errChromemEmbed }

// ChromemStore is the default persistent Store: a chromem-go
// (github.com/philippgille/chromem-go) database in a directory, one gob file
// per document, loaded into memory on open and searched exhaustively by
// cosine similarity. It holds two collections: "text2sql-index" with the
// documents (metadata "kind") and "text2sql-index-meta" whose collection
// metadata and single marker document hold the fingerprint; the marker is
// written after the last document, so a build interrupted half-way leaves
// no fingerprint.
//
// One directory holds one index: give each database its own directory.
// Two processes must not build into the same directory at once.
// ChromemStore is safe for concurrent use.
type ChromemStore struct {
	dir       string
	db        *chromem.DB
	mu        sync.RWMutex
	col       *chromem.Collection
	dim       int   // vector length of the stored documents, 0 when unknown
	recovered error // why the index found at open was discarded; nil when it was read
}

var _ Store = (*ChromemStore)(nil)

// OpenChromem opens, or creates, the persistent chromem-go database in dir
// (created with mode 0700 if missing). Existing documents are loaded into
// memory. The index is derived data, so an index that cannot be read — a
// file truncated by a process killed while it wrote, or overwritten — is
// not an outage: its files are removed and the store opens empty (the
// retriever then rebuilds it), and Recovered says why. OpenChromem fails
// when dir is empty or is not a directory, or when the damaged files
// cannot be removed.
func OpenChromem(dir string) (*ChromemStore, error) {
	if dir == "" {
		return nil, fmt.Errorf("%w: retriever: chromem store: empty directory", text2sql.ErrInvalidConfig)
	}
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		return nil, fmt.Errorf("retriever: chromem store %s: not a directory", dir)
	}
	var recovered error
	db, err := chromem.NewPersistentDB(dir, false)
	if err != nil {
		// Only chromem-go's own files (one directory per collection) are
		// removed: dir may be one the user named.
		recovered = err
		if err := removeCollections(dir); err != nil {
			return nil, fmt.Errorf("retriever: chromem store %s: unreadable (%v), and clearing it failed: %w", dir, recovered, err)
		}
		if db, err = chromem.NewPersistentDB(dir, false); err != nil {
			return nil, fmt.Errorf("retriever: chromem store %s: %w", dir, err)
		}
	}
	col, err := db.GetOrCreateCollection(chromemDocs, nil, refuseEmbedding)
	if err != nil {
		return nil, fmt.Errorf("retriever: chromem store %s: %w", dir, err)
	}
	s := &ChromemStore{dir: dir, db: db, col: col, recovered: recovered}
	if meta := db.GetCollection(chromemMeta, refuseEmbedding); meta != nil {
		if doc, err := meta.GetByID(context.Background(), markerID); err == nil {
			s.dim, _ = strconv.Atoi(doc.Metadata["dimension"])
		}
	}
	return s, nil
}

// Recovered returns why the index found in the directory was discarded
// at open (chromem-go's read error), or nil when it was read as it was.
// Hosts warn with it: the index is rebuilt, which takes the time of a
// first build.
func (s *ChromemStore) Recovered() error { return s.recovered }

// removeCollections removes the collection directories chromem-go keeps
// in dir (a directory each, holding .gob files), and nothing else.
func removeCollections(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		sub := filepath.Join(dir, e.Name())
		files, err := os.ReadDir(sub)
		if err != nil {
			return err
		}
		ours := true
		for _, f := range files {
			ours = ours && !f.IsDir() && strings.HasSuffix(f.Name(), ".gob")
		}
		if ours {
			if err := os.RemoveAll(sub); err != nil {
				return err
			}
		}
	}
	return nil
}

// Dir returns the directory of the database.
func (s *ChromemStore) Dir() string { return s.dir }

// Add implements Store. Documents are written to disk as they are added.
func (s *ChromemStore) Add(ctx context.Context, records []Record) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	docs := make([]chromem.Document, 0, len(records))
	for _, r := range records {
		n2, err := checkRecord("chromem store", r, &s.dim)
		if err != nil {
			return err
		}
		if n2 == 0 {
			continue // chromem would divide by zero
		}
		v := make([]float32, len(r.Vector))
		inv := 1 / math.Sqrt(n2)
		for i, x := range r.Vector {
			v[i] = float32(float64(x) * inv)
		}
		docs = append(docs, chromem.Document{
			ID:        r.ID,
			Metadata:  map[string]string{"kind": string(r.Kind)},
			Embedding: v,
			Content:   r.Text,
		})
	}
	if len(docs) == 0 {
		return nil
	}
	// chromem-go adds a batch's documents concurrently: of two with one
	// ID, either could win. Keep the last, as sequential adds would.
	last := make(map[string]int, len(docs))
	for i, d := range docs {
		last[d.ID] = i
	}
	if len(last) < len(docs) {
		kept := docs[:0]
		for i, d := range docs {
			if last[d.ID] == i {
				kept = append(kept, d)
			}
		}
		docs = kept
	}
	if err := s.col.AddDocuments(ctx, docs, max(1, runtime.GOMAXPROCS(0))); err != nil {
		return fmt.Errorf("retriever: chromem store: %w", err)
	}
	return nil
}

// Query implements Store. Hits of equal similarity come in ascending ID
// order.
func (s *ChromemStore) Query(ctx context.Context, vector []float32, k int, kind text2sql.ItemKind) ([]Hit, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	n := s.col.Count()
	if _, ok, err := checkQuery("chromem store", vector, s.dim, k, n); !ok {
		return nil, err
	}
	var where map[string]string
	if kind != "" {
		where = map[string]string{"kind": string(kind)}
	}
	// chromem-go orders equal similarities as its goroutines finish, so
	// fetch past the k-th hit until the last one fetched scores below it
	// (every record tied with the k-th is then in res), sort ties by ID
	// and cut to k: the order of ties is then deterministic.
	var res []chromem.Result
	for m := min(k, n-1) + 1; ; m = min(2*m, n) {
		var err error
		res, err = s.col.QueryEmbedding(ctx, vector, m, where, nil)
		if err != nil {
			return nil, fmt.Errorf("retriever: chromem store: %w", err)
		}
		if len(res) < m || m == n || len(res) <= k || res[len(res)-1].Similarity < res[k-1].Similarity {
			break
		}
	}
	slices.SortStableFunc(res, func(a, b chromem.Result) int {
		if c := cmp.Compare(b.Similarity, a.Similarity); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	hits := make([]Hit, 0, min(k, len(res)))
	for _, r := range res {
		sim := float64(r.Similarity)
		if math.IsNaN(sim) {
			continue
		}
		if len(hits) == k {
			break
		}
		hits = append(hits, Hit{ID: r.ID, Kind: text2sql.ItemKind(r.Metadata["kind"]), Similarity: max(-1, min(1, sim))})
	}
	return hits, nil
}

// Count implements Store.
func (s *ChromemStore) Count(ctx context.Context) (int, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.col.Count(), nil
}

// Fingerprint implements Store: the marker's fingerprint, or "" when there
// is no marker or the number of documents differs from the one recorded
// with it (files removed or added by hand).
func (s *ChromemStore) Fingerprint(ctx context.Context) (string, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	meta := s.db.GetCollection(chromemMeta, refuseEmbedding)
	if meta == nil {
		return "", nil
	}
	doc, err := meta.GetByID(ctx, markerID)
	if err != nil {
		return "", nil // no marker: not committed
	}
	if n, err := strconv.Atoi(doc.Metadata["documents"]); err != nil || n != s.col.Count() {
		return "", nil
	}
	return doc.Metadata["fingerprint"], nil
}

// SetFingerprint implements Store: it replaces the meta collection, whose
// metadata and marker document record fp, the document count and the
// vector dimension.
func (s *ChromemStore) SetFingerprint(ctx context.Context, fp string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.db.DeleteCollection(chromemMeta); err != nil {
		return fmt.Errorf("retriever: chromem store: %w", err)
	}
	md := map[string]string{"fingerprint": fp, "documents": strconv.Itoa(s.col.Count()), "dimension": strconv.Itoa(s.dim)}
	meta, err := s.db.CreateCollection(chromemMeta, md, refuseEmbedding)
	if err != nil {
		return fmt.Errorf("retriever: chromem store: %w", err)
	}
	if err := meta.AddDocument(ctx, chromem.Document{ID: markerID, Metadata: md, Embedding: []float32{1}, Content: fp}); err != nil {
		return fmt.Errorf("retriever: chromem store: %w", err)
	}
	return nil
}

// Reset implements Store: it deletes both collections (and their files)
// and creates an empty document collection.
func (s *ChromemStore) Reset(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, name := range []string{chromemMeta, chromemDocs} {
		if err := s.db.DeleteCollection(name); err != nil {
			return fmt.Errorf("retriever: chromem store: %w", err)
		}
	}
	col, err := s.db.CreateCollection(chromemDocs, nil, refuseEmbedding)
	if err != nil {
		return fmt.Errorf("retriever: chromem store: %w", err)
	}
	s.col, s.dim = col, 0
	return nil
}
