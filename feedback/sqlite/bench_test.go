package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/feedback"
)

// BenchmarkRecord records up-votes of distinct questions on the demo: the
// guard's check, the deterministic checks and one SQLite write each.
func BenchmarkRecord(b *testing.B) {
	r, _ := recorder(b, filepath.Join(b.TempDir(), "examples.sqlite"))
	ctx := context.Background()
	n := 0
	for b.Loop() {
		n++
		_, err := r.Record(ctx, feedback.Feedback{Question: fmt.Sprintf("How many students entered in %d?", 1900+n), SQL: fmt.Sprintf("SELECT COUNT(*) FROM students WHERE entry_year = %d", 1900+n), Verdict: feedback.Up})
		require.NoError(b, err)
	}
}
