package crossencoder

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/onnxrt/onnxrttest"
	"github.com/text2sql-go/text2sql/knowledge"
	"github.com/text2sql-go/text2sql/retriever"
	"github.com/text2sql-go/text2sql/schema"
)

// tinyDir holds the project's tiny cross-encoder (internal/tinymodel).
const tinyDir = "testdata/tiny"

var tiny = Model{Name: "tiny"}

func newTiny(t testing.TB, opts Options) *Reranker {
	t.Helper()
	onnxrttest.Require(t)
	if opts.Model.Name == "" {
		opts.Model = tiny
	}
	if opts.Dir == "" && opts.CacheDir == "" {
		opts.Dir = tinyDir
	}
	r, err := New(context.Background(), opts)
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	return r
}

func items(texts ...string) []text2sql.Item {
	out := make([]text2sql.Item, len(texts))
	for i, s := range texts {
		out[i] = text2sql.Item{ID: fmt.Sprintf("table:t%d", i), Kind: text2sql.ItemTable, Text: s, Score: 0.01}
	}
	return out
}

func TestRerankOrdersByRelevance(t *testing.T) {
	r := newTiny(t, Options{})
	assert.Equal(t, "cross-encoder/tiny", r.Name())
	in := items(
		"customer orders and product prices",
		"the city and country of each stadium",
		"students enrolled in each course",
	)
	orig := append([]text2sql.Item(nil), in...)
	out, err := r.Rerank(context.Background(), "How many students are enrolled in each course?", in)
	require.NoError(t, err)
	require.Len(t, out, 3)
	assert.Equal(t, "table:t2", out[0].ID)
	for i := 1; i < len(out); i++ {
		assert.GreaterOrEqual(t, out[i-1].Score, out[i].Score, "best first")
	}
	assert.Equal(t, orig, in, "the caller's items are not modified")
	assert.NotEqual(t, 0.01, out[0].Score, "Score is the model's")
}

// Batches of any size score each pair as it scores alone.
func TestBatching(t *testing.T) {
	texts := make([]string, 50)
	for i := range texts {
		texts[i] = strings.Repeat(fmt.Sprintf("orders of customer %d ", i), 1+i%4)
	}
	q := "total amount of orders per customer"
	want, err := newTiny(t, Options{BatchSize: 1}).Scores(context.Background(), q, texts)
	require.NoError(t, err)
	for _, size := range []int{7, 50, 128} {
		r := newTiny(t, Options{BatchSize: size})
		session := r.m.Session()
		got, err := r.Scores(context.Background(), q, texts)
		require.NoError(t, err)
		assert.InDeltaSlice(t, want, got, 1e-4, "batch size %d", size)
		assert.Same(t, session, r.m.Session(), "the session is reused")
	}
}

func TestEmptyAndEqualScores(t *testing.T) {
	r := newTiny(t, Options{})
	out, err := r.Rerank(context.Background(), "q", nil)
	require.NoError(t, err)
	assert.Empty(t, out)
	out, err = r.Rerank(context.Background(), "students", items("orders", "orders", "orders"))
	require.NoError(t, err)
	assert.Equal(t, []string{"table:t0", "table:t1", "table:t2"}, []string{out[0].ID, out[1].ID, out[2].ID}, "ties keep their order")
}

func TestLongPairsTruncated(t *testing.T) {
	r := newTiny(t, Options{})
	s, err := r.Scores(context.Background(), strings.Repeat("students ", 500), []string{strings.Repeat("course ", 500)})
	require.NoError(t, err)
	assert.Len(t, s, 1)
}

// The reranker plugs into the hybrid retriever, which keeps its order.
func TestInRetriever(t *testing.T) {
	db := &schema.Database{Name: "registrar", Tables: []*schema.Table{
		{Name: "orders", Kind: schema.KindTable, Columns: []schema.Column{{Name: "price", Type: "numeric"}, {Name: "customer_id", Type: "integer"}}},
		{Name: "enrollment", Kind: schema.KindTable, Columns: []schema.Column{{Name: "student_id", Type: "integer"}, {Name: "course_id", Type: "integer"}}},
		{Name: "stadium", Kind: schema.KindTable, Columns: []schema.Column{{Name: "city", Type: "text"}}},
	}}
	// One table shown, no whole-schema shortcut: the reranker's order
	// decides which. Notes on every table keep the table items in the
	// context, so their scores are visible.
	kb := &knowledge.Base{}
	for _, tb := range db.Tables {
		require.NoError(t, kb.AddTable(knowledge.TableNote{Table: tb.Name, Description: "The " + tb.Name + " table."}))
	}
	h, err := retriever.NewHybrid(context.Background(), retriever.HybridOptions{Schema: db, Knowledge: kb, Reranker: newTiny(t, Options{}), MaxTables: 1, Budget: -1})
	require.NoError(t, err)
	got, err := h.Retrieve(context.Background(), text2sql.RetrieveRequest{Question: "student id and course id of each enrollment"})
	require.NoError(t, err)
	require.Len(t, got.Tables, 1)
	assert.Equal(t, "enrollment", got.Tables[0].Name)
	require.NotEmpty(t, got.Items)
	assert.Equal(t, "enrollment", got.Items[0].Table)
	for i := 1; i < len(got.Items); i++ {
		assert.GreaterOrEqual(t, got.Items[i-1].Score, got.Items[i].Score, "the reranker's scores, best first")
	}
}

