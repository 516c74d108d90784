package retriever

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"

	text2sql "github.com/text2sql-go/text2sql"
)

// Record is one indexed document as a Store holds it: its ID, kind, text
// (kept for inspection only; the retriever reads documents from the
// knowledge base, not from the store) and vector.
type Record struct {
	ID     string
	Kind   text2sql.ItemKind
	Text   string
	Vector []float32
}

// Hit is one result of a vector query.
type Hit struct {
	ID   string
	Kind text2sql.ItemKind
	// Similarity is the cosine similarity of the query and record vectors,
	// in [-1, 1].
	Similarity float64
}

// Store is the vector store behind a Hybrid retriever: exact or approximate
// nearest-neighbour search by cosine similarity, plus the fingerprint of
// what it holds. Implementations must be safe for concurrent Query calls;
// Add, SetFingerprint and Reset are called by one goroutine while no query
// runs (during NewHybrid).
//
// A Hybrid retriever rebuilds a store with Reset, then Add in batches, then
// SetFingerprint last, so a build interrupted half-way leaves no
// fingerprint and is redone next time.
type Store interface {
	// Add stores records, replacing any with the same ID. All vectors of a
	// store have one length; a record with a different length, an empty ID,
	// or a NaN or infinite coordinate is an error. A record whose vector is
	// all zeros has no direction and is skipped.
	Add(ctx context.Context, records []Record) error
	// Query returns up to k records most similar to vector by cosine
	// similarity, best first (ties in a store-defined but deterministic
	// order), only of the given kind unless kind is "". k ≤ 0 or a zero
	// vector gives no hits; a vector of the wrong length is an error.
	Query(ctx context.Context, vector []float32, k int, kind text2sql.ItemKind) ([]Hit, error)
	// Count returns the number of records stored.
	Count(ctx context.Context) (int, error)
	// Fingerprint returns the fingerprint last set, or "" when none is set
	// since the last Reset (an empty or half-built store).
	Fingerprint(ctx context.Context) (string, error)
	// SetFingerprint records fp as the fingerprint of the current contents.
	SetFingerprint(ctx context.Context, fp string) error
	// Reset removes every record and the fingerprint.
	Reset(ctx context.Context) error
}

// BuildLocker is implemented by a Store that several processes may build
// at once (a persistent store in a shared directory). NewHybrid calls
// LockBuild before it rebuilds the index, then reads Fingerprint again:
// a process that waited for another's build reuses it.
type BuildLocker interface {
	// LockBuild blocks until the caller may build, or fails (ctx done,
	// or a bounded wait timed out). Once it returns, Fingerprint reflects
	// what other holders committed. Release ends the hold; it is called
	// once.
	LockBuild(ctx context.Context) (release func(), err error)
}

// MemoryStore is an in-memory Store with exact brute-force search: for
// tests, small schemas and processes that rebuild their index at start-up
// (the hashing embedder rebuilds 1,000 tables in well under a second).
// Vectors are normalised on Add and kept in one contiguous slice. The zero
// value is ready to use; it is safe for concurrent use.
type MemoryStore struct {
	mu    sync.RWMutex
	dim   int
	ids   []string
	kinds []text2sql.ItemKind
	texts []string
	vecs  []float32 // len(ids) × dim
	pos   map[string]int
	kind  map[text2sql.ItemKind][]int // positions per kind, ascending
	fp    string
}

var _ Store = (*MemoryStore)(nil)

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore() *MemoryStore { return &MemoryStore{} }

// checkRecord checks a record added to a store (named in errors, e.g.
// "memory store") of dimension *dim, 0 while it has none (the record's
// then becomes the store's): an ID, and a vector of the store's dimension
// with finite coordinates. It returns the vector's squared norm.
func checkRecord(store string, r Record, dim *int) (float64, error) {
	if r.ID == "" {
		return 0, fmt.Errorf("retriever: %s: record with an empty ID", store)
	}
	if len(r.Vector) == 0 {
		return 0, fmt.Errorf("retriever: %s: record %q has no vector", store, r.ID)
	}
	if *dim == 0 {
		*dim = len(r.Vector)
	}
	if len(r.Vector) != *dim {
		return 0, fmt.Errorf("retriever: %s: record %q has %d dimensions, the store %d", store, r.ID, len(r.Vector), *dim)
	}
	n2, err := checkVector(r.Vector)
	if err != nil {
		return 0, fmt.Errorf("retriever: %s: record %q: %w", store, r.ID, err)
	}
	return n2, nil
}

