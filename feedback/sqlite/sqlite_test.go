package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/demo"
	"github.com/text2sql-go/text2sql/feedback"
	"github.com/text2sql-go/text2sql/feedback/sqlite"
	"github.com/text2sql-go/text2sql/internal/demotest"
	"github.com/text2sql-go/text2sql/lint"
	"github.com/text2sql-go/text2sql/retriever"
)

const perDept = "SELECT d.name, COUNT(*) FROM students s JOIN departments d ON d.department_id = s.major_department_id GROUP BY d.name"

func recorder(t testing.TB, path string) (*feedback.Recorder, *sqlite.Store) {
	t.Helper()
	_, ex := demotest.Open(t)
	st, err := sqlite.Open(path, sqlite.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	db := ex.Schema()
	kb, err := demo.Knowledge()
	require.NoError(t, err)
	return &feedback.Recorder{Store: st, Guard: ex, Checker: lint.New(db, db.Dialect), Known: kb.Examples}, st
}

// An up-vote becomes a verified example, one per normalised question; a
// later up-vote replaces its SQL and counts the votes.
func TestUpVote(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "examples.sqlite")
	r, st := recorder(t, path)
	v0, err := st.Version(ctx)
	require.NoError(t, err)
	out, err := r.Record(ctx, feedback.Feedback{Question: "How many students major in each department?", SQL: perDept + ";", Verdict: feedback.Up, Principal: "alice"})
	require.NoError(t, err)
	require.True(t, out.Added)
	assert.Equal(t, perDept, out.Example.SQL, "the terminator is removed")
	assert.Equal(t, feedback.ExampleID("how many students major in each department"), out.Example.ID)
	v1, err := st.Version(ctx)
	require.NoError(t, err)
	assert.NotEqual(t, v0, v1)

	// Another principal's different SQL does not replace alice's: the
	// example is kept and flagged for review.
	better := perDept + " ORDER BY 2 DESC"
	out, err = r.Record(ctx, feedback.Feedback{Question: "how many students major in each department", SQL: better, Verdict: feedback.Up, Principal: "bob"})
	require.NoError(t, err)
	assert.False(t, out.Added)
	assert.True(t, out.Conflict)
	exs, err := st.Examples(ctx)
	require.NoError(t, err)
	require.Len(t, exs, 1)
	assert.Equal(t, perDept, exs[0].SQL, "alice's SQL stays")
	assert.True(t, exs[0].Review)
	assert.Equal(t, "alice", exs[0].By)

	// Her own new answer replaces it and clears the flag.
	out, err = r.Record(ctx, feedback.Feedback{Question: "How many students major in each department?", SQL: better, Verdict: feedback.Up, Principal: "alice"})
	require.NoError(t, err)
	assert.False(t, out.Conflict)
	exs, err = st.Examples(ctx)
	require.NoError(t, err)
	assert.Equal(t, better, exs[0].SQL)
	assert.False(t, exs[0].Review)
	assert.Equal(t, 3, exs[0].Up)

	// Reopened: the example and the three votes are still there.
	require.NoError(t, st.Close())
	st2, err := sqlite.Open(path, sqlite.Options{})
	require.NoError(t, err)
	defer st2.Close()
	exs, err = st2.Examples(ctx)
	require.NoError(t, err)
	require.Len(t, exs, 1)
	votes, err := st2.Votes(ctx)
	require.NoError(t, err)
	require.Len(t, votes, 3)
	assert.Equal(t, "alice", votes[0].Principal)
	assert.Equal(t, better, votes[1].SQL, "bob's proposal is in the log for the reviewer")
	assert.Equal(t, exs[0].ID, votes[2].Example)
}

