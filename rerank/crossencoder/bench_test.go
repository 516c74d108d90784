package crossencoder

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
)

// BenchmarkRerank50 reranks 50 table candidates (about 20 tokens each) for
// one question on the tiny cross-encoder, BatchSize 16: the latency one
// retrieval adds.
func BenchmarkRerank50(b *testing.B) {
	r := newTiny(b, Options{})
	cands := make([]text2sql.Item, 50)
	for i := range cands {
		cands[i] = text2sql.Item{ID: fmt.Sprintf("table:t%d", i), Kind: text2sql.ItemTable,
			Text: fmt.Sprintf("Table orders_%d. Columns: id, customer_id (customer id), amount, price, date of payment %d.", i, i)}
	}
	ctx := context.Background()
	for b.Loop() {
		_, err := r.Rerank(ctx, "What is the total amount paid by each customer last year?", cands)
		require.NoError(b, err)
	}
}
