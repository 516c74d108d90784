package llmrerank_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/demo"
	"github.com/text2sql-go/text2sql/executor/sqlite"
	"github.com/text2sql-go/text2sql/internal/demotest"
	"github.com/text2sql-go/text2sql/internal/shareddata"
	"github.com/text2sql-go/text2sql/knowledge"
	"github.com/text2sql-go/text2sql/retriever"
	"github.com/text2sql-go/text2sql/schema"
)

// demoDB returns the demo database's schema (read from a private copy of
// the file) and its knowledge base.
func demoDB(t testing.TB) (*schema.Database, *knowledge.Base) {
	t.Helper()
	_, ex := demotest.Open(t)
	kb, err := demo.Knowledge()
	require.NoError(t, err)
	return ex.Schema(), kb
}

// spiderDB returns the schema of a Spider database (shareddata decides
// what an absent data folder means: a skip, or a failure under CI).
func spiderDB(t testing.TB, id string) *schema.Database {
	t.Helper()
	ex, err := sqlite.Open(shareddata.SpiderDB(t, id), sqlite.Options{})
	require.NoError(t, err, "Spider database %s", id)
	t.Cleanup(func() { ex.Close() })
	return ex.Schema()
}

// hybrid builds a retriever over db and kb with rr as its reranker (nil
// for none).
func hybrid(t testing.TB, db *schema.Database, kb *knowledge.Base, rr retriever.Reranker) *retriever.Hybrid {
	t.Helper()
	return hybridWith(t, retriever.HybridOptions{Schema: db, Knowledge: kb, Reranker: rr})
}

// hybridWith builds a retriever with opts.
func hybridWith(t testing.TB, opts retriever.HybridOptions) *retriever.Hybrid {
	t.Helper()
	h, err := retriever.NewHybrid(context.Background(), opts)
	require.NoError(t, err)
	return h
}

// selecting builds a retriever over a Spider database as over a schema
// too big for the prompt budget (Budget -1: never the whole schema, at
// most MaxTables tables), with rr as its reranker (nil for none).
func selecting(t testing.TB, db *schema.Database, rr retriever.Reranker) *retriever.Hybrid {
	t.Helper()
	return hybridWith(t, retriever.HybridOptions{Schema: db, Budget: -1, Reranker: rr})
}

// recorder is a reranker that keeps the fused order and records the
// candidates it was given.
type recorder struct{ items []text2sql.Item }

func (r *recorder) Rerank(_ context.Context, _ string, items []text2sql.Item) ([]text2sql.Item, error) {
	r.items = slices.Clone(items)
	return items, nil
}

// candidates returns the fused candidate list the retriever hands a
// reranker for question.
func candidates(t testing.TB, db *schema.Database, kb *knowledge.Base, question string) []text2sql.Item {
	t.Helper()
	rec := &recorder{}
	_, err := hybrid(t, db, kb, rec).Retrieve(context.Background(), text2sql.RetrieveRequest{Question: question})
	require.NoError(t, err)
	require.NotEmpty(t, rec.items)
	return rec.items
}

func retrieve(t testing.TB, h *retriever.Hybrid, question string) *text2sql.Retrieval {
	t.Helper()
	c, err := h.Retrieve(context.Background(), text2sql.RetrieveRequest{Question: question})
	require.NoError(t, err)
	return c
}

// tablesReply is a table-selection answer naming tables.
func tablesReply(tables ...string) string {
	b, _ := json.Marshal(map[string]any{"reasoning": "scripted", "tables": tables})
	return string(b)
}

// columnsReply is a column-selection answer naming columns.
func columnsReply(columns ...string) string {
	b, _ := json.Marshal(map[string]any{"reasoning": "scripted", "columns": columns})
	return string(b)
}

func tableNames(c *text2sql.Retrieval) []string {
	var out []string
	for _, t := range c.Tables {
		out = append(out, t.Name)
	}
	return out
}

func ids(items []text2sql.Item) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.ID
	}
	return out
}

// firstTables returns the distinct tables of items' Table fields, in order.
func firstTables(items []text2sql.Item, n int) []string {
	var out []string
	for _, it := range items {
		if it.Table != "" && !slices.Contains(out, it.Table) {
			out = append(out, it.Table)
		}
		if len(out) == n {
			break
		}
	}
	return out
}

// requireOrdered fails unless Score falls (or stays) along items.
func requireOrdered(t testing.TB, items []text2sql.Item) {
	t.Helper()
	for i := 1; i < len(items); i++ {
		require.LessOrEqual(t, items[i].Score, items[i-1].Score, "score rises at %d: %v", i, ids(items))
	}
}