func TestClose(t *testing.T) {
	r := newTiny(t, Options{})
	require.NoError(t, r.Close())
	require.NoError(t, r.Close())
	_, err := r.Rerank(context.Background(), "q", items("a"))
	assert.ErrorIs(t, err, ErrClosed)
}

func TestCancelled(t *testing.T) {
	r := newTiny(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := r.Rerank(ctx, "q", items("a"))
	assert.ErrorIs(t, err, context.Canceled)
}

func TestInvalidConfig(t *testing.T) {
	for name, opts := range map[string]Options{"batch": {BatchSize: -1}, "threads": {Threads: -2}} {
		_, err := New(context.Background(), opts)
		assert.ErrorIs(t, err, text2sql.ErrInvalidConfig, name)
	}
}

func TestCatalogue(t *testing.T) {
	m, ok := ModelNamed("ms-marco-MiniLM-L-6-v2")
	require.True(t, ok)
	assert.Equal(t, MiniLML6, m)
	assert.Equal(t, MiniLML6, Models()[0])
}

func TestMissingOffline(t *testing.T) {
	root := t.TempDir()
	_, err := New(context.Background(), Options{CacheDir: root, Offline: true})
	dir := filepath.Join(root, "ms-marco-MiniLM-L-6-v2")
	msg := onnxrttest.Missing(t, err, dir, "onnx/model.onnx", "tokenizer.json")
	assert.Contains(t, msg, MiniLML6.Source+"/onnx/model.onnx")
	assert.Contains(t, msg, MiniLML6.Source+"/tokenizer.json")
	assert.Contains(t, msg, "into "+dir)
}

// Missing files are fetched one by one from Model.Source, once.
func TestDownload(t *testing.T) {
	onnxrttest.Require(t)
	var requests []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests = append(requests, r.URL.Path)
		http.ServeFile(w, r, filepath.Join(tinyDir, strings.TrimPrefix(r.URL.Path, "/repo/")))
	}))
	defer srv.Close()
	m := Model{Name: "tiny", Source: srv.URL + "/repo"}
	root := t.TempDir()
	r := newTiny(t, Options{Model: m, CacheDir: root})
	assert.Equal(t, filepath.Join(root, "tiny"), r.Dir())
	assert.ElementsMatch(t, []string{"/repo/onnx/model.onnx", "/repo/tokenizer.json"}, requests)
	newTiny(t, Options{Model: m, CacheDir: root})
	assert.Len(t, requests, 2, "a filled directory is not downloaded again")

	_, err := New(context.Background(), Options{Model: Model{Name: "absent", Source: srv.URL + "/nothing"}, CacheDir: root})
	var miss *MissingModelError
	require.ErrorAs(t, err, &miss)
	assert.ErrorContains(t, err, "404")
}

func TestCorruptFiles(t *testing.T) {
	onnxrttest.Require(t)
	onnxrttest.Corrupt(t, tinyDir, []string{DefaultFile, "tokenizer.json"}, map[string]onnxrttest.Damage{
		"garbage model": {File: DefaultFile, Data: []byte("not onnx")},
		"empty model":   {File: DefaultFile, Data: nil},
		"bad tokenizer": {File: "tokenizer.json", Data: []byte("[1,2")},
	}, func(dir string) error {
		_, err := New(context.Background(), Options{Model: tiny, Dir: dir})
		return err
	})
	// an embedder is not a cross-encoder
	_, err := New(context.Background(), Options{Model: Model{Name: "x", File: "model_optimized.onnx"}, Dir: "../../embed/fastembed/testdata/tiny"})
	var ferr *ModelFileError
	require.ErrorAs(t, err, &ferr)
	assert.ErrorContains(t, err, `no output "logits"`)
}

func TestMissingRuntime(t *testing.T) {
	_, err := New(context.Background(), Options{Model: tiny, Dir: tinyDir, Library: filepath.Join(t.TempDir(), "libonnxruntime.so")})
	var rerr *RuntimeError
	assert.ErrorAs(t, err, &rerr)
}

// Concurrent calls share the one session and give the scores of a
// sequential call.
func TestConcurrent(t *testing.T) {
	r := newTiny(t, Options{BatchSize: 2})
	texts := []string{"orders", "students enrolled in each course", "customer payments per year"}
	onnxrttest.Concurrent(t, 8, func() ([]float64, error) { return r.Scores(context.Background(), "students per course", texts) })
}
