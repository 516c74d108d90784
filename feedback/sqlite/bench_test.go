package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/demo"
	"github.com/text2sql-go/text2sql/feedback"
	"github.com/text2sql-go/text2sql/identity"
	"github.com/text2sql-go/text2sql/internal/demotest"
	"github.com/text2sql-go/text2sql/retriever"
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

// BenchmarkRecordPrincipal records a principal's up-votes of distinct
// questions: BenchmarkRecord's work and the quota's count of its votes
// and proposals (the quota set high enough never to refuse).
func BenchmarkRecordPrincipal(b *testing.B) {
	r, _ := recorder(b, filepath.Join(b.TempDir(), "examples.sqlite"))
	r.Quota = feedback.Quota{Votes: 1 << 30, Pending: 1 << 30}
	ctx := context.Background()
	n := 0
	for b.Loop() {
		n++
		_, err := r.Record(ctx, feedback.Feedback{Question: fmt.Sprintf("How many students entered in %d?", 1900+n), SQL: fmt.Sprintf("SELECT COUNT(*) FROM students WHERE entry_year = %d", 1900+n), Verdict: feedback.Up, Principal: "bob"})
		require.NoError(b, err)
	}
}

// BenchmarkRetrieve retrieves, as a principal, a question whose trusted
// example is indexed (the store confirms it is still trusted) and one
// with no example (the store is asked for one): the demo index behind
// feedback.Retriever.
func BenchmarkRetrieve(b *testing.B) {
	ctx := context.Background()
	r, st := recorder(b, filepath.Join(b.TempDir(), "examples.sqlite"))
	const q = "How many courses are offered by the university?"
	_, err := r.Record(ctx, feedback.Feedback{Question: q, SQL: "SELECT count(*) AS n FROM courses", Verdict: feedback.Up})
	require.NoError(b, err)
	_, ex := demotest.Open(b)
	kb, err := demo.Knowledge()
	require.NoError(b, err)
	exs, err := st.Examples(ctx)
	require.NoError(b, err)
	merged, _, err := feedback.Merge(ctx, kb, exs, ex)
	require.NoError(b, err)
	h, err := retriever.NewHybrid(ctx, retriever.HybridOptions{Schema: ex.Schema(), Knowledge: merged})
	require.NoError(b, err)
	ret := &feedback.Retriever{Base: h, Store: st}
	alice := identity.WithPrincipal(ctx, &identity.Principal{ID: "alice", Method: "static"})
	for _, question := range []string{q, "Which students have no enrollments?"} {
		b.Run(map[bool]string{true: "indexed", false: "none"}[question == q], func(b *testing.B) {
			for b.Loop() {
				_, err := ret.Retrieve(alice, text2sql.RetrieveRequest{Question: question})
				require.NoError(b, err)
			}
		})
	}
}
