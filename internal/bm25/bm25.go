// Package bm25 is an in-memory Okapi BM25 index with an identifier-aware
// tokenizer for schema text: table and column names in snake_case,
// camelCase, PascalCase and dotted.names, next to English prose.
//
// Scoring follows Robertson & Zaragoza, "The Probabilistic Relevance
// Framework: BM25 and Beyond" (Foundations and Trends in IR 3(4), 2009):
//
//	score(q, d) = Σ_{t ∈ q} idf(t) · tf(t,d)·(k1+1) / (tf(t,d) + k1·(1 − b + b·|d|/avgdl))
//	idf(t)      = ln(1 + (N − n(t) + 0.5) / (n(t) + 0.5))
//
// where N is the number of documents, n(t) the number containing t, |d| the
// document length in terms and avgdl the mean length. This idf (the
// Robertson–Spärck Jones weight plus one inside the logarithm, as in Lucene)
// is always positive. Each distinct query term counts once.
//
// An Index is immutable once built and safe for concurrent searches. The
// per-posting weights are computed at build time, so a search costs one
// addition per posting of each query term plus a top-k selection.
package bm25

import (
	"container/heap"
	"math"
	"sort"
	"sync"
)

// Params are the BM25 free parameters.
type Params struct {
	// K1 ≥ 0 controls term-frequency saturation: 0 makes scoring binary,
	// larger values let repeated terms count longer. Default 1.2.
	K1 float64
	// B in [0, 1] controls length normalisation: 0 none, 1 full. Default 0.75.
	B float64
}

// DefaultParams returns K1 = 1.2, B = 0.75.
func DefaultParams() Params { return Params{K1: 1.2, B: 0.75} }

func (p Params) normalised() Params {
	if p == (Params{}) {
		return DefaultParams()
	}
	if !(p.K1 >= 0) || math.IsInf(p.K1, 0) { // negative, NaN or infinite
		p.K1 = DefaultParams().K1
	}
	if !(p.B >= 0) {
		p.B = 0
	}
	if p.B > 1 {
		p.B = 1
	}
	return p
}

// Hit is one search result.
type Hit struct {
	Doc   int     // index of the document in the slice the Index was built from
	Score float64 // BM25 score, > 0
}

type posting struct {
	doc int32
	w   float32 // precomputed idf · saturated tf
}

// Index is a BM25 index over a fixed set of documents.
type Index struct {
	params   Params
	terms    map[string]int32
	postings [][]posting
	n        int
	avgLen   float64
	pool     sync.Pool // *accumulator
}

type accumulator struct {
	scores  []float32
	touched []int32
}

// New tokenizes docs with Tokenize and indexes them with params; the zero
// Params means DefaultParams. Out-of-range parameters are replaced: a
// negative or NaN K1 by 1.2, B clamped into [0, 1].
func New(docs []string, params Params) *Index {
	toks := make([][]string, len(docs))
	for i, d := range docs {
		toks[i] = Tokenize(d)
	}
	return NewTokens(toks, params)
}

// NewTokens indexes documents given as term lists (already tokenized, e.g.
// with Tokenize plus extra terms). See New for params.
func NewTokens(docs [][]string, params Params) *Index {
	p := params.normalised()
	ix := &Index{params: p, terms: map[string]int32{}, n: len(docs)}
	type tf struct {
		term int32
		n    int32
	}
	perDoc := make([][]tf, len(docs))
	lens := make([]int, len(docs))
	total := 0
	df := []int32{}
	// counts[id] is term id's count in the document at hand, zeroed
	// again after each document (its terms are in order).
	var counts, order []int32
	for i, d := range docs {
		order = order[:0]
		for _, t := range d {
			id, ok := ix.terms[t]
			if !ok {
				id = int32(len(ix.terms))
				ix.terms[t] = id
				df = append(df, 0)
				counts = append(counts, 0)
			}
			if counts[id] == 0 {
				order = append(order, id)
			}
			counts[id]++
		}
		perDoc[i] = make([]tf, len(order))
		for j, id := range order {
			perDoc[i][j] = tf{id, counts[id]}
			df[id]++
			counts[id] = 0
		}
		lens[i] = len(d)
		total += len(d)
	}
	if len(docs) > 0 {
		ix.avgLen = float64(total) / float64(len(docs))
	}
	if ix.avgLen == 0 {
		ix.avgLen = 1
	}
	ix.postings = make([][]posting, len(ix.terms))
	for id, n := range df {
		ix.postings[id] = make([]posting, 0, n)
	}
	N := float64(len(docs))
	for i, tfs := range perDoc {
		norm := p.K1 * (1 - p.B + p.B*float64(lens[i])/ix.avgLen)
		for _, x := range tfs {
			n := float64(df[x.term])
			idf := math.Log(1 + (N-n+0.5)/(n+0.5))
			f := float64(x.n)
			w := idf * f * (p.K1 + 1) / (f + norm)
			ix.postings[x.term] = append(ix.postings[x.term], posting{doc: int32(i), w: float32(w)})
		}
	}
	ix.initPool()
	return ix
}

