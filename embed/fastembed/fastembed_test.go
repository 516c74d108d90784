package fastembed

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/embed/embedtest"
	"github.com/text2sql-go/text2sql/internal/onnxrt/onnxrttest"
	"github.com/text2sql-go/text2sql/internal/tinymodel"
	"github.com/text2sql-go/text2sql/retriever"
	"github.com/text2sql-go/text2sql/schema"
)

// tinyDir holds the project's tiny BERT-class embedder (internal/tinymodel).
const tinyDir = "testdata/tiny"

// tiny is the tiny model, CLS-pooled like BGE, with BGE-style prefixes.
var tiny = Model{Name: "tiny", Dimension: tinymodel.Hidden, Pooling: PoolCLS, QueryPrefix: "question: "}

func newTiny(t testing.TB, opts Options) *Embedder {
	t.Helper()
	onnxrttest.Require(t)
	if opts.Model.Name == "" {
		opts.Model = tiny
	}
	if opts.Dir == "" && opts.CacheDir == "" {
		opts.Dir = tinyDir
	}
	opts.Offline = opts.Offline || opts.Source == ""
	e, err := New(context.Background(), opts)
	require.NoError(t, err)
	t.Cleanup(func() { e.Close() })
	return e
}

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

// TestConformance runs the kit without Options.Deterministic: a text's
// vector depends on its batch's padded length in the last bits (ONNX
// Runtime sums in another order), so the kit's bit-for-bit order rule does
// not hold; TestBatchingAndSessionReuse checks agreement to 1e-5 and
// TestRepeatable that the same batch gives the same bits.
func TestConformance(t *testing.T) {
	onnxrttest.Require(t)
	for _, pooling := range []Pooling{PoolCLS, PoolMean} {
		m := tiny
		m.Pooling = pooling
		assert.NoError(t, embedtest.TestEmbedder(func(b embedtest.Backend) (text2sql.Embedder, error) {
			if b.Hang || b.Reject {
				return nil, embedtest.ErrUnsupported
			}
			return newTiny(t, Options{Model: m, BatchSize: 7}), nil
		}, embedtest.Options{}), "pooling %d", pooling)
	}
}

func TestRepeatable(t *testing.T) {
	e := newTiny(t, Options{})
	texts := []string{"orders", "the total amount of orders per customer"}
	a, err := e.EmbedDocuments(context.Background(), texts)
	require.NoError(t, err)
	b, err := e.EmbedDocuments(context.Background(), texts)
	require.NoError(t, err)
	assert.Equal(t, a, b)
}

func TestIdentity(t *testing.T) {
	e := newTiny(t, Options{})
	assert.Equal(t, "fastembed/tiny", e.Name())
	assert.Equal(t, tinymodel.Hidden, e.Dimension())
	assert.Equal(t, DefaultFile, e.Model().File)
	assert.Equal(t, tinyDir, e.Dir())
}

// Texts sharing words are closer than texts that share none.
func TestSemantics(t *testing.T) {
	for _, pooling := range []Pooling{PoolCLS, PoolMean} {
		m := tiny
		m.Pooling = pooling
		e := newTiny(t, Options{Model: m})
		ctx := context.Background()
		q, err := e.EmbedQuery(ctx, "How many students are enrolled in each course?")
		require.NoError(t, err)
		docs, err := e.EmbedDocuments(ctx, []string{
			"students enrolled in courses",
			"customer orders and product prices",
		})
		require.NoError(t, err)
		assert.Greater(t, dot(q, docs[0]), dot(q, docs[1]), "pooling %d", pooling)
		assert.InDelta(t, 1, dot(q, q), 1e-5, "unit length")
	}
}

func TestPrefixes(t *testing.T) {
	e := newTiny(t, Options{})
	ctx := context.Background()
	q, err := e.EmbedQuery(ctx, "students")
	require.NoError(t, err)
	d, err := e.EmbedDocuments(ctx, []string{"students", "question: students"})
	require.NoError(t, err)
	assert.NotEqual(t, d[0], q, "the query gets QueryPrefix, the document none")
	assert.InDeltaSlice(t, d[1], q, 1e-6)
}

