package retriever

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/knowledge"
)

func testStores(t *testing.T) map[string]func() Store {
	return map[string]func() Store{
		"memory": func() Store { return NewMemoryStore() },
		"chromem": func() Store {
			s, err := OpenChromem(filepath.Join(t.TempDir(), "idx"))
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
	}
}

func TestStores(t *testing.T) {
	ctx := context.Background()
	for name, mk := range testStores(t) {
		t.Run(name, func(t *testing.T) {
			s := mk()
			if fp, err := s.Fingerprint(ctx); err != nil || fp != "" {
				t.Fatalf("empty fingerprint %q %v", fp, err)
			}
			recs := []Record{
				{ID: "table:a", Kind: text2sql.ItemTable, Text: "a", Vector: []float32{1, 0, 0}},
				{ID: "table:b", Kind: text2sql.ItemTable, Text: "b", Vector: []float32{2, 2, 0}}, // not normalised
				{ID: "column:a.x", Kind: text2sql.ItemColumn, Text: "x", Vector: []float32{0, 0, 1}},
				{ID: "rule:zero", Kind: text2sql.ItemRule, Text: "zero", Vector: []float32{0, 0, 0}},
			}
			if err := s.Add(ctx, recs); err != nil {
				t.Fatal(err)
			}
			if n, _ := s.Count(ctx); n != 3 {
				t.Fatalf("count %d (the zero vector is skipped)", n)
			}
			hits, err := s.Query(ctx, []float32{1, 0.1, 0}, 10, "")
			if err != nil {
				t.Fatal(err)
			}
			if len(hits) != 3 || hits[0].ID != "table:a" || hits[1].ID != "table:b" || hits[2].ID != "column:a.x" {
				t.Fatalf("hits %+v", hits)
			}
			want := 1 / math.Sqrt(1.01)
			if math.Abs(hits[0].Similarity-want) > 1e-5 || hits[0].Kind != text2sql.ItemTable {
				t.Fatalf("similarity %v want %v", hits[0].Similarity, want)
			}
			hits, _ = s.Query(ctx, []float32{0, 0, 1}, 10, text2sql.ItemTable)
			if len(hits) != 2 || hits[0].Kind != text2sql.ItemTable {
				t.Fatalf("kind filter %+v", hits)
			}
			if hits, _ := s.Query(ctx, []float32{1, 0, 0}, 1, text2sql.ItemColumn); len(hits) != 1 || hits[0].ID != "column:a.x" {
				t.Fatalf("k=1 column %+v", hits)
			}
			for _, k := range []int{0, -3} {
				if hits, err := s.Query(ctx, []float32{1, 0, 0}, k, ""); err != nil || len(hits) != 0 {
					t.Fatalf("k=%d: %+v %v", k, hits, err)
				}
			}
			if hits, err := s.Query(ctx, []float32{0, 0, 0}, 3, ""); err != nil || len(hits) != 0 {
				t.Fatalf("zero query: %+v %v", hits, err)
			}
			if _, err := s.Query(ctx, []float32{1, 0}, 3, ""); err == nil {
				t.Fatal("wrong dimension accepted")
			}
			if _, err := s.Query(ctx, []float32{float32(math.NaN()), 0, 0}, 3, ""); err == nil {
				t.Fatal("NaN query accepted")
			}
			for _, bad := range []Record{
				{ID: "", Vector: []float32{1, 0, 0}},
				{ID: "x", Vector: []float32{1, 0}},
				{ID: "x"},
				{ID: "x", Vector: []float32{float32(math.Inf(1)), 0, 0}},
			} {
				if err := s.Add(ctx, []Record{bad}); err == nil {
					t.Errorf("bad record %+v accepted", bad)
				}
			}
			// Replacing a record keeps the count.
			if err := s.Add(ctx, []Record{{ID: "table:a", Kind: text2sql.ItemTable, Vector: []float32{0, 1, 0}}}); err != nil {
				t.Fatal(err)
			}
			if n, _ := s.Count(ctx); n != 3 {
				t.Fatalf("count after replace %d", n)
			}
			if err := s.SetFingerprint(ctx, "fp1"); err != nil {
				t.Fatal(err)
			}
			if fp, _ := s.Fingerprint(ctx); fp != "fp1" {
				t.Fatalf("fingerprint %q", fp)
			}
			if err := s.Reset(ctx); err != nil {
				t.Fatal(err)
			}
			if n, _ := s.Count(ctx); n != 0 {
				t.Fatalf("count after reset %d", n)
			}
			if fp, _ := s.Fingerprint(ctx); fp != "" {
				t.Fatalf("fingerprint after reset %q", fp)
			}
			// After a reset a new dimension is accepted.
			if err := s.Add(ctx, []Record{{ID: "y", Kind: text2sql.ItemTable, Vector: []float32{1, 2}}}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestChromemPersistence(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "idx")
	if _, err := OpenChromem(""); err == nil {
		t.Fatal("empty dir accepted")
	}
	f := filepath.Join(t.TempDir(), "file")
	os.WriteFile(f, []byte("x"), 0o600)
	if _, err := OpenChromem(f); err == nil {
		t.Fatal("file accepted as directory")
	}

	s, err := OpenChromem(dir)
	if err != nil {
		t.Fatal(err)
	}
	s.Add(ctx, []Record{{ID: "a", Kind: text2sql.ItemTable, Vector: []float32{1, 0}}, {ID: "b", Kind: text2sql.ItemColumn, Vector: []float32{0, 1}}})
	// No fingerprint yet: a half-built index reopens as unbuilt.
	s2, err := OpenChromem(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fp, _ := s2.Fingerprint(ctx); fp != "" {
		t.Fatalf("uncommitted fingerprint %q", fp)
	}
	if err := s.SetFingerprint(ctx, "abc"); err != nil {
		t.Fatal(err)
	}
	s3, err := OpenChromem(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fp, _ := s3.Fingerprint(ctx); fp != "abc" {
		t.Fatalf("fingerprint after reopen %q", fp)
	}
	if n, _ := s3.Count(ctx); n != 2 {
		t.Fatalf("count after reopen %d", n)
	}
	hits, err := s3.Query(ctx, []float32{0, 1}, 5, "")
	if err != nil || len(hits) != 2 || hits[0].ID != "b" || hits[0].Kind != text2sql.ItemColumn {
		t.Fatalf("%+v %v", hits, err)
	}
	if _, err := s3.Query(ctx, []float32{0, 1, 0}, 5, ""); err == nil {
		t.Fatal("wrong dimension accepted after reopen")
	}
	if s3.Dir() != dir {
		t.Fatal(s3.Dir())
	}
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
				if err != nil {
					t.Fatal(err)
				}
				return h, e
			}
			h1, e1 := build(kb, 512)
			n := int64(h1.Stats().Documents)
			if !h1.Stats().Rebuilt || e1.docTexts.Load() != n || e1.docCalls.Load() != (n+1)/2 {
				t.Fatalf("first build: %+v texts %d calls %d", h1.Stats(), e1.docTexts.Load(), e1.docCalls.Load())
			}
			h2, e2 := build(kb, 512)
			if h2.Stats().Rebuilt || e2.docCalls.Load() != 0 || e2.queryCalls.Load() != 0 || h2.Stats().Fingerprint != h1.Stats().Fingerprint {
				t.Fatalf("reuse: %+v calls %d", h2.Stats(), e2.docCalls.Load())
			}
			// Reused index answers like the fresh one.
			c1, c2 := retrieve(t, h1, "How many singers do we have?"), retrieve(t, h2, "How many singers do we have?")
			if tableNames(c1)[0] != "singer" || strings.Join(tableNames(c1), ",") != strings.Join(tableNames(c2), ",") {
				t.Fatalf("%v vs %v", tableNames(c1), tableNames(c2))
			}
			// A changed note rebuilds.
			kb2 := &knowledge.Base{Tables: []knowledge.TableNote{{Table: "singer", Description: "Performers who sing."}}}
			h3, e3 := build(kb2, 512)
			if !h3.Stats().Rebuilt || e3.docTexts.Load() != n || h3.Stats().Fingerprint == h1.Stats().Fingerprint {
				t.Fatalf("note change: %+v", h3.Stats())
			}
			// A changed embedder dimension rebuilds.
			h4, e4 := build(kb2, 256)
			if !h4.Stats().Rebuilt || e4.docTexts.Load() != n || h4.Stats().Dimension != 256 || h4.Stats().Embedder != "hashing-v1-256" {
				t.Fatalf("dimension change: %+v", h4.Stats())
			}
			if c := retrieve(t, h4, "How many singers do we have?"); c.Tables[0].Name != "singer" {
				t.Fatalf("after rebuild %v", tableNames(c))
			}
			// Same again: reused.
			if h5, e5 := build(kb2, 256); h5.Stats().Rebuilt || e5.docCalls.Load() != 0 {
				t.Fatalf("second reuse: %+v", h5.Stats())
			}
			if st := h4.Stats(); st.Stored != st.Documents || st.Kinds[text2sql.ItemTable] != len(db.Tables) {
				t.Fatalf("stats %+v", st)
			}
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
		if err != nil {
			t.Fatal(err)
		}
		e := &countingEmbedder{Embedder: newHashing(t, 0)}
		h, err := NewHybrid(ctx, HybridOptions{Schema: registrar(), Knowledge: registrarKnowledge(), Embedder: e, Store: s})
		if err != nil {
			t.Fatal(err)
		}
		return h, e
	}
	h1, e1 := open()
	if !h1.Stats().Rebuilt || e1.docCalls.Load() == 0 {
		t.Fatalf("first open: %+v", h1.Stats())
	}
	want := retrieve(t, h1, "How many students take each class?")
	h2, e2 := open()
	if h2.Stats().Rebuilt || e2.docCalls.Load() != 0 {
		t.Fatalf("reopen rebuilt: %+v", h2.Stats())
	}
	got := retrieve(t, h2, "How many students take each class?")
	if got.Schema != want.Schema || len(got.Items) != len(want.Items) {
		t.Fatalf("reopened index differs:\n%v\n%v", got.Items, want.Items)
	}
	for i := range got.Items {
		if got.Items[i].ID != want.Items[i].ID || math.Abs(got.Items[i].Similarity-want.Items[i].Similarity) > 1e-6 {
			t.Fatalf("item %d: %+v vs %+v", i, got.Items[i], want.Items[i])
		}
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
	if err := s.Add(ctx, recs); err != nil {
		t.Fatal(err)
	}
	// Moving a record to another kind.
	if err := s.Add(ctx, []Record{{ID: "1", Kind: text2sql.ItemTable, Vector: recs[1].Vector}}); err != nil {
		t.Fatal(err)
	}
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
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != 20 {
			t.Fatalf("%q: %d hits", kind, len(hits))
		}
		for i, h := range hits {
			if h.ID != want[i].id || math.Abs(h.Similarity-want[i].sim) > 1e-4 || (kind != "" && h.Kind != kind) {
				t.Fatalf("%q hit %d: %+v, want %+v", kind, i, h, want[i])
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
