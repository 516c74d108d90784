package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/conversation"
	"github.com/text2sql-go/text2sql/conversation/sqlite"
)

// What the per-owner bounds cost each write: saving a conversation of an
// owner with 100 among 1,000 of ten owners, and saving again one of an
// owner's 500 saved answers (a refresh), with the default options.
func BenchmarkStoreWrites(b *testing.B) {
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(b.TempDir(), "c.sqlite"), sqlite.Options{})
	require.NoError(b, err)
	defer st.Close()
	now := time.Now()
	for i := range 1000 {
		require.NoError(b, st.Save(ctx, conversation.Saved{ID: fmt.Sprint("c", i), Owner: fmt.Sprint("u", i%10), Updated: now.Add(time.Duration(i) * time.Millisecond)}))
	}
	for i := range 500 {
		q := fmt.Sprint("question ", i)
		_, err := st.SaveAnswer(ctx, conversation.SavedAnswer{ID: fmt.Sprint("sa-", i), Owner: "u0", Question: q, Normalized: q, SQL: "SELECT 1", Rows: [][]any{{1}}})
		require.NoError(b, err)
	}
	b.Run("conversation", func(b *testing.B) {
		for i := range b.N {
			if err := st.Save(ctx, conversation.Saved{ID: "c0", Owner: "u0", Updated: now.Add(time.Hour + time.Duration(i))}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("answer", func(b *testing.B) {
		for range b.N {
			if _, err := st.SaveAnswer(ctx, conversation.SavedAnswer{ID: "sa-x", Owner: "u0", Question: "question 7", Normalized: "question 7", SQL: "SELECT 1", Rows: [][]any{{1}}}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
