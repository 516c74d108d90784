package retriever

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/knowledge"
)

func testStores(t *testing.T) map[string]func() Store {
	return map[string]func() Store{
		"memory": func() Store { return NewMemoryStore() },
		"chromem": func() Store {
			s, err := OpenChromem(filepath.Join(t.TempDir(), "idx"))
			require.NoError(t, err)
			return s
		},
	}
}

func TestStores(t *testing.T) {
	ctx := context.Background()
	for name, mk := range testStores(t) {
		t.Run(name, func(t *testing.T) {
			s := mk()
			fp, err := s.Fingerprint(ctx)
			require.NoError(t, err)
			require.Empty(t, fp, "empty fingerprint")
			recs := []Record{
				{ID: "table:a", Kind: text2sql.ItemTable, Text: "a", Vector: []float32{1, 0, 0}},
				{ID: "table:b", Kind: text2sql.ItemTable, Text: "b", Vector: []float32{2, 2, 0}}, // not normalised
				{ID: "column:a.x", Kind: text2sql.ItemColumn, Text: "x", Vector: []float32{0, 0, 1}},
				{ID: "rule:zero", Kind: text2sql.ItemRule, Text: "zero", Vector: []float32{0, 0, 0}},
			}
			require.NoError(t, s.Add(ctx, recs))
			n, err := s.Count(ctx)
			require.NoError(t, err)
			require.Equal(t, 3, n, "count (the zero vector is skipped)")
			hits, err := s.Query(ctx, []float32{1, 0.1, 0}, 10, "")
			require.NoError(t, err)
			require.Equal(t, []string{"table:a", "table:b", "column:a.x"}, hitIDs(hits))
			assert.InDelta(t, 1/math.Sqrt(1.01), hits[0].Similarity, 1e-5)
			assert.Equal(t, text2sql.ItemTable, hits[0].Kind)
			hits, err = s.Query(ctx, []float32{0, 0, 1}, 10, text2sql.ItemTable)
			require.NoError(t, err)
			require.Len(t, hits, 2, "kind filter")
			assert.Equal(t, text2sql.ItemTable, hits[0].Kind, "kind filter")
			hits, err = s.Query(ctx, []float32{1, 0, 0}, 1, text2sql.ItemColumn)
			require.NoError(t, err)
			assert.Equal(t, []string{"column:a.x"}, hitIDs(hits), "k=1 column")
			for _, k := range []int{0, -3} {
				hits, err := s.Query(ctx, []float32{1, 0, 0}, k, "")
				require.NoError(t, err, "k=%d", k)
				assert.Empty(t, hits, "k=%d", k)
			}
			hits, err = s.Query(ctx, []float32{0, 0, 0}, 3, "")
			require.NoError(t, err, "zero query")
			assert.Empty(t, hits, "zero query")
			_, err = s.Query(ctx, []float32{1, 0}, 3, "")
			assert.Error(t, err, "wrong dimension accepted")
			_, err = s.Query(ctx, []float32{float32(math.NaN()), 0, 0}, 3, "")
			assert.Error(t, err, "NaN query accepted")
			for _, bad := range []Record{
				{ID: "", Vector: []float32{1, 0, 0}},
				{ID: "x", Vector: []float32{1, 0}},
				{ID: "x"},
				{ID: "x", Vector: []float32{float32(math.Inf(1)), 0, 0}},
			} {
				assert.Error(t, s.Add(ctx, []Record{bad}), "bad record %+v accepted", bad)
			}
			// Replacing a record keeps the count.
			require.NoError(t, s.Add(ctx, []Record{{ID: "table:a", Kind: text2sql.ItemTable, Vector: []float32{0, 1, 0}}}))
			n, err = s.Count(ctx)
			require.NoError(t, err)
			require.Equal(t, 3, n, "count after replace")
			require.NoError(t, s.SetFingerprint(ctx, "fp1"))
			fp, err = s.Fingerprint(ctx)
			require.NoError(t, err)
			require.Equal(t, "fp1", fp)
			require.NoError(t, s.Reset(ctx))
			n, err = s.Count(ctx)
			require.NoError(t, err)
			require.Zero(t, n, "count after reset")
			fp, err = s.Fingerprint(ctx)
			require.NoError(t, err)
			require.Empty(t, fp, "fingerprint after reset")
			// After a reset a new dimension is accepted.
			require.NoError(t, s.Add(ctx, []Record{{ID: "y", Kind: text2sql.ItemTable, Vector: []float32{1, 2}}}))
		})
	}
}