// checkQuery checks a query for the k best of n records of a store
// (named in errors) of dimension dim (0: none yet, any length goes): a
// vector of the store's dimension with finite coordinates. It returns the
// vector's squared norm and true, or false when the query has no hits (k
// ≤ 0, no records, a zero vector: error nil) or is invalid (error set).
func checkQuery(store string, v []float32, dim, k, n int) (float64, bool, error) {
	if k <= 0 || n == 0 {
		return 0, false, nil
	}
	if dim != 0 && len(v) != dim {
		return 0, false, fmt.Errorf("retriever: %s: query has %d dimensions, the store %d", store, len(v), dim)
	}
	n2, err := checkVector(v)
	if err != nil {
		return 0, false, fmt.Errorf("retriever: %s: query: %w", store, err)
	}
	return n2, n2 != 0, nil
}

// checkVector returns the vector's squared norm, or an error for a NaN or
// infinite coordinate.
func checkVector(v []float32) (float64, error) {
	var n float64
	for _, x := range v {
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, errors.New("vector has a NaN or infinite coordinate")
		}
		n += f * f
	}
	return n, nil
}

// Add implements Store.
func (s *MemoryStore) Add(ctx context.Context, records []Record) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pos == nil {
		s.pos = map[string]int{}
		s.kind = map[text2sql.ItemKind][]int{}
	}
	for _, r := range records {
		n2, err := checkRecord("memory store", r, &s.dim)
		if err != nil {
			return err
		}
		if n2 == 0 {
			continue
		}
		inv := 1 / math.Sqrt(n2)
		i, ok := s.pos[r.ID]
		if !ok {
			i = len(s.ids)
			s.pos[r.ID] = i
			s.ids = append(s.ids, r.ID)
			s.kinds = append(s.kinds, r.Kind)
			s.texts = append(s.texts, r.Text)
			s.vecs = append(s.vecs, make([]float32, s.dim)...)
			s.kind[r.Kind] = append(s.kind[r.Kind], i)
		} else if s.kinds[i] != r.Kind {
			old := s.kind[s.kinds[i]]
			s.kind[s.kinds[i]] = slices.DeleteFunc(old, func(p int) bool { return p == i })
			s.kind[r.Kind] = append(s.kind[r.Kind], i)
			slices.Sort(s.kind[r.Kind])
		}
		s.kinds[i], s.texts[i] = r.Kind, r.Text
		dst := s.vecs[i*s.dim : (i+1)*s.dim]
		for j, x := range r.Vector {
			dst[j] = float32(float64(x) * inv)
		}
	}
	return nil
}

// parallelWork is the number of multiply-adds above which Query splits the
// scan over GOMAXPROCS goroutines.
const parallelWork = 1 << 20

