package fastembed

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/bertmodel"
	"github.com/text2sql-go/text2sql/retriever"
	"github.com/text2sql-go/text2sql/schema"
)

// benchTexts are n table-document-sized texts (about 20 tokens each).
func benchTexts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("Table orders_%d. Columns: id, customer_id (customer id), amount, price, date of payment %d.", i, i)
	}
	return out
}

// BenchmarkEmbed compares the session New opens once and reuses (what the
// Embedder does) with a new session per call (what fastembed-go v1.0.0
// does), on the tiny model: 64 texts per call, BatchSize 32.
func BenchmarkEmbed(b *testing.B) {
	e := newTiny(b, Options{})
	texts := benchTexts(64)
	ctx := context.Background()
	b.Run("reuse-session", func(b *testing.B) {
		for b.Loop() {
			_, err := e.EmbedDocuments(ctx, texts)
			require.NoError(b, err)
		}
		b.ReportMetric(float64(len(texts)*b.N)/b.Elapsed().Seconds(), "texts/s")
	})
	b.Run("session-per-call", func(b *testing.B) {
		for b.Loop() {
			s, err := bertmodel.Open(e.m.File, "last_hidden_state", 0)
			require.NoError(b, err)
			for start := 0; start < len(texts); start += e.m.Batch {
				_, err := e.run(s, e.m.Tokenizer.Encode(texts[start:min(start+e.m.Batch, len(texts))]))
				require.NoError(b, err)
			}
			require.NoError(b, s.Close())
		}
		b.ReportMetric(float64(len(texts)*b.N)/b.Elapsed().Seconds(), "texts/s")
	})
}

// bigSchema returns n tables of 6 columns, each with a foreign key to the
// one before.
func bigSchema(n int) *schema.Database {
	db := &schema.Database{Name: "big"}
	for i := range n {
		t := &schema.Table{Name: fmt.Sprintf("account_%d", i), Kind: schema.KindTable, PrimaryKey: []string{"id"},
			Columns: []schema.Column{{Name: "id", Type: "integer"}, {Name: "customer_id", Type: "integer"}, {Name: "amount", Type: "numeric"},
				{Name: "created_at", Type: "timestamp"}, {Name: "status", Type: "text"}, {Name: "prev_id", Type: "integer"}}}
		if i > 0 {
			t.ForeignKeys = []schema.ForeignKey{{Columns: []string{"prev_id"}, RefTable: fmt.Sprintf("account_%d", i-1), RefColumns: []string{"id"}}}
		}
		db.Tables = append(db.Tables, t)
	}
	return db
}

// BenchmarkIndexBuild1000Tables builds the hybrid retriever's index of a
// 1,000-table schema (one document per table) with the fastembed embedder
// on the tiny model, and with the hashing embedder for comparison, into a
// new in-memory store each time.
func BenchmarkIndexBuild1000Tables(b *testing.B) {
	db := bigSchema(1000)
	for _, c := range []struct {
		name string
		emb  text2sql.Embedder
	}{{"fastembed-tiny", newTiny(b, Options{})}, {"hashing", nil}} {
		b.Run(c.name, func(b *testing.B) {
			docs := 0
			for b.Loop() {
				h, err := retriever.NewHybrid(context.Background(), retriever.HybridOptions{Schema: db, Embedder: c.emb, Store: retriever.NewMemoryStore()})
				require.NoError(b, err)
				docs = h.Stats().Embedded
			}
			b.ReportMetric(float64(docs), "docs")
		})
	}
}