func TestChromemPersistence(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "idx")
	_, err := OpenChromem("")
	require.Error(t, err, "empty dir accepted")
	f := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(f, []byte("x"), 0o600))
	_, err = OpenChromem(f)
	require.Error(t, err, "file accepted as directory")

	s, err := OpenChromem(dir)
	require.NoError(t, err)
	require.NoError(t, s.Add(ctx, []Record{{ID: "a", Kind: text2sql.ItemTable, Vector: []float32{1, 0}}, {ID: "b", Kind: text2sql.ItemColumn, Vector: []float32{0, 1}}}))
	// No fingerprint yet: a half-built index reopens as unbuilt.
	s2, err := OpenChromem(dir)
	require.NoError(t, err)
	fp, err := s2.Fingerprint(ctx)
	require.NoError(t, err)
	require.Empty(t, fp, "uncommitted fingerprint")
	require.NoError(t, s.SetFingerprint(ctx, "abc"))
	s3, err := OpenChromem(dir)
	require.NoError(t, err)
	fp, err = s3.Fingerprint(ctx)
	require.NoError(t, err)
	assert.Equal(t, "abc", fp, "fingerprint after reopen")
	n, err := s3.Count(ctx)
	require.NoError(t, err)
	assert.Equal(t, 2, n, "count after reopen")
	hits, err := s3.Query(ctx, []float32{0, 1}, 5, "")
	require.NoError(t, err)
	require.Len(t, hits, 2)
	assert.Equal(t, "b", hits[0].ID)
	assert.Equal(t, text2sql.ItemColumn, hits[0].Kind)
	_, err = s3.Query(ctx, []float32{0, 1, 0}, 5, "")
	assert.Error(t, err, "wrong dimension accepted after reopen")
	assert.Equal(t, dir, s3.Dir())
}

func TestFingerprintReuseAndRebuild(t *testing.T) {
	ctx := context.Background()
	db := spiderDB(t, "concert_singer")
	kb := &knowledge.Base{Tables: []knowledge.TableNote{{Table: "singer", Description: "People who sing."}}}
	for name, mk := range testStores(t) {
		t.Run(name, func(t *testing.T) {
			store := mk()
			build := func(kb *knowledge.Base, dim int) (*Hybrid, *countingEmbedder) {
				t.Helper()
				e := &countingEmbedder{Embedder: newHashing(t, dim)}
				h, err := NewHybrid(ctx, HybridOptions{Schema: db, Knowledge: kb, Embedder: e, Store: store, BatchSize: 2})
				require.NoError(t, err)
				return h, e
			}
			h1, e1 := build(kb, 512)
			n := int64(h1.Stats().Documents)
			require.True(t, h1.Stats().Rebuilt, "first build")
			require.Equal(t, n, e1.docTexts.Load(), "first build: texts embedded")
			require.Equal(t, (n+1)/2, e1.docCalls.Load(), "first build: calls in batches of 2")
			h2, e2 := build(kb, 512)
			require.False(t, h2.Stats().Rebuilt, "reuse")
			require.Zero(t, e2.docCalls.Load(), "reuse: document calls")
			require.Zero(t, e2.queryCalls.Load(), "reuse: query calls")
			require.Equal(t, h1.Stats().Fingerprint, h2.Stats().Fingerprint, "reuse")
			// Reused index answers like the fresh one.
			c1, c2 := retrieve(t, h1, "How many singers do we have?"), retrieve(t, h2, "How many singers do we have?")
			require.Equal(t, "singer", tableNames(c1)[0])
			require.Equal(t, tableNames(c1), tableNames(c2))
			// A changed note rebuilds.
			kb2 := &knowledge.Base{Tables: []knowledge.TableNote{{Table: "singer", Description: "Performers who sing."}}}
			h3, e3 := build(kb2, 512)
			require.True(t, h3.Stats().Rebuilt, "note change")
			require.Equal(t, n, e3.docTexts.Load(), "note change")
			require.NotEqual(t, h1.Stats().Fingerprint, h3.Stats().Fingerprint, "note change")
			// A changed embedder dimension rebuilds.
			h4, e4 := build(kb2, 256)
			require.True(t, h4.Stats().Rebuilt, "dimension change")
			require.Equal(t, n, e4.docTexts.Load(), "dimension change")
			require.Equal(t, 256, h4.Stats().Dimension)
			require.Equal(t, "hashing-v1-256", h4.Stats().Embedder)
			require.Equal(t, "singer", retrieve(t, h4, "How many singers do we have?").Tables[0].Name, "after rebuild")
			// Same again: reused.
			h5, e5 := build(kb2, 256)
			require.False(t, h5.Stats().Rebuilt, "second reuse")
			require.Zero(t, e5.docCalls.Load(), "second reuse")
			st := h4.Stats()
			assert.Equal(t, st.Documents, st.Stored)
			assert.Equal(t, len(db.Tables), st.Kinds[text2sql.ItemTable])
		})
	}
}