// Batches of any size give the vectors of texts embedded one by one; the
// one session opened by New serves every call.
func TestBatchingAndSessionReuse(t *testing.T) {
	texts := make([]string, 23)
	for i := range texts {
		texts[i] = strings.Repeat(fmt.Sprintf("table %d of orders ", i), 1+i%5)
	}
	one := newTiny(t, Options{BatchSize: 1})
	want, err := one.EmbedDocuments(context.Background(), texts)
	require.NoError(t, err)
	for _, size := range []int{4, 23, 64} {
		e := newTiny(t, Options{BatchSize: size})
		session := e.m.Session()
		got, err := e.EmbedDocuments(context.Background(), texts)
		require.NoError(t, err)
		require.Len(t, got, len(texts))
		for i := range texts {
			assert.InDeltaSlice(t, want[i], got[i], 1e-5, "batch size %d, text %d", size, i)
		}
		_, err = e.EmbedQuery(context.Background(), "orders")
		require.NoError(t, err)
		assert.Same(t, session, e.m.Session(), "the session is reused")
	}
}

// Texts longer than the model's limit are truncated, not refused.
func TestLongText(t *testing.T) {
	e := newTiny(t, Options{})
	v, err := e.EmbedDocuments(context.Background(), []string{strings.Repeat("students ", 1000)})
	require.NoError(t, err)
	assert.Len(t, v[0], tinymodel.Hidden)
	short := newTiny(t, Options{Model: Model{Name: "tiny", Dimension: tinymodel.Hidden, MaxLength: 8}})
	a, err := short.EmbedDocuments(context.Background(), []string{"a b c d e f", "a b c d e f g h i j"})
	require.NoError(t, err)
	assert.Equal(t, a[0], a[1], "both cut to [CLS] a b c d e f [SEP]")
}

// The index fingerprint changes with the embedder's name and dimension.
func TestFingerprint(t *testing.T) {
	db := &schema.Database{Name: "shop", Tables: []*schema.Table{{Name: "orders", Kind: schema.KindTable,
		Columns: []schema.Column{{Name: "id", Type: "integer"}, {Name: "amount", Type: "numeric"}}}}}
	fp := func(emb text2sql.Embedder) string {
		h, err := retriever.NewHybrid(context.Background(), retriever.HybridOptions{Schema: db, Embedder: emb})
		require.NoError(t, err)
		return h.Stats().Fingerprint
	}
	a := fp(newTiny(t, Options{}))
	assert.Equal(t, a, fp(newTiny(t, Options{})))
	other := tiny
	other.Name = "tiny-2"
	assert.NotEqual(t, a, fp(newTiny(t, Options{Model: other})))
}

func TestClose(t *testing.T) {
	e := newTiny(t, Options{})
	require.NoError(t, e.Close())
	require.NoError(t, e.Close())
	_, err := e.EmbedQuery(context.Background(), "x")
	assert.ErrorIs(t, err, ErrClosed)
	_, err = e.EmbedDocuments(context.Background(), []string{"x"})
	assert.ErrorIs(t, err, ErrClosed)
}

func TestInvalidConfig(t *testing.T) {
	for name, opts := range map[string]Options{
		"no dimension": {Model: Model{Name: "x"}},
		"no name":      {Model: Model{Dimension: 3}},
		"batch":        {BatchSize: MaxBatchSize + 1},
		"threads":      {Threads: -1},
	} {
		_, err := New(context.Background(), opts)
		assert.ErrorIs(t, err, text2sql.ErrInvalidConfig, name)
	}
}

func TestCatalogue(t *testing.T) {
	m, ok := ModelNamed("fast-bge-small-en-v1.5")
	require.True(t, ok)
	assert.Equal(t, BGESmallENV15, m)
	assert.Equal(t, 384, m.Dimension)
	assert.Equal(t, BGESmallENV15, Models()[0])
	_, ok = ModelNamed("nope")
	assert.False(t, ok)
}

// An empty directory offline is one error naming the directory, the files
// and the archive to unpack, on one line.
func TestMissingOffline(t *testing.T) {
	root := t.TempDir()
	_, err := New(context.Background(), Options{CacheDir: root, Offline: true})
	msg := onnxrttest.Missing(t, err, filepath.Join(root, "fast-bge-small-en-v1.5"), "model_optimized.onnx", "tokenizer.json")
	assert.Contains(t, msg, DefaultSource+"/fast-bge-small-en-v1.5.tar.gz")
	assert.Contains(t, msg, "unpack it into "+root)
}

// archive returns a .tar.gz of the tiny model under top/, plus extra.
func archive(t *testing.T, top string, extra map[string]string) []byte {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	add := func(name string, data []byte) {
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}))
		_, err := tw.Write(data)
		require.NoError(t, err)
	}
	require.NoError(t, tw.WriteHeader(&tar.Header{Name: top + "/", Mode: 0o755, Typeflag: tar.TypeDir}))
	for _, f := range []string{DefaultFile, "tokenizer.json"} {
		data, err := os.ReadFile(filepath.Join(tinyDir, f))
		require.NoError(t, err)
		add(top+"/"+f, data)
	}
	for name, data := range extra {
		add(name, []byte(data))
	}
	require.NoError(t, tw.Close())
	require.NoError(t, gz.Close())
	return buf.Bytes()
}