// A write, several statements or an unknown column never become examples.
func TestUpVoteRefused(t *testing.T) {
	ctx := context.Background()
	r, st := recorder(t, filepath.Join(t.TempDir(), "examples.sqlite"))
	for name, sql := range map[string]string{
		"write":          "DELETE FROM students",
		"smuggled write": "SELECT 1; DROP TABLE students",
		"cte write":      "WITH x AS (SELECT 1) INSERT INTO departments (name, building) SELECT 'x', 'y' FROM x",
		"attach":         "ATTACH DATABASE '/tmp/x.db' AS x",
		"unknown column": "SELECT nme FROM students",
	} {
		_, err := r.Record(ctx, feedback.Feedback{Question: "q " + name, SQL: sql, Verdict: feedback.Up})
		var serr *text2sql.SQLError
		require.True(t, errors.As(err, &serr), "%s: %v", name, err)
		if name != "unknown column" {
			assert.True(t, errors.Is(err, text2sql.ErrRefused), "%s: %v", name, err)
		}
	}
	exs, err := st.Examples(ctx)
	require.NoError(t, err)
	assert.Empty(t, exs)
	for _, fb := range []feedback.Feedback{{Question: "", SQL: "SELECT 1", Verdict: feedback.Up}, {Question: "q", SQL: " ; ", Verdict: feedback.Up}, {Question: "q", SQL: "SELECT 1", Verdict: "meh"}} {
		_, err := r.Record(ctx, fb)
		assert.ErrorIs(t, err, feedback.ErrInvalid, "%+v", fb)
	}
}

// A down-vote of an example's SQL flags it for review (kept, not reused);
// a down-vote of a knowledge-file example's SQL names it; an up-vote
// clears the flag.
func TestDownVoteFlags(t *testing.T) {
	ctx := context.Background()
	r, st := recorder(t, filepath.Join(t.TempDir(), "examples.sqlite"))
	q := "How many students major in each department?"
	_, err := r.Record(ctx, feedback.Feedback{Question: q, SQL: perDept, Verdict: feedback.Up})
	require.NoError(t, err)
	out, err := r.Record(ctx, feedback.Feedback{Question: "students per department", SQL: "select d.name,  COUNT(*) FROM students s JOIN departments d ON d.department_id = s.major_department_id GROUP BY d.name", Verdict: feedback.Down, Note: "counts undeclared majors wrong"})
	require.NoError(t, err)
	assert.Equal(t, []string{feedback.ExampleID(q)}, out.Flagged)
	ex, err := st.Example(ctx, feedback.ExampleID(q))
	require.NoError(t, err)
	require.NotNil(t, ex)
	assert.True(t, ex.Review)
	assert.Equal(t, 1, ex.Down)

	kb, err := demo.Knowledge()
	require.NoError(t, err)
	out, err = r.Record(ctx, feedback.Feedback{Question: kb.Examples[0].Question, SQL: kb.Examples[0].SQL, Verdict: feedback.Down})
	require.NoError(t, err)
	assert.Equal(t, []string{"example:" + kb.Examples[0].ID}, out.Flagged)

	_, err = r.Record(ctx, feedback.Feedback{Question: q, SQL: perDept, Verdict: feedback.Up})
	require.NoError(t, err)
	ex, err = st.Example(ctx, feedback.ExampleID(q))
	require.NoError(t, err)
	assert.False(t, ex.Review, "an up-vote clears the flag")
}

// Merged examples are indexed and reused as written; the index fingerprint
// follows the store; only trusted ones are indexed; Retriever reuses an
// example recorded after the index was built.
func TestMergeAndReuse(t *testing.T) {
	ctx := context.Background()
	r, st := recorder(t, filepath.Join(t.TempDir(), "examples.sqlite"))
	_, ex := demotest.Open(t)
	kb, err := demo.Knowledge()
	require.NoError(t, err)
	build := func(exs []feedback.Example) *retriever.Hybrid {
		merged, skipped, err := feedback.Merge(ctx, kb, exs, ex)
		require.NoError(t, err)
		assert.Empty(t, skipped)
		h, err := retriever.NewHybrid(ctx, retriever.HybridOptions{Schema: ex.Schema(), Knowledge: merged})
		require.NoError(t, err)
		return h
	}
	before := build(nil)
	q := "Which departments have the most majors?"
	res, err := (&feedback.Retriever{Base: before, Store: st}).Retrieve(ctx, text2sql.RetrieveRequest{Question: q})
	require.NoError(t, err)
	assert.Nil(t, res.Match)

	_, err = r.Record(ctx, feedback.Feedback{Question: q, SQL: perDept + " ORDER BY 2 DESC", Verdict: feedback.Up})
	require.NoError(t, err)
	res, err = (&feedback.Retriever{Base: before, Store: st}).Retrieve(ctx, text2sql.RetrieveRequest{Question: "which departments have the MOST majors"})
	require.NoError(t, err)
	require.NotNil(t, res.Match, "reused before the index is rebuilt")
	assert.Equal(t, feedback.ExampleID(q), res.Match.ID)

	exs, err := st.Examples(ctx)
	require.NoError(t, err)
	after := build(exs)
	assert.NotEqual(t, before.Stats().Fingerprint, after.Stats().Fingerprint)
	res, err = after.Retrieve(ctx, text2sql.RetrieveRequest{Question: q})
	require.NoError(t, err)
	require.NotNil(t, res.Match, "indexed with the knowledge file's examples")
	assert.Equal(t, feedback.ExampleID(q), res.Match.ID)

	exs[0].Review = true
	assert.Equal(t, after.Stats().Fingerprint, build(exs).Stats().Fingerprint, "a flagged trusted example stays in use until a reviewer decides")
	for _, st := range []feedback.Status{feedback.StatusPending, feedback.StatusRejected} {
		exs[0].Status = st
		assert.Equal(t, before.Stats().Fingerprint, build(exs).Stats().Fingerprint, "a %s example is not indexed", st)
	}
}