// initPool makes the accumulators of searches the size of the index.
func (ix *Index) initPool() {
	ix.pool.New = func() any {
		return &accumulator{scores: make([]float32, ix.n)}
	}
}

// Len returns the number of documents indexed.
func (ix *Index) Len() int { return ix.n }

// Params returns the parameters in use.
func (ix *Index) Params() Params { return ix.params }

// Search tokenizes query with Tokenize and returns the k best documents,
// best first; see SearchTerms.
func (ix *Index) Search(query string, k int) []Hit {
	return ix.SearchTerms(Tokenize(query), k)
}

// SearchTerms returns up to k documents with a positive score for the
// query terms, by descending score, ties broken by ascending document
// index. Repeated query terms count once. k ≤ 0 means all matching
// documents. It returns nil when nothing matches.
func (ix *Index) SearchTerms(terms []string, k int) []Hit {
	return ix.SearchFilter(terms, k, nil)
}

// SearchFilter is SearchTerms restricted to the documents for which keep
// returns true; a nil keep keeps all. Scores (idf, average length) stay
// those of the whole index, so the results of different filters compare.
func (ix *Index) SearchFilter(terms []string, k int, keep func(doc int) bool) []Hit {
	if ix == nil || ix.n == 0 || len(terms) == 0 {
		return nil
	}
	acc := ix.pool.Get().(*accumulator)
	defer ix.pool.Put(acc)
	seen := make(map[int32]bool, len(terms))
	for _, t := range terms {
		id, ok := ix.terms[t]
		if !ok || seen[id] {
			continue
		}
		seen[id] = true
		for _, p := range ix.postings[id] {
			if keep != nil && !keep(int(p.doc)) {
				continue
			}
			if acc.scores[p.doc] == 0 {
				acc.touched = append(acc.touched, p.doc)
			}
			acc.scores[p.doc] += p.w
		}
	}
	if len(acc.touched) == 0 {
		return nil
	}
	if k <= 0 || k > len(acc.touched) {
		k = len(acc.touched)
	}
	h := make(hitHeap, 0, k)
	for _, d := range acc.touched {
		s := acc.scores[d]
		acc.scores[d] = 0
		if len(h) < k {
			heap.Push(&h, Hit{Doc: int(d), Score: float64(s)})
		} else if worse(h[0], Hit{Doc: int(d), Score: float64(s)}) {
			h[0] = Hit{Doc: int(d), Score: float64(s)}
			heap.Fix(&h, 0)
		}
	}
	acc.touched = acc.touched[:0]
	out := []Hit(h)
	sort.Slice(out, func(i, j int) bool { return worse(out[j], out[i]) })
	return out
}

// worse reports whether a ranks below b.
func worse(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score < b.Score
	}
	return a.Doc > b.Doc
}

// hitHeap is a min-heap: the worst hit on top.
type hitHeap []Hit

func (h hitHeap) Len() int           { return len(h) }
func (h hitHeap) Less(i, j int) bool { return worse(h[i], h[j]) }
func (h hitHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *hitHeap) Push(x any)        { *h = append(*h, x.(Hit)) }
func (h *hitHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