// Query implements Store. It scans every record of the kind: cost is
// O(records of the kind × dimension), split over GOMAXPROCS goroutines
// above about a million multiply-adds.
func (s *MemoryStore) Query(ctx context.Context, vector []float32, k int, kind text2sql.ItemKind) ([]Hit, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	n2, ok, err := checkQuery("memory store", vector, s.dim, k, len(s.ids))
	if !ok {
		return nil, err
	}
	inv := float32(1 / math.Sqrt(n2))
	q := make([]float32, len(vector))
	for i, x := range vector {
		q[i] = x * inv
	}
	score := scorer(q)
	var positions []int // nil: all
	n := len(s.ids)
	if kind != "" {
		positions = s.kind[kind]
		n = len(positions)
	}
	parts := 1
	if n*s.dim > parallelWork {
		parts = min(runtime.GOMAXPROCS(0), n/256+1)
	}
	tops := make([][]scored, parts)
	var wg sync.WaitGroup
	for p := 0; p < parts; p++ {
		lo, hi := p*n/parts, (p+1)*n/parts
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := newTopK(k)
			for j := lo; j < hi; j++ {
				i := j
				if positions != nil {
					i = positions[j]
				}
				t.push(scored{i, score(s.vecs[i*s.dim : (i+1)*s.dim])})
			}
			tops[p] = t.items
		}()
	}
	wg.Wait()
	t := newTopK(k)
	for _, items := range tops {
		for _, it := range items {
			t.push(it)
		}
	}
	res := t.sorted()
	hits := make([]Hit, len(res))
	for i, r := range res {
		sim := float64(r.score)
		hits[i] = Hit{ID: s.ids[r.idx], Kind: s.kinds[r.idx], Similarity: max(-1, min(1, sim))}
	}
	return hits, nil
}

// scorer returns the function that scores a stored vector against q:
// dot, or, for a q that is mostly zeros (feature hashing's are), a sum over
// its non-zero entries only — several times fewer multiplications over a
// large index, and the same sums as dot's, added in the same lanes and
// order, so similarities and rankings do not change.
func scorer(q []float32) func(v []float32) float32 {
	var nz []int
	for i, x := range q {
		if x != 0 {
			nz = append(nz, i)
		}
	}
	if len(nz)*sparseShare > len(q) {
		return func(v []float32) float32 { return dot(q, v) }
	}
	tail := len(q) - len(q)%4 // dot adds the entries from here in lane 0
	return func(v []float32) float32 {
		var lanes [4]float32
		for _, i := range nz {
			lane := i % 4
			if i >= tail {
				lane = 0
			}
			lanes[lane] += q[i] * v[i]
		}
		return lanes[0] + lanes[1] + lanes[2] + lanes[3]
	}
}

// sparseShare: a query vector with at most one non-zero entry in
// sparseShare is scored sparsely. At a quarter, the indexed loads of the
// sparse sum cost about what the dense four-way loop saves.
const sparseShare = 4

func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}

// scored is a candidate of a top-k selection: idx is a position, lower
// positions win ties.
type scored struct {
	idx   int
	score float32
}

func better(a, b scored) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return a.idx < b.idx
}

// topK keeps the k best scored items in a min-heap (worst on top).
type topK struct {
	k     int
	items []scored
}

func newTopK(k int) *topK { return &topK{k: k, items: make([]scored, 0, min(k, 1024))} }

func (t *topK) push(x scored) {
	h := t.items
	if len(h) < t.k {
		h = append(h, x)
		for i := len(h) - 1; i > 0; {
			p := (i - 1) / 2
			if !better(h[p], h[i]) {
				break
			}
			h[p], h[i] = h[i], h[p]
			i = p
		}
		t.items = h
		return
	}
	if !better(x, h[0]) {
		return
	}
	h[0] = x
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(h) && better(h[m], h[l]) {
			m = l
		}
		if r < len(h) && better(h[m], h[r]) {
			m = r
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

func (t *topK) sorted() []scored {
	out := slices.Clone(t.items)
	slices.SortFunc(out, func(a, b scored) int {
		if better(a, b) {
			return -1
		}
		if better(b, a) {
			return 1
		}
		return cmp.Compare(a.idx, b.idx)
	})
	return out
}

// Count implements Store.
func (s *MemoryStore) Count(ctx context.Context) (int, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.ids), nil
}

// Fingerprint implements Store.
func (s *MemoryStore) Fingerprint(ctx context.Context) (string, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.fp, nil
}

// SetFingerprint implements Store.
func (s *MemoryStore) SetFingerprint(ctx context.Context, fp string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fp = fp
	return nil
}

// Reset implements Store.
func (s *MemoryStore) Reset(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dim, s.ids, s.kinds, s.texts, s.vecs, s.pos, s.kind, s.fp = 0, nil, nil, nil, nil, nil, nil, ""
	return nil
}