// Bounds: a full store refuses new examples, keeps updating old ones; the
// vote log keeps the newest MaxVotes and drops votes past the retention.
func TestBounds(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "x", "examples.sqlite"), sqlite.Options{MaxExamples: 2, MaxVotes: 3, Retention: time.Hour})
	require.NoError(t, err)
	defer st.Close()
	now := time.Now()
	for _, id := range []string{"fb-1", "fb-2"} {
		require.NoError(t, st.Save(ctx, feedback.Example{ID: id, Question: id, SQL: "SELECT 1", Created: now, Updated: now}))
	}
	assert.ErrorIs(t, st.Save(ctx, feedback.Example{ID: "fb-3", Question: "x", SQL: "SELECT 1", Created: now, Updated: now}), sqlite.ErrFull)
	require.NoError(t, st.Save(ctx, feedback.Example{ID: "fb-2", Question: "y", SQL: "SELECT 2", Created: now, Updated: now}))
	removed, err := st.Remove(ctx, "fb-1")
	require.NoError(t, err)
	assert.True(t, removed)
	removed, err = st.Remove(ctx, "fb-1")
	require.NoError(t, err)
	assert.False(t, removed)

	require.NoError(t, st.Record(ctx, feedback.Vote{Time: now.Add(-2 * time.Hour), Question: "old", Verdict: feedback.Up}))
	for i := range 5 {
		require.NoError(t, st.Record(ctx, feedback.Vote{Time: now.Add(time.Duration(i) * time.Second), Question: "q", Verdict: feedback.Down}))
	}
	votes, err := st.Votes(ctx)
	require.NoError(t, err)
	require.Len(t, votes, 3)
	assert.Equal(t, "q", votes[0].Question)
}

// Concurrent up-votes of one question leave one example with every vote
// counted.
func TestConcurrentVotes(t *testing.T) {
	ctx := context.Background()
	r, st := recorder(t, filepath.Join(t.TempDir(), "examples.sqlite"))
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			_, err := r.Record(ctx, feedback.Feedback{Question: "How many students?", SQL: "SELECT COUNT(*) FROM students", Verdict: feedback.Up})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	votes, err := st.Votes(ctx)
	require.NoError(t, err)
	assert.Len(t, votes, 8)
	exs, err := st.Examples(ctx)
	require.NoError(t, err)
	require.Len(t, exs, 1)
}

// A store written before statement keys existed is migrated on Open: its
// examples get their keys, so a down-vote still finds them.
func TestMigrateStatementKeys(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.sqlite")
	db, err := sql.Open("sqlite3", path)
	require.NoError(t, err)
	_, err = db.Exec(`CREATE TABLE examples (id TEXT PRIMARY KEY, question TEXT NOT NULL, sql TEXT NOT NULL, note TEXT NOT NULL DEFAULT '',
  principal TEXT NOT NULL DEFAULT '', created TEXT NOT NULL, updated TEXT NOT NULL, up INTEGER NOT NULL DEFAULT 0,
  down INTEGER NOT NULL DEFAULT 0, review INTEGER NOT NULL DEFAULT 0);
INSERT INTO examples (id, question, sql, created, updated, up) VALUES ('fb-1', 'q', 'SELECT  1', '2026-12-01T00:00:00Z', '2026-12-01T00:00:00Z', 1)`)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	st, err := sqlite.Open(path, sqlite.Options{})
	require.NoError(t, err)
	defer st.Close()
	exs, err := st.ExamplesOf(ctx, feedback.StatementKey("select 1;"))
	require.NoError(t, err)
	require.Len(t, exs, 1)
	assert.Equal(t, "fb-1", exs[0].ID)
}