// TestChromemHybridReopen builds a persistent index, reopens the directory
// in a new store and checks the index is reused without embedding.
func TestChromemHybridReopen(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "idx")
	open := func() (*Hybrid, *countingEmbedder) {
		s, err := OpenChromem(dir)
		require.NoError(t, err)
		e := &countingEmbedder{Embedder: newHashing(t, 0)}
		h, err := NewHybrid(ctx, HybridOptions{Schema: registrar(), Knowledge: registrarKnowledge(), Embedder: e, Store: s})
		require.NoError(t, err)
		return h, e
	}
	h1, e1 := open()
	require.True(t, h1.Stats().Rebuilt, "first open")
	require.NotZero(t, e1.docCalls.Load(), "first open")
	want := retrieve(t, h1, "How many students take each class?")
	h2, e2 := open()
	require.False(t, h2.Stats().Rebuilt, "reopen rebuilt")
	require.Zero(t, e2.docCalls.Load(), "reopen embedded")
	got := retrieve(t, h2, "How many students take each class?")
	require.Equal(t, want.Schema, got.Schema, "reopened index differs")
	require.Len(t, got.Items, len(want.Items), "reopened index differs")
	for i := range got.Items {
		require.Equal(t, want.Items[i].ID, got.Items[i].ID, "item %d", i)
		require.InDelta(t, want.Items[i].Similarity, got.Items[i].Similarity, 1e-6, "item %d", i)
	}
}

// TestMemoryStoreLarge checks the parallel scan against a plain sort.
func TestMemoryStoreLarge(t *testing.T) {
	ctx := context.Background()
	const n, dim = 5000, 300 // 1.5M multiply-adds: the parallel path
	seed := uint64(7)
	rnd := func() float32 {
		seed = seed*6364136223846793005 + 1442695040888963407
		return float32(int64(seed>>11)%2001-1000) / 1000
	}
	s := NewMemoryStore()
	kinds := []text2sql.ItemKind{text2sql.ItemTable, text2sql.ItemValue}
	var recs []Record
	for i := 0; i < n; i++ {
		v := make([]float32, dim)
		for j := range v {
			v[j] = rnd()
		}
		recs = append(recs, Record{ID: fmt.Sprint(i), Kind: kinds[i%2], Vector: v})
	}
	require.NoError(t, s.Add(ctx, recs))
	// Moving a record to another kind.
	require.NoError(t, s.Add(ctx, []Record{{ID: "1", Kind: text2sql.ItemTable, Vector: recs[1].Vector}}))
	recs[1].Kind = text2sql.ItemTable
	q := recs[42].Vector
	for _, kind := range []text2sql.ItemKind{"", text2sql.ItemTable, text2sql.ItemValue} {
		type ref struct {
			id  string
			sim float64
		}
		var want []ref
		for _, r := range recs {
			if kind == "" || r.Kind == kind {
				want = append(want, ref{r.ID, cosine(q, r.Vector)})
			}
		}
		sort.SliceStable(want, func(i, j int) bool { return want[i].sim > want[j].sim })
		hits, err := s.Query(ctx, q, 20, kind)
		require.NoError(t, err)
		require.Len(t, hits, 20, "%q", kind)
		for i, h := range hits {
			require.Equal(t, want[i].id, h.ID, "%q hit %d", kind, i)
			require.InDelta(t, want[i].sim, h.Similarity, 1e-4, "%q hit %d", kind, i)
			if kind != "" {
				require.Equal(t, kind, h.Kind, "%q hit %d", kind, i)
			}
		}
	}
}

func cosine(a, b []float32) float64 {
	var d, na, nb float64
	for i := range a {
		d += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return d / math.Sqrt(na*nb)
}

// hitIDs lists the IDs of hits, in order.
func hitIDs(hits []Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.ID)
	}
	return out
}

// TestSparseScorer: a mostly-zero query vector is scored over its
// non-zero entries with the same result, bit for bit, as the dense dot
// product; a dense one goes through dot.
func TestSparseScorer(t *testing.T) {
	const dim = 130 // the last two entries are outside dot's four lanes
	seed := uint32(7)
	rnd := func() float32 { seed = seed*1664525 + 1013904223; return float32(seed>>8)/float32(1<<24) - 0.5 }
	sparse := make([]float32, dim)
	for _, i := range []int{1, 5, 6, 7, 9, 13, 17, 40, 41, 42, 43, 100, 104, 128, 129} { // several per lane
		sparse[i] = rnd()
	}
	dense := make([]float32, dim)
	for i := range dense {
		dense[i] = rnd()
	}
	for _, q := range [][]float32{sparse, dense} {
		score := scorer(q)
		for range 200 {
			v := make([]float32, dim)
			for i := range v {
				v[i] = rnd() * 1e3
			}
			require.Equal(t, math.Float32bits(dot(q, v)), math.Float32bits(score(v)))
		}
	}
}