// The model is downloaded from Source once, then loads offline.
func TestDownload(t *testing.T) {
	onnxrttest.Require(t)
	body := archive(t, "tiny", nil)
	var requests int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests++
		if r.URL.Path != "/models/tiny.tar.gz" {
			http.NotFound(w, r)
			return
		}
		w.Write(body)
	}))
	defer srv.Close()
	root := t.TempDir()
	e := newTiny(t, Options{CacheDir: root, Source: srv.URL + "/models"})
	assert.Equal(t, filepath.Join(root, "tiny"), e.Dir())
	assert.Equal(t, 1, requests)
	newTiny(t, Options{CacheDir: root, Offline: true})
	newTiny(t, Options{CacheDir: root, Source: srv.URL + "/models"})
	assert.Equal(t, 1, requests, "a filled directory is not downloaded again")

	// a failed download names the directory and the cause
	_, err := New(context.Background(), Options{Model: Model{Name: "absent", Dimension: 4}, CacheDir: root, Source: srv.URL})
	var miss *MissingModelError
	require.ErrorAs(t, err, &miss)
	assert.ErrorContains(t, err, "404")
	assert.ErrorContains(t, err, filepath.Join(root, "absent"))
}

func TestDownloadRejectsEscapingArchive(t *testing.T) {
	onnxrttest.Require(t)
	body := archive(t, "tiny", map[string]string{"../../escape.txt": "x"})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(body) }))
	defer srv.Close()
	root := filepath.Join(t.TempDir(), "models")
	_, err := New(context.Background(), Options{Model: tiny, CacheDir: root, Source: srv.URL})
	assert.ErrorContains(t, err, "leaves the model directory")
	assert.NoFileExists(t, filepath.Join(root, "..", "escape.txt"))
}

func TestDownloadCancelled(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := New(ctx, Options{Model: tiny, CacheDir: t.TempDir(), Source: srv.URL})
	assert.ErrorIs(t, err, context.Canceled)
}

// Damaged files are a *ModelFileError naming the file; nothing panics.
func TestCorruptFiles(t *testing.T) {
	onnxrttest.Require(t)
	model, err := os.ReadFile(filepath.Join(tinyDir, DefaultFile))
	require.NoError(t, err)
	onnxrttest.Corrupt(t, tinyDir, []string{DefaultFile, "tokenizer.json"}, map[string]onnxrttest.Damage{
		"garbage model":   {File: DefaultFile, Data: []byte("this is not an ONNX graph")},
		"truncated model": {File: DefaultFile, Data: model[:len(model)/2]},
		"empty model":     {File: DefaultFile, Data: nil},
		"bad tokenizer":   {File: "tokenizer.json", Data: []byte(`{"model":`)},
		"bpe tokenizer":   {File: "tokenizer.json", Data: []byte(`{"model":{"type":"BPE","vocab":{}}}`)},
	}, func(dir string) error {
		_, err := New(context.Background(), Options{Model: tiny, Dir: dir, Offline: true})
		return err
	})
	// a wrong Dimension is caught at load
	_, err = New(context.Background(), Options{Model: Model{Name: "tiny", Dimension: 384}, Dir: tinyDir, Offline: true})
	var ferr *ModelFileError
	require.ErrorAs(t, err, &ferr)
	assert.ErrorContains(t, err, "is Dimension 384 right")
	// a cross-encoder is not an embedder
	_, err = New(context.Background(), Options{Model: Model{Name: "x", Dimension: 4, File: "onnx/model.onnx"}, Dir: "../../rerank/crossencoder/testdata/tiny", Offline: true})
	assert.ErrorContains(t, err, `no output "last_hidden_state"`)
}

func TestMissingRuntime(t *testing.T) {
	_, err := New(context.Background(), Options{Model: tiny, Dir: tinyDir, Offline: true, Library: filepath.Join(t.TempDir(), "libonnxruntime.so")})
	var rerr *RuntimeError
	require.ErrorAs(t, err, &rerr)
	assert.True(t, errors.Is(err, rerr))
}

// Concurrent calls share the one session and give the vectors of
// sequential calls.
func TestConcurrent(t *testing.T) {
	e := newTiny(t, Options{BatchSize: 3})
	texts := []string{"orders", "students enrolled in each course", "customer payments per year", "the city of each stadium"}
	onnxrttest.Concurrent(t, 8, func() ([][]float32, error) { return e.EmbedDocuments(context.Background(), texts) })
}
